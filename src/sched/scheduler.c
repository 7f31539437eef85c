/*
 * scheduler.c - see scheduler.h.
 *
 * Decisions are made under the scheduling lock of the preempt layer, from a snapshot of every
 * queue, so the policy stays a pure function and a decision never sees half an update. Each
 * change of a queue's decision is one line at GPUPRIO_LOG=info: the answer to "is scheduling
 * doing anything?" (FIELD-REPORT.md item 7).
 */
#include "scheduler.h"

#include <errno.h>
#include <stdlib.h>

#include "gp_config.h"
#include "gp_log.h"
#include "gp_thread.h"
#include "priority.h"

/* The in-flight window's default: see docs/configuration.md for the measurements behind it. */
#define DEFAULT_WINDOW 4
#define MAX_STREAM_PRIORITIES 64

static enum sched_policy policy = SCHED_POLICY_HPF;
static bool has_process_priority;
static int process_priority;
static int stream_priorities[MAX_STREAM_PRIORITIES];
static int stream_priorities_n;
static _Atomic int streams_created;

static _Thread_local bool thread_has_priority;
static _Thread_local int thread_priority;

/* The snapshot the policy decides on (under the scheduling lock). */
static struct {
    struct xqueue **q;
    struct sched_queue *s;
    size_t n, cap;
} snap;

static void collect(struct xqueue *q, void *arg)
{
    (void)arg;
    if (snap.n == snap.cap) {
        size_t cap = snap.cap ? snap.cap * 2 : 32;
        struct xqueue **nq = realloc(snap.q, cap * sizeof *nq);
        if (nq)
            snap.q = nq;
        struct sched_queue *ns = nq ? realloc(snap.s, cap * sizeof *ns) : NULL;
        if (!ns)
            return; /* out of memory: this queue keeps its last decision */
        snap.s = ns;
        snap.cap = cap;
    }
    snap.q[snap.n] = q;
    snap.s[snap.n++] = (struct sched_queue){.device = q->device,
                                            .priority = atomic_load(&q->priority),
                                            .active = atomic_load(&q->active)};
}

/*
 * The policy over every queue, applied; with the scheduling lock held. The registry stays
 * read-locked throughout, so no queue of the snapshot is destroyed and reused meanwhile.
 */
static void decide_locked(void)
{
    snap.n = 0;
    xq_read_lock();
    xq_foreach_locked(collect, NULL);
    sched_policy_decide(policy, snap.s, snap.n);
    for (size_t i = 0; i < snap.n; i++) {
        struct xqueue *q = snap.q[i];
        const struct sched_queue *d = &snap.s[i];
        uint64_t decision = (d->suspend ? XQ_GATE_SUSPENDED : 0) |
                            (d->throttle ? XQ_GATE_THROTTLED : 0) |
                            (d->track ? XQ_GATE_TRACKED : 0);
        bool changed = (q->decision ^ decision) & XQ_GATE_SUSPENDED;
        xq_set_decision(q, decision);
        if (changed)
            gp_log(GP_LOG_INFO, "%s queue %#llx (device %d, thread %llu, priority %d)",
                   snap.s[i].suspend ? "suspended" : "resumed", (unsigned long long)q->key.handle,
                   q->device, (unsigned long long)q->key.tid, snap.s[i].priority);
    }
    xq_read_unlock();
}

static void set_priority_locked(struct xqueue *q, int priority, enum xq_priority_source source)
{
    atomic_store(&q->priority, priority);
    q->priority_source = source;
}

/* A new queue: its priority from the strongest source that has one. */
static void queue_created(struct xqueue *q)
{
    bool created_stream = q->key.device < 0;
    int env_stream = created_stream ? atomic_fetch_add(&streams_created, 1) : -1;
    xq_sched_lock();
    int p = GPUPRIO_PRIORITY_NORMAL;
    enum xq_priority_source src = XQ_PRIO_DEFAULT;
    if (created_stream && q->stream_priority) {
        p = gp_priority_from_stream_priority(q->stream_priority);
        src = XQ_PRIO_STREAM_CREATION;
    }
    if (has_process_priority) {
        p = process_priority;
        src = XQ_PRIO_ENV_PROCESS;
    }
    if (env_stream >= 0 && env_stream < stream_priorities_n) {
        p = stream_priorities[env_stream];
        src = XQ_PRIO_ENV_STREAM;
    }
    if (thread_has_priority && q->owner_tid == gp_tid()) {
        p = thread_priority;
        src = XQ_PRIO_THREAD;
    }
    set_priority_locked(q, p, src);
    decide_locked();
    xq_sched_unlock();
}

static void read_priorities(void)
{
    const char *v = gp_config_get("GPUPRIO_PRIORITY");
    if (v) {
        has_process_priority = gp_priority_parse(v, &process_priority) == 0;
        if (!has_process_priority)
            gp_log(GP_LOG_WARN,
                   "GPUPRIO_PRIORITY='%s' is not a priority: expected " GP_PRIORITY_ACCEPTED
                   "; streams keep their own priorities",
                   v);
    }
    v = gp_config_get("GPUPRIO_STREAM_PRIORITIES");
    if (v) {
        int n = gp_priority_parse_list(v, stream_priorities, MAX_STREAM_PRIORITIES);
        if (n < 0)
            gp_log(GP_LOG_WARN,
                   "GPUPRIO_STREAM_PRIORITIES='%s' is not a comma-separated list of "
                   "at most %d priorities, each " GP_PRIORITY_ACCEPTED "; ignored",
                   v, MAX_STREAM_PRIORITIES);
        stream_priorities_n = n < 0 ? 0 : n;
    }
}

void sched_configure(const struct xq_marker_ops *ops)
{
    static const char *const policies[] = {"hpf", "passthrough", NULL};
    policy = (enum sched_policy)gp_config_choice("GPUPRIO_POLICY", policies, SCHED_POLICY_HPF);
    struct xq_admission_config cfg = {
        .enabled = policy != SCHED_POLICY_PASSTHROUGH,
        .window = (unsigned)gp_config_uint("GPUPRIO_WINDOW", 1, 1024, DEFAULT_WINDOW, "commands"),
        .grace_ns = 1000 * gp_config_uint("GPUPRIO_GRACE_US", 0, 10000000, 150, "microseconds"),
        .watchdog_ns =
            1000000 * gp_config_uint("GPUPRIO_WATCHDOG_MS", 1, 3600000, 500, "milliseconds"),
        .poll_ns = 1000 * gp_config_uint("GPUPRIO_POLL_US", 1, 100000, 20, "microseconds"),
    };
    read_priorities();
    xq_admission_configure(&cfg, ops,
                           &(struct xq_admission_hooks){.activity_changed = decide_locked});
    xq_set_hooks(&(struct xq_hooks){.created = queue_created});
}

enum sched_policy sched_policy(void)
{
    return policy;
}

int sched_set_stream_priority(struct xqueue *q, int priority)
{
    if (!gp_priority_valid(priority))
        return -EINVAL;
    xq_sched_lock();
    set_priority_locked(q, priority, XQ_PRIO_STREAM);
    decide_locked();
    xq_sched_unlock();
    return 0;
}

struct thread_update {
    uint64_t tid;
    int priority;
};

static void update_owned(struct xqueue *q, void *arg)
{
    const struct thread_update *u = arg;
    if (q->owner_tid == u->tid && q->priority_source <= XQ_PRIO_THREAD)
        set_priority_locked(q, u->priority, XQ_PRIO_THREAD);
}

int sched_set_thread_priority(int priority)
{
    if (!gp_priority_valid(priority))
        return -EINVAL;
    thread_has_priority = true;
    thread_priority = priority;
    xq_sched_lock();
    xq_foreach(update_owned, &(struct thread_update){gp_tid(), priority});
    decide_locked();
    xq_sched_unlock();
    return 0;
}

int sched_thread_priority(int *priority)
{
    if (!thread_has_priority)
        return -ENOENT;
    *priority = thread_priority;
    return 0;
}

void sched_queue_stats(const struct xqueue *q, struct gpuprio_queue_stats *out)
{
    uint64_t gate = atomic_load(&q->gate);
    *out = (struct gpuprio_queue_stats){
        .stream = q->key.handle,
        .thread = q->key.tid,
        .device = q->device,
        .flags = q->flags,
        .stream_priority = q->stream_priority,
        .priority = atomic_load(&q->priority),
        .suspended = (gate & XQ_GATE_SUSPENDED) != 0,
        .in_flight = XQ_GATE_IN_FLIGHT(gate),
        .submitted = atomic_load_explicit(&q->submitted, memory_order_relaxed),
        .completed = atomic_load_explicit(&q->completed, memory_order_relaxed),
        .held_ns = atomic_load_explicit(&q->held_ns, memory_order_relaxed),
        .suspensions = atomic_load_explicit(&q->suspensions, memory_order_relaxed),
    };
}

struct stats_fill {
    struct gpuprio_queue_stats *out;
    size_t max;
    int n;
};

static void fill_one(struct xqueue *q, void *arg)
{
    struct stats_fill *f = arg;
    if ((size_t)f->n < f->max)
        sched_queue_stats(q, &f->out[f->n]);
    f->n++;
}

int sched_all_stats(struct gpuprio_queue_stats *out, size_t max)
{
    struct stats_fill f = {out, out ? max : 0, 0};
    xq_foreach(fill_one, &f);
    return f.n;
}

void sched_reset(void)
{
    snap.n = 0;
    xq_admission_reset();
}
