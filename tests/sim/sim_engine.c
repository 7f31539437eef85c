/*
 * sim_engine.c - commands, hardware queues and their workers: the simulated GPU itself.
 *
 * A stream is pinned to one hardware queue; a hardware queue is a FIFO served by one worker
 * thread, so a stream's commands run in order and streams that share a hardware queue delay each
 * other (false dependencies, as on AMD hardware). Cross-stream ordering (events, the legacy null
 * stream) is expressed as dependencies on earlier commands. Every dependency points at a command
 * queued earlier, so the earliest unfinished command can always run: the engine cannot deadlock
 * by itself, only through waits the application asked for (wait-value, host functions).
 */
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

struct sim_cmd *sim_cmd_new(enum sim_cmd_kind kind)
{
    struct sim_cmd *c = calloc(1, sizeof *c);
    if (c) {
        c->kind = kind;
        c->refs = 1;
    }
    return c;
}

/* A copy of a recorded command for replay: same work, no stream, no dependencies. */
struct sim_cmd *sim_cmd_clone(const struct sim_cmd *cmd)
{
    struct sim_cmd *c = sim_cmd_new(cmd->kind);
    if (!c)
        return NULL;
    c->u = cmd->u;
    if (cmd->kind == SIM_CMD_KERNEL && cmd->u.kernel.arglen) {
        c->u.kernel.argbuf = malloc(cmd->u.kernel.arglen);
        if (!c->u.kernel.argbuf) {
            free(c);
            return NULL;
        }
        memcpy(c->u.kernel.argbuf, cmd->u.kernel.argbuf, cmd->u.kernel.arglen);
    }
    return c;
}

void sim_cmd_ref(struct sim_cmd *cmd)
{
    cmd->refs++;
}

void sim_cmd_unref(struct sim_cmd *cmd)
{
    if (!cmd || --cmd->refs > 0)
        return;
    for (int i = 0; i < cmd->ndeps; i++)
        sim_cmd_unref(cmd->deps[i]);
    free(cmd->deps);
    if (cmd->kind == SIM_CMD_KERNEL)
        free(cmd->u.kernel.argbuf);
    free(cmd);
}

int sim_cmd_add_dep(struct sim_cmd *cmd, struct sim_cmd *dep)
{
    if (!dep || dep->done)
        return 0;
    struct sim_cmd **d = realloc(cmd->deps, (size_t)(cmd->ndeps + 1) * sizeof *d);
    if (!d)
        return -1;
    cmd->deps = d;
    d[cmd->ndeps++] = dep;
    sim_cmd_ref(dep);
    return 0;
}

static bool deps_done(const struct sim_cmd *cmd)
{
    for (int i = 0; i < cmd->ndeps; i++)
        if (!cmd->deps[i]->done)
            return false;
    return true;
}

static bool blocking(const struct ihipStream_t *s)
{
    return s->kind != SIM_STREAM_NULL && !(s->flags & hipStreamNonBlocking);
}

/* The legacy null stream's ordering with the device's blocking streams. */
static void add_null_stream_deps(struct sim_device *dev, struct ihipStream_t *s,
                                 struct sim_cmd *cmd)
{
    if (sim.cfg.fault == SIM_FAULT_NULL_STREAM_UNORDERED)
        return;
    if (s->kind == SIM_STREAM_NULL) {
        for (struct ihipStream_t *o = dev->streams; o; o = o->next)
            if (blocking(o))
                sim_cmd_add_dep(cmd, o->last);
    } else if (blocking(s)) {
        sim_cmd_add_dep(cmd, dev->null_stream->last);
    }
}

static void *hw_queue_worker(void *arg);

static void start_worker(struct sim_hw_queue *hq)
{
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, hw_queue_worker, hq) != 0) {
        fprintf(stderr, "hipsim: cannot start a hardware queue thread\n");
        abort(); /* a test double: queued work could never complete */
    }
    pthread_attr_destroy(&attr);
    hq->started = true;
}

void sim_enqueue(struct ihipStream_t *s, struct sim_cmd *cmd)
{
    struct sim_device *dev = &sim.dev[s->device];
    add_null_stream_deps(dev, s, cmd);

    cmd->stream = s;
    cmd->submit_ns = sim_now_ns();
    s->refs++;
    s->pending++;
    dev->pending++;
    if (s->last)
        sim_cmd_unref(s->last);
    s->last = cmd;
    sim_cmd_ref(cmd);

    cmd->hw_queue = s->hw_queue;
    if (sim.cfg.fault == SIM_FAULT_STREAM_UNORDERED)
        cmd->hw_queue = (int)(dev->stream_unordered_next++ % (unsigned)sim.cfg.hw_queues);
    struct sim_hw_queue *hq = &dev->hwq[cmd->hw_queue];
    if (hq->tail)
        hq->tail->next = cmd;
    else
        hq->head = cmd;
    hq->tail = cmd;
    if (!hq->started)
        start_worker(hq);
    pthread_cond_signal(&hq->cv);
}

hipError_t sim_submit(struct ihipStream_t *s, struct sim_cmd *cmd)
{
    if (s->capture) {
        if (sim_capture_invalidated(s->capture)) {
            sim_cmd_unref(cmd);
            return hipErrorStreamCaptureInvalidated;
        }
        if (sim.cfg.fault == SIM_FAULT_CAPTURE_RUNS) {
            struct sim_cmd *copy = sim_cmd_clone(cmd);
            if (copy)
                sim_enqueue(s, copy);
        }
        sim_capture_append(s->capture, cmd);
        return hipSuccess;
    }
    if (s->kind == SIM_STREAM_NULL && sim.global_captures > 0) {
        sim_invalidate_global_captures();
        sim_cmd_unref(cmd);
        return hipErrorStreamCaptureImplicit;
    }
    sim_enqueue(s, cmd);
    return hipSuccess;
}

/* ---- execution ---- */

static bool value_condition(const struct sim_cmd *c)
{
    uint64_t v = c->u.value.width == 32
                     ? __atomic_load_n((uint32_t *)c->u.value.ptr, __ATOMIC_ACQUIRE)
                     : __atomic_load_n((uint64_t *)c->u.value.ptr, __ATOMIC_ACQUIRE);
    uint64_t m = c->u.value.mask, want = c->u.value.value;
    switch (c->u.value.flags) {
    case hipStreamWaitValueGte:
        return (v & m) >= want;
    case hipStreamWaitValueEq:
        return (v & m) == want;
    case hipStreamWaitValueAnd:
        return (v & m & want) != 0;
    case hipStreamWaitValueNor: {
        uint64_t r = ~((v & m) | (want & m));
        return (c->u.value.width == 32 ? (uint32_t)r : r) != 0;
    }
    }
    return true; /* flags were validated at submission */
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

static void fill(const struct sim_cmd *c)
{
    unsigned char *p = c->u.set.dst;
    for (size_t i = 0; i < c->u.set.count; i++) {
        switch (c->u.set.elem_size) {
        case 1:
            p[i] = (unsigned char)c->u.set.value;
            break;
        case 2: {
            uint16_t v = (uint16_t)c->u.set.value;
            memcpy(p + 2 * i, &v, 2);
            break;
        }
        default:
            memcpy(p + 4 * i, &c->u.set.value, 4);
        }
    }
}

/* Runs one command's work; called without the lock. */
static void execute(struct sim_cmd *c)
{
    c->start_ns = sim_now_ns();
    switch (c->kind) {
    case SIM_CMD_KERNEL:
        sim_kernel_run(c); /* sets start_ns and end_ns itself */
        return;
    case SIM_CMD_COPY:
        memmove(c->u.copy.dst, c->u.copy.src, c->u.copy.bytes);
        break;
    case SIM_CMD_SET:
        fill(c);
        break;
    case SIM_CMD_WAIT_VALUE: {
        /* The value read that lets it through is at or after waited_ns (the trace's bound). */
        uint64_t holds = 0;
        while ((c->waited_ns = sim_now_ns()),
               sim.cfg.fault != SIM_FAULT_WAIT_VALUE_IGNORED && !value_condition(c)) {
            if (!holds && c->u.value.graph) {
                holds = c->waited_ns;
                sim_graph_wait_holds(c);
            }
            sleep_ns(20000);
        }
        if (holds)
            sim_graph_wait_opened(c, c->waited_ns - holds);
        break;
    }
    case SIM_CMD_WRITE_VALUE:
        if (c->u.value.width == 32)
            __atomic_store_n((uint32_t *)c->u.value.ptr, (uint32_t)c->u.value.value,
                             __ATOMIC_RELEASE);
        else
            __atomic_store_n((uint64_t *)c->u.value.ptr, c->u.value.value, __ATOMIC_RELEASE);
        break;
    case SIM_CMD_HOST_FN:
        if (c->u.host.fn)
            c->u.host.fn(c->u.host.user);
        else
            c->u.host.callback(c->u.host.handle, hipSuccess, c->u.host.user);
        break;
    case SIM_CMD_MARKER:
    case SIM_CMD_WAIT:
    case SIM_CMD_FREE:
        break;
    }
    c->end_ns = sim_now_ns();
}

static void retire(struct sim_hw_queue *hq, struct sim_cmd *c)
{
    struct ihipStream_t *s = c->stream;
    hq->head = c->next;
    if (!hq->head)
        hq->tail = NULL;
    c->next = NULL;
    if (c->kind == SIM_CMD_FREE)
        sim_memory_release(c->u.free.ptr);
    c->done = true;
    s->pending--;
    sim.dev[s->device].pending--;
    pthread_cond_broadcast(&sim.done_cv);
    sim_cmd_unref(c);
    sim_stream_unref(s);
}

static void *hw_queue_worker(void *arg)
{
    struct sim_hw_queue *hq = arg;
    /* Kernels sleep for their duration; the default 50 us timer slack would stretch each one. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    sim_lock();
    for (;;) {
        while (!hq->head)
            pthread_cond_wait(&hq->cv, &sim.lock);
        struct sim_cmd *c = hq->head;
        while (!deps_done(c))
            sim_wait();
        sim_unlock();
        if (c->kind == SIM_CMD_KERNEL)
            c->waited_ns = hq->waited_ns;
        execute(c);
        if (c->kind == SIM_CMD_WAIT_VALUE)
            hq->waited_ns = c->waited_ns;
        sim_lock();
        retire(hq, c);
    }
    return NULL;
}

/* ---- host-side waits (lock held) ---- */

void sim_wait_cmd(const struct sim_cmd *cmd)
{
    while (!cmd->done)
        sim_wait();
}

bool sim_stream_idle(const struct ihipStream_t *s)
{
    if (s->pending)
        return false;
    if (s->kind == SIM_STREAM_NULL)
        for (const struct ihipStream_t *o = sim.dev[s->device].streams; o; o = o->next)
            if (blocking(o) && o->pending)
                return false;
    return true;
}

void sim_wait_stream(const struct ihipStream_t *s)
{
    while (!sim_stream_idle(s))
        sim_wait();
}

void sim_wait_device(const struct sim_device *d)
{
    while (d->pending)
        sim_wait();
}

void sim_wait_all_devices(void)
{
    for (int d = 0; d < sim.cfg.devices; d++)
        sim_wait_device(&sim.dev[d]);
}
