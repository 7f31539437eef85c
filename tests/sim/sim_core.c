/*
 * sim_core.c - the simulator's process state: configuration, initialization, the global lock,
 * the registry of live handles, and the kernel trace.
 *
 * Initialization is lazy (pthread_once from every entry point) so that a program, or a
 * preloaded shim, that never calls HIP pays nothing. Handles are checked against a registry
 * rather than by dereferencing them, so a stale or foreign handle gives the error ROCm gives
 * instead of a crash. After fork the child starts with the devices idle: the parent's queued
 * work and worker threads do not exist in it (like a real runtime, a child should not rely on
 * work its parent queued).
 */
#include "sim_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sim_state sim = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
};

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;

uint64_t sim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hipsimNowNs(void)
{
    return sim_now_ns();
}

/* ---- configuration ---- */

static int env_int(const char *name, int def, int lo, int hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < lo || n > hi) {
        fprintf(stderr, "hipsim: %s='%s' is not a whole number from %d to %d; using %d\n", name, v,
                lo, hi, def);
        return def;
    }
    return (int)n;
}

static void env_str(const char *name, char *out, size_t size)
{
    const char *v = getenv(name);
    if (!v)
        return;
    if (strlen(v) >= size) {
        fprintf(stderr, "hipsim: %s is longer than %zu characters; ignored\n", name, size - 1);
        return;
    }
    strcpy(out, v);
}

static const struct {
    const char *name;
    enum sim_fault fault;
} fault_names[] = {
    {"null-stream-unordered", SIM_FAULT_NULL_STREAM_UNORDERED},
    {"event-query-unrecorded", SIM_FAULT_EVENT_QUERY_UNRECORDED},
    {"pageable-async", SIM_FAULT_PAGEABLE_ASYNC},
    {"last-error-not-sticky", SIM_FAULT_LAST_ERROR_NOT_STICKY},
    {"free-no-sync", SIM_FAULT_FREE_NO_SYNC},
    {"callback-early", SIM_FAULT_CALLBACK_EARLY},
    {"wait-event-ignored", SIM_FAULT_WAIT_EVENT_IGNORED},
    {"capture-runs", SIM_FAULT_CAPTURE_RUNS},
    {"per-thread-shared", SIM_FAULT_PER_THREAD_SHARED},
    {"elapsed-no-notready", SIM_FAULT_ELAPSED_NO_NOTREADY},
    {"stream-unordered", SIM_FAULT_STREAM_UNORDERED},
    {"drop-launch", SIM_FAULT_DROP_LAUNCH},
    {"wait-value-ignored", SIM_FAULT_WAIT_VALUE_IGNORED},
    {"priority-ignored", SIM_FAULT_PRIORITY_IGNORED},
    {"pools-shared", SIM_FAULT_POOLS_SHARED},
    {"cu-mask-ignored", SIM_FAULT_CU_MASK_IGNORED},
    {"capture-mode-ignored", SIM_FAULT_CAPTURE_MODE_IGNORED},
};

static enum sim_fault env_fault(void)
{
    const char *v = getenv("HIPSIM_FAULT");
    if (!v || !*v)
        return SIM_FAULT_NONE;
    for (size_t i = 0; i < sizeof fault_names / sizeof fault_names[0]; i++)
        if (strcmp(v, fault_names[i].name) == 0)
            return fault_names[i].fault;
    fprintf(stderr, "hipsim: HIPSIM_FAULT='%s' is not a known fault (docs/simulator.md); ignored\n",
            v);
    return SIM_FAULT_NONE;
}

static void sim_after_fork_child(void);
static void misuse_exit(void);
static _Atomic uint64_t misuses; /* sim_misuse's reports in this process */

static void sim_init_once(void)
{
    struct sim_config *c = &sim.cfg;
    c->devices = env_int("HIPSIM_DEVICES", 1, 1, SIM_MAX_DEVICES);
    c->hw_queues = env_int("HIPSIM_HW_QUEUES", 4, 1, SIM_MAX_HW_QUEUES);
    c->compute_slots = env_int("HIPSIM_COMPUTE_SLOTS", 1, 1, SIM_MAX_SLOTS);
    env_str("HIPSIM_SHARED", c->shared_name, sizeof c->shared_name);
    c->shared_users = env_int("HIPSIM_SHARED_USERS", 0, 0, 1) == 1;
    env_str("HIPSIM_TRACE", c->trace_path, sizeof c->trace_path);
    c->fault = env_fault();
    c->graph_say = env_int("HIPSIM_GRAPH_SAY", 0, 0, 1) == 1;
    c->graph_clone_fails = env_int("HIPSIM_GRAPH_CLONE_FAILS", 0, 0, 1) == 1;
    c->graph_memop_fails = env_int("HIPSIM_GRAPH_MEMOP_FAILS", 0, 0, 1) == 1;
    c->gated_launch_fails = env_int("HIPSIM_GATED_LAUNCH_FAILS", 0, 0, 1) == 1;
    c->stream_ids = env_int("HIPSIM_STREAM_ID", 1, 0, 1) == 1;
    c->stream_reuse = env_int("HIPSIM_STREAM_REUSE", 0, 0, 1) == 1;

    for (int d = 0; d < c->devices; d++) {
        struct sim_device *dev = &sim.dev[d];
        dev->index = d;
        for (int q = 0; q < SIM_HWQ_TOTAL; q++) {
            pthread_cond_init(&dev->hwq[q].cv, NULL);
            dev->hwq[q].device = d;
            dev->hwq[q].index = q;
        }
        dev->slots = sim_slots_open(d, c->compute_slots, c->shared_name, c->shared_users);
        struct ihipStream_t *null = calloc(1, sizeof *null);
        if (!null || !dev->slots) {
            fprintf(stderr, "hipsim: out of memory at initialization\n");
            abort(); /* a test double: nothing sensible to do without its devices */
        }
        null->id = ++sim.next_stream_id;
        null->device = d;
        null->kind = SIM_STREAM_NULL;
        null->refs = 1;
        null->hw_queue = (int)(dev->next_hw_queue[SIM_POOL_NORMAL]++ % (unsigned)c->hw_queues);
        dev->null_stream = null;
        null->next = dev->streams;
        dev->streams = null;
    }
    pthread_atfork(NULL, NULL, sim_after_fork_child);
    atexit(misuse_exit);
}

void sim_init(void)
{
    pthread_once(&sim_once, sim_init_once);
}

void sim_lock(void)
{
    pthread_mutex_lock(&sim.lock);
}

void sim_unlock(void)
{
    pthread_mutex_unlock(&sim.lock);
}

void sim_wait(void)
{
    pthread_cond_wait(&sim.done_cv, &sim.lock);
}

/*
 * The child of fork has only the forking thread. Queued commands will never run there, so the
 * queues are emptied and their workers restarted on demand; objects they referenced leak, which
 * is harmless in a test double.
 */
static void sim_after_fork_child(void)
{
    atomic_store(&misuses, 0); /* the parent's: it fails with them */
    pthread_mutex_init(&sim.lock, NULL);
    pthread_cond_init(&sim.done_cv, NULL);
    for (int d = 0; d < sim.cfg.devices; d++) {
        struct sim_device *dev = &sim.dev[d];
        dev->pending = 0;
        for (int q = 0; q < SIM_HWQ_TOTAL; q++) {
            struct sim_hw_queue *hq = &dev->hwq[q];
            for (struct sim_cmd *c = hq->head; c; c = c->next)
                c->done = true;
            hq->head = hq->tail = NULL;
            hq->started = false;
            pthread_cond_init(&hq->cv, NULL);
        }
        for (struct ihipStream_t *s = dev->streams; s; s = s->next)
            s->pending = 0;
    }
}

/* ---- handle registry: an open-addressing set of (pointer, type) ---- */

struct handle_slot {
    const void *p; /* NULL: empty; &handle_tombstone: deleted */
    int type;
};

static struct handle_slot *handles;
static size_t handles_cap, handles_used;
static const char handle_tombstone;

static size_t handle_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static struct handle_slot *handle_find(const void *p)
{
    if (!handles_cap)
        return NULL;
    for (size_t i = handle_hash(p) & (handles_cap - 1);; i = (i + 1) & (handles_cap - 1)) {
        if (!handles[i].p)
            return NULL;
        if (handles[i].p == p)
            return &handles[i];
    }
}

static int handle_grow(void)
{
    size_t cap = handles_cap ? handles_cap * 2 : 256;
    struct handle_slot *n = calloc(cap, sizeof *n), *old = handles;
    if (!n)
        return -ENOMEM;
    size_t old_cap = handles_cap;
    handles = n;
    handles_cap = cap;
    handles_used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].p && old[i].p != &handle_tombstone)
            sim_handle_add(old[i].p, old[i].type);
    free(old);
    return 0;
}

int sim_handle_add(const void *p, enum sim_handle_type type)
{
    if ((handles_used + 1) * 2 > handles_cap && handle_grow() < 0)
        return -ENOMEM;
    size_t i = handle_hash(p) & (handles_cap - 1);
    while (handles[i].p && handles[i].p != &handle_tombstone)
        i = (i + 1) & (handles_cap - 1);
    if (!handles[i].p)
        handles_used++; /* a reused tombstone was already counted */
    handles[i].p = p;
    handles[i].type = type;
    return 0;
}

static _Atomic uint64_t stale_uses;

uint64_t hipsimStaleUses(void)
{
    return atomic_load(&stale_uses);
}

void sim_stale_use(const char *what, const void *p)
{
    atomic_fetch_add(&stale_uses, 1);
    sim_misuse("%s %p used after hipDeviceReset destroyed it", what, p);
}

void sim_misuse(const char *fmt, ...)
{
    sim_init();
    atomic_fetch_add(&misuses, 1);
    va_list ap;
    va_start(ap, fmt);
    flockfile(stderr);
    fputs("hipsim: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    funlockfile(stderr);
    va_end(ap);
}

/* At exit (atexit, from sim_init_once): a process with a misuse ends with SIM_MISUSE_STATUS. The
 * handlers registered before this one are skipped (gpuprio's counts at exit, LeakSanitizer's
 * check), and so are the libraries' destructors; what stdio holds is written first. A dlclose of
 * this library runs it too (no test unloads the simulator). */
static void misuse_exit(void)
{
    uint64_t n = atomic_load(&misuses);
    if (!n)
        return;
    fprintf(stderr, "hipsim: %llu misuse%s reported (hipsim: error): exit status %d\n",
            (unsigned long long)n, n == 1 ? "" : "s", SIM_MISUSE_STATUS);
    fflush(NULL);
    _exit(SIM_MISUSE_STATUS);
}

bool sim_handle_valid(const void *p, enum sim_handle_type type)
{
    struct handle_slot *h = p ? handle_find(p) : NULL;
    if (h && h->type == (int)type + SIM_H_DEAD)
        sim_stale_use(type == SIM_H_EVENT    ? "event"
                      : type == SIM_H_STREAM ? "stream"
                                             : "handle",
                      p);
    return h && h->type == (int)type;
}

void sim_handles_kill(enum sim_handle_type type, bool (*dies)(void *p, void *arg), void *arg)
{
    for (size_t i = 0; i < handles_cap; i++) {
        struct handle_slot *h = &handles[i];
        if (h->p && h->p != &handle_tombstone && h->type == (int)type && dies((void *)h->p, arg))
            h->type = (int)type + SIM_H_DEAD;
    }
}

void sim_handle_remove(const void *p)
{
    struct handle_slot *h = handle_find(p);
    if (h) {
        h->p = &handle_tombstone;
        h->type = 0;
    }
}

/* ---- kernel trace ---- */

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static hipsimTraceEntry *trace_buf;
static size_t trace_cap, trace_count;
static int trace_fd = -1;
static bool trace_fd_opened;

int hipsimTraceStart(size_t capacity)
{
    hipsimTraceEntry *buf = capacity ? calloc(capacity, sizeof *buf) : NULL;
    if (capacity && !buf)
        return -ENOMEM;
    pthread_mutex_lock(&trace_lock);
    free(trace_buf);
    trace_buf = buf;
    trace_cap = capacity;
    trace_count = 0;
    pthread_mutex_unlock(&trace_lock);
    return 0;
}

size_t hipsimTraceGet(hipsimTraceEntry *out, size_t max)
{
    pthread_mutex_lock(&trace_lock);
    size_t n = trace_count < trace_cap ? trace_count : trace_cap;
    if (n > max)
        n = max;
    if (out && n)
        memcpy(out, trace_buf, n * sizeof *out);
    size_t total = trace_count;
    pthread_mutex_unlock(&trace_lock);
    return total;
}

void sim_trace_record(const struct sim_cmd *cmd, const char *name, uint64_t tag)
{
    hipsimTraceEntry e = {0};
    snprintf(e.name, sizeof e.name, "%s", name);
    e.device = cmd->stream->device;
    e.hw_queue = cmd->hw_queue;
    e.stream_id = cmd->stream->id;
    e.tag = tag;
    e.start_ns = cmd->start_ns;
    e.end_ns = cmd->end_ns;
    e.submit_ns = cmd->submit_ns;
    e.waited_ns = cmd->waited_ns;

    pthread_mutex_lock(&trace_lock);
    if (trace_count < trace_cap)
        trace_buf[trace_count] = e;
    trace_count++;
    if (!trace_fd_opened && sim.cfg.trace_path[0]) {
        trace_fd_opened = true;
        trace_fd = open(sim.cfg.trace_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (trace_fd < 0)
            fprintf(stderr, "hipsim: cannot open HIPSIM_TRACE=%s: %s\n", sim.cfg.trace_path,
                    strerror(errno));
    }
    int fd = trace_fd;
    pthread_mutex_unlock(&trace_lock);

    if (fd >= 0) {
        /* By the pid /proc shows, as peers know each other: unique across pid namespaces. */
        struct sim_peer me;
        sim_peer_self(&me);
        char line[256];
        int n = snprintf(line, sizeof line,
                         "%d %d %" PRIu64 " %d %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                         " %" PRIu64 "\n",
                         (int)me.pid, e.device, e.stream_id, e.hw_queue, e.name, e.tag, e.start_ns,
                         e.end_ns, e.submit_ns, e.waited_ns);
        /* One write per line with O_APPEND keeps lines of concurrent processes whole. */
        if (n > 0 && write(fd, line, (size_t)n) < 0)
            SIM_UNUSED(0);
    }
}
