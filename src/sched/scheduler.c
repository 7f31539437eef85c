/*
 * scheduler.c - see scheduler.h.
 *
 * Decisions are made under the scheduling lock of the preempt layer, from a snapshot of every
 * queue, so the policy stays a pure function and a decision never sees half an update. Each
 * change of a queue's decision is one line at GPUPRIO_LOG=info, written after the board is
 * unlocked: the answer to "is scheduling doing anything?" besides `gpuprio top`.
 */
#include "scheduler.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gp_clock.h"
#include "gp_config.h"
#include "gp_conf_file.h"
#include "gp_log.h"
#include "gp_options.h"
#include "gp_thread.h"
#include "gp_priority.h"
#include "sched_board.h"

static enum sched_policy policy = SCHED_POLICY_HPF;
/* GPUPRIO_POLICY=share: this process's queues' minimum share (percent) and weight. */
static unsigned share_percent, weight = 1;
/* The minimum share is owed over this window: a queue that waited longer is owed at most its
 * share of it. One that ran ahead owes at most its share of SHARE_DEBT_NS: enough that its turns
 * do not overrun, little enough that a queue that ran alone before the higher work came is not
 * kept from its share for long. */
#define SHARE_WINDOW_NS 200000000ll
#define SHARE_DEBT_NS 20000000ll
static uint64_t slow_ns; /* GPUPRIO_LOG=debug: waits this long are reported (0: none) */
static bool has_process_priority;
static int process_priority;
static _Atomic int streams_created;

/* Set by `gpuprio set PID PRIORITY` through the board: this process's queues to come. */
static bool has_requested_priority;
static int requested_priority;

static _Thread_local bool thread_has_priority;
static _Thread_local int thread_priority;

/* The GPUPRIO_STREAM_PRIORITIES place the calling thread's stream creation took
 * (sched_stream_creating), for the queue it creates; -1 when none is taken. */
static _Thread_local int creating_index = -1;
/* The highest priority the process was given so far, by any source but the streams' own creation
 * priorities (sched_highest_priority); at least normal. */
static _Atomic int highest_given = GPUPRIO_PRIORITY_NORMAL;

/* The highest priority the administrator lets this process's user use (gp_conf_file.h), if any. */
static bool has_cap;
static int user_cap;
static unsigned cap_line;
static _Atomic bool cap_said;

/* ---- priorities and their sources ---- */

/* A priority as given by source, within the cap; the first one above it is said once. */
static int capped(int priority, const char *source)
{
    if (!has_cap || priority <= user_cap)
        return priority;
    if (!atomic_exchange(&cap_said, true))
        gp_log(GP_LOG_WARN,
               "priority %d from %s is above the cap of this user, %d, set in %s line %u: %d is "
               "used instead (and for every priority above it)",
               priority, source, user_cap, gp_conf_get()->path, cap_line, user_cap);
    return user_cap;
}

static void note_given(int priority)
{
    int seen = atomic_load(&highest_given);
    while (priority > seen && !atomic_compare_exchange_weak(&highest_given, &seen, priority))
        continue;
}

/* ---- the snapshot a decision is made on ---- */

/* What the policy decides on for one device (under the scheduling lock): this process's
 * queues, and other processes' slots on the device's board. s[i] is what the policy sees of the
 * queue that ref[i] names. */
struct snap_ref {
    struct xqueue *q;     /* this process's queue, or NULL */
    struct xq_state *st;  /* another process's queue's state on a board */
    struct dg_line *gate; /* and its gate line, on our user's board; NULL on another user's,
                             which is read only (tenants.h) */
};
static struct {
    struct sched_queue *s;
    struct snap_ref *ref;
    size_t n, cap;
} snap;
static int snap_device;
static int snap_own_top;    /* the highest priority of this process's queues in the snapshot */
static int snap_tenant_top; /* and of other users' queues (tenants.h) */

static bool push(struct sched_queue e, struct xqueue *q, struct xq_state *st, struct dg_line *gate)
{
    if (snap.n == snap.cap) {
        size_t cap = snap.cap ? snap.cap * 2 : 64;
        struct sched_queue *ns = realloc(snap.s, cap * sizeof *ns);
        if (ns)
            snap.s = ns;
        struct snap_ref *nr = ns ? realloc(snap.ref, cap * sizeof *nr) : NULL;
        if (!nr)
            return false; /* out of memory: this queue keeps its last decision */
        snap.ref = nr;
        snap.cap = cap;
    }
    snap.s[snap.n] = e;
    snap.ref[snap.n++] = (struct snap_ref){q, st, gate};
    return true;
}

/* Whether a queue counts as active in decisions: a stalled one holds nobody back (xqueue.h). */
static bool counts_active(const struct xq_state *st)
{
    return atomic_load(&st->active) && !(atomic_load(&st->gate) & XQ_GATE_STALLED);
}

static void collect(struct xqueue *q, void *arg)
{
    (void)arg;
    struct xq_state *st = xq_st(q);
    if (q->device != snap_device || sb_leaving())
        return;
    int priority = atomic_load(&st->priority);
    if (priority > snap_own_top)
        snap_own_top = priority;
    push((struct sched_queue){.device = q->device,
                              .priority = priority,
                              .active = counts_active(st),
                              .owed = q->share_owed,
                              .vtime = q->share_vbase + q->share_ran_ns / weight,
                              .identity = sb_identity(q),
                              .running = !(atomic_load(&st->gate) & XQ_GATE_SUSPENDED)},
         q, NULL, NULL);
}

/* Another user's queue (tenants.h): decided with, never written. */
static void collect_tenant(const struct sched_queue *q, struct xq_state *st, void *arg)
{
    if (q->priority > snap_tenant_top)
        snap_tenant_top = q->priority;
    struct sched_queue e = *q;
    e.device = snap_device;
    push(e, NULL, st, NULL);
    (void)arg;
}

/* Our user's side of the device as the decision saw it, for other users (board.h). */
static uint64_t summary(void)
{
    int32_t top_live = INT32_MIN, top_active = INT32_MIN;
    bool owed = false;
    for (size_t i = 0; i < snap.n; i++) {
        if (!snap.ref[i].q && !snap.ref[i].gate)
            continue; /* another user's */
        if (snap.s[i].priority > top_live)
            top_live = snap.s[i].priority;
        if (snap.s[i].active && snap.s[i].priority > top_active)
            top_active = snap.s[i].priority;
        owed |= snap.s[i].active && snap.s[i].owed;
    }
    /* A queue owed its share holds higher ones back (policy.h): other users must decide again
     * when one starts or ends its turn, so that changes the summary too (its sign bit's flip). */
    return GP_BOARD_SUMMARY(top_live, top_active) ^ (owed ? UINT64_C(1) << 31 : 0);
}

static void collect_board(const struct gp_board *b, int device)
{
    for (unsigned i = 0; i < gp_board_slots_used(b); i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        if (GP_SLOT_STATE(atomic_load(&s->owner)) != GP_SLOT_LIVE || !sb_foreign(s) ||
            (atomic_load(&s->st.gate) & XQ_GATE_LEFT))
            continue; /* ours, or kept by an exiting process for its last work only */
        int priority = atomic_load(&s->st.priority);
        if (!gp_priority_valid(priority))
            continue; /* not a value any gpuprio writes: ignore it rather than obey it */
        struct dg_line *line = gp_board_gate(b, s);
        push((struct sched_queue){.device = device,
                                  .priority = priority,
                                  .active = counts_active(&s->st),
                                  .owed = atomic_load(&line->owed) != 0,
                                  .vtime = atomic_load(&line->vtime),
                                  .identity = GP_BOARD_QUEUE_IDENTITY(b->f->h.uid, i),
                                  .running = !(atomic_load(&s->st.gate) & XQ_GATE_SUSPENDED)},
             NULL, &s->st, line);
    }
}

/* ---- applying a decision ---- */

/*
 * Level 2 for this process's queue: held by gates on the device (its line follows the
 * suspension) where gates are usable, it is throttled (something above it exists) and nothing of
 * its own process on the device ranks above it. A closed gate stops its stream, and with it
 * whatever shares the stream's hardware queue (a HIP runtime puts several streams on one) or
 * waits for it implicitly (the legacy null stream and the blocking streams wait for each other),
 * which can only be queues of its own process; when none of them ranks above it, none of them
 * may run while it is held. Nor may another user's queue rank above it: that user's decisions
 * cannot close our gates, our listener does once it wakes, and meanwhile an ungated queue runs
 * deep; throttled on the host, it has at most the window in flight (tenants.h). Any other queue
 * is pinned open: gates already on its stream never hold it again.
 */
static void apply_gate(const struct sched_queue *d, struct xqueue *q)
{
    struct dg_line *line = atomic_load(&q->dgate);
    if (!line)
        return;
    struct xq_state *st = xq_st(q);
    if (d->throttle && d->priority >= snap_own_top && d->priority >= snap_tenant_top &&
        !atomic_load(&q->dgate_off) && sb_gates_usable(q->device)) {
        atomic_store(&q->dgate_bound_ns, sb_gate_ns(q->device)); /* before admission sees it */
        /* Another process closes the gate without waking anyone, and no thread of ours may be
         * held on the host to tell the board's listener: it must look for dead processes (which
         * may leave the gate closed) as often as for held threads from now on. */
        if (!(atomic_fetch_or(&st->gate, XQ_GATE_DEVICE) & XQ_GATE_DEVICE))
            sb_thread_held(q->device);
        dg_unpin(line);
        dg_follow(line, d->suspend);
    } else {
        atomic_fetch_and(&st->gate, ~XQ_GATE_DEVICE);
        dg_pin(line);
    }
    dg_mirror(q->dgate_region, line); /* mirrored gates: to the copy the device reads */
}

/*
 * GPUPRIO_LOG=info: who suspends a queue, on its gate line (devgate.h), for its owner's line
 * (say_switches). suspending(), before the decision is set, says whether it suspends the queue on
 * st and notes this process on its line, with suspended_at zeroed first, so that an owner that
 * reads these names never takes them for an earlier suspension's; suspended(), once the decision
 * is set, writes which suspension that was. Plain stores: a suspension holds back, and costs its
 * decider no system call (docs/design.md), whatever the owner logs.
 */
static bool suspending(const struct xq_state *st, struct dg_line *line, uint64_t decision)
{
    if (!(decision & XQ_GATE_SUSPENDED) ||
        (atomic_load(&((struct xq_state *)st)->gate) & XQ_GATE_SUSPENDED))
        return false;
    if (line) {
        const struct gp_board_owner *me = gp_board_self();
        atomic_store(&line->suspended_at, 0);
        atomic_store(&line->suspended_by, me->pid);
        atomic_store(&line->suspended_by_ns, me->pid_ns);
    }
    return true;
}

static void suspended(const struct xq_state *st, struct dg_line *line)
{
    /* The count with this suspension in it: a slot's deciders hold its board's lock, so none
     * other is counted meanwhile (but where a board was given up, when a line may name nobody). */
    if (line)
        atomic_store(&line->suspended_at,
                     (uint32_t)atomic_load(&((struct xq_state *)st)->suspensions));
}

/*
 * Applies the i-th decision (another process's only with the board locked); returns whether
 * another process must be woken: its queue was let go further (it was suspended or throttled and
 * no longer is), so that its held threads look again, or its gate line changed and its owner
 * mirrors its gates (devgate.h), so that its listener copies the change to where its device
 * reads it. One held back further needs no wake otherwise: its threads read the gate before each
 * command, its device the line, and its owner says the suspension at its listener's next look.
 * So a queue becoming active, which holds others back, makes no system call unless a process it
 * holds mirrors its gates. Gates follow suspension: another process's gate is closed or opened
 * here (its owner pinned it open if it must not close), this process's by apply_gate.
 */
static bool apply(size_t i, bool board_locked)
{
    const struct sched_queue *d = &snap.s[i];
    uint64_t decision = (d->suspend ? XQ_GATE_SUSPENDED : 0) |
                        (d->throttle ? XQ_GATE_THROTTLED : 0) | (d->track ? XQ_GATE_TRACKED : 0);
    struct snap_ref *r = &snap.ref[i];
    if (!r->q) {
        if (!board_locked || !r->gate)
            return false; /* a board given up on, or another user's: read, not written */
        bool suspends = suspending(r->st, r->gate, decision);
        uint64_t old = xq_state_set_decision(r->st, decision);
        if (suspends)
            suspended(r->st, r->gate);
        bool mirror_moved = dg_follow(r->gate, d->suspend) && atomic_load(&r->gate->mirrored);
        if (mirror_moved)
            sb_write_peer_copy(d->device, r->gate);
        return mirror_moved || (old & ~decision & (XQ_GATE_SUSPENDED | XQ_GATE_THROTTLED)) != 0;
    }
    struct dg_line *line = atomic_load(&r->q->dgate);
    bool suspends = suspending(xq_st(r->q), line, decision);
    xq_set_decision(r->q, decision);
    if (suspends)
        suspended(xq_st(r->q), line);
    apply_gate(d, r->q);
    return false;
}

/* ---- what the log says ---- */

/*
 * GPUPRIO_LOG=info: a line each time a queue of this process is suspended or resumed, the answer
 * to "is scheduling doing anything?", whichever process decided it: this one (said after its
 * decision), or another of its user on the board, which sets the decision in our slot without
 * us and wakes nobody for a suspension (said at our listener's next look: every 20 ms while a
 * queue of ours is held, at once where a resumption wakes it; before the queue leaves its slot,
 * and at exit). Another user's processes never write our slot: our own decisions suspend us for
 * their queues. Said from the slot's count of suspensions, so each is said once, however many
 * processes decided meanwhile; those that came faster than we looked are one line with their
 * number, and each line says the state the queue is in now: suspended; suspended and resumed
 * (suspended since the last line, running again now); resumed. The decider is named only for the
 * count read (its line's suspended_at), never a stale one, and its name (its comm, which it sets
 * as it likes) only in printable ASCII. Under the scheduling lock; final: the queue leaves its
 * slot or the process exits, and nothing is left for a later look.
 */
static void say_switches(struct xqueue *q, bool final)
{
    struct xq_state *st = xq_st(q);
    struct dg_line *line = atomic_load(&q->dgate);
    /* The decider of the last suspension, first: suspended_at around its names, which it zeroes
     * before it writes them, so that a match makes them that suspension's decider's. */
    uint32_t at = line ? atomic_load(&line->suspended_at) : 0;
    uint32_t pid = line ? atomic_load(&line->suspended_by) : 0;
    uint32_t ns = line ? atomic_load(&line->suspended_by_ns) : 0;
    bool noted = at != 0 && atomic_load(&line->suspended_at) == at;
    /* Then the gate, then the count: a suspension is counted before its bit is set
     * (xq_state_set_decision), so one seen set is counted, and suspended_at is written after the
     * bit, so with it matching the count, the gate read shows the last suspension set (or lifted
     * since). */
    bool suspended = (atomic_load(&st->gate) & XQ_GATE_SUSPENDED) != 0;
    uint64_t n = atomic_load(&st->suspensions);
    bool settled = noted && at == (uint32_t)n;
    uint64_t said = atomic_load(&q->said_suspensions);
    if (atomic_load(&q->said_st) != st || n < said) {
        /* The queue took or left a slot since (or is new): that state's count starts here. */
        atomic_store(&q->said_st, st);
        said = n;
    }
    uint64_t times = n - said;
    if (times && !suspended && line && !settled && !final && q->said_deferred != n) {
        /* Counted, its bit clear, and not known set: another process may be between the two
         * now. Said at the next look, whatever it finds (a decider of an older library never
         * writes suspended_at): "suspended and resumed" now could be followed by a
         * "suspended" for the same suspension. */
        q->said_deferred = n;
        return;
    }
    atomic_store(&q->said_suspensions, n);
    int priority = atomic_load(&st->priority);
    bool was = atomic_load(&q->said_suspended);
    const char *what = times && suspended  ? "suspended"
                       : times             ? "suspended and resumed"
                       : suspended && !was ? "suspended"
                       : !suspended && was ? "resumed"
                                           : NULL;
    if (!what)
        return;
    char by[96] = "", more[64] = "";
    const struct gp_board_owner *me = gp_board_self();
    if (times && settled && pid && (pid != me->pid || ns != me->pid_ns)) {
        /* Another process's decision (ours, or unknown: no more). */
        char comm[16], shown[17];
        bool named = sb_process_comm(q->device, pid, ns, comm);
        if (named)
            gp_log_printable(shown, comm, sizeof comm);
        snprintf(by, sizeof by,
                 ns == me->pid_ns ? " by process %u%s%s%s"
                                  : " by process %u of another pid namespace%s%s%s",
                 pid, named ? " (" : "", named ? shown : "", named ? ")" : "");
    }
    if (times > 1)
        snprintf(more, sizeof more, ", %llu times since the last line", (unsigned long long)times);
    else if (!times && suspended)
        snprintf(more, sizeof more, " (counted already)"); /* said before its bit was seen */
    gp_log(GP_LOG_INFO, "%s queue %#llx (device %d, thread %llu, priority %d)%s%s", what,
           (unsigned long long)q->key.handle, q->device, (unsigned long long)q->key.tid, priority,
           by, more);
    atomic_store(&q->said_suspended, suspended);
}

/* Whether say_switches has anything to say of a queue of device: its count or its suspension
 * moved since its last line. Without the scheduling lock, which a board's listener then takes
 * only when there is: a queue becoming active must not wait behind every wake of it. */
struct unsaid_scan {
    int device;
    bool unsaid;
};

static void note_unsaid(struct xqueue *q, void *arg)
{
    struct unsaid_scan *u = arg;
    if (u->unsaid || q->device != u->device)
        return;
    const struct xq_state *st = xq_st(q);
    bool suspended = (atomic_load(&((struct xq_state *)st)->gate) & XQ_GATE_SUSPENDED) != 0;
    u->unsaid =
        atomic_load(&q->said_st) != st ||
        atomic_load(&((struct xq_state *)st)->suspensions) != atomic_load(&q->said_suspensions) ||
        suspended != atomic_load(&q->said_suspended);
}

/* After a decision: this process's queues in it, once the board is unlocked. */
static void log_switched(void)
{
    if (!gp_log_on(GP_LOG_INFO))
        return;
    for (size_t i = 0; i < snap.n; i++)
        if (snap.ref[i].q)
            say_switches(snap.ref[i].q, false);
}

/* At a wake of device's listener: what other processes' decisions did to our queues there. */
static void say_device_switches(struct xqueue *q, void *arg)
{
    if (q->device == *(const int *)arg)
        say_switches(q, false);
}

static void say_last_switches(struct xqueue *q, void *arg)
{
    (void)arg;
    say_switches(q, true);
}

/* At exit, before our queues leave their slots (sb_upcalls.leaving; scheduling lock held). */
static void say_leaving(void)
{
    if (gp_log_on(GP_LOG_INFO))
        xq_foreach_joined(say_last_switches, NULL);
}

/* ---- deciding ---- */

/*
 * GPUPRIO_POLICY=share: a queue of ours that became active since the last decision starts no
 * further behind than the least-served active queue of its priority (it did not compete while
 * idle, so it is owed nothing for that time), and every queue of ours shows its vtime and whether
 * it is owed on its line, for the other processes' decisions.
 */
static void share_catch_up(void)
{
    for (size_t i = 0; i < snap.n; i++) {
        struct xqueue *q = snap.ref[i].q;
        if (!q)
            continue;
        struct sched_queue *e = &snap.s[i];
        if (e->active && !q->share_was_active) {
            uint64_t least = UINT64_MAX;
            for (size_t j = 0; j < snap.n; j++)
                if (j != i && snap.s[j].active && snap.s[j].priority == e->priority &&
                    snap.s[j].vtime < least)
                    least = snap.s[j].vtime;
            if (least != UINT64_MAX && e->vtime < least) {
                q->share_vbase += least - e->vtime;
                e->vtime = least;
            }
        }
        q->share_was_active = e->active;
        struct dg_line *line = atomic_load(&q->dgate);
        if (line) {
            atomic_store(&line->vtime, e->vtime);
            atomic_store(&line->owed, e->owed);
        }
    }
}

/* Device's queues, this process's and (with the board locked) every other's on it. */
static void decide_device(int device)
{
    snap.n = 0;
    snap_device = device;
    snap_own_top = snap_tenant_top = INT_MIN;
    xq_foreach_joined_locked(collect, NULL);
    struct gp_board *b = sb_lock(device);
    bool locked = b != NULL;
    struct gp_board_wait waited = b ? gp_board_last_wait() : (struct gp_board_wait){0, 0};
    if (!b)
        b = sb_given_up(device); /* our own queues still see the others' */
    if (b)
        collect_board(b, device);
    sb_foreach_tenant_queue(device, collect_tenant, NULL);
    if (policy == SCHED_POLICY_SHARE)
        share_catch_up();
    sched_policy_decide(policy, snap.s, snap.n);
    bool wake_others = false;
    for (size_t i = 0; i < snap.n; i++)
        wake_others |= apply(i, locked);
    if (locked) {
        bool shared = gp_board_shared();
        uint64_t ours = shared ? summary() : 0;
        sb_unlock(device, wake_others, shared ? &ours : NULL);
    }
    log_switched();
    if (slow_ns && waited.ns >= slow_ns)
        gp_log(GP_LOG_DEBUG,
               "deciding on device %d waited %llu us for its board's lock (held by "
               "process %u)",
               device, (unsigned long long)(waited.ns / 1000), waited.holder_pid);
}

static void note_device(struct xqueue *q, void *arg)
{
    uint64_t *devices = arg;
    if (q->device >= 0 && q->device < 64)
        *devices |= UINT64_C(1) << q->device;
    else
        decide_device(q->device); /* rare: outside the bitmap, decided on its own */
}

/*
 * The policy over device's queues (every device's with XQ_ALL_DEVICES: those with queues here
 * or a board), applied; with the scheduling lock held. Devices are independent, so a change
 * is decided on its own device only, and only that device's board is locked. The registry stays
 * read-locked throughout, so no queue of a snapshot is destroyed and reused meanwhile.
 */
static void decide_locked(int device)
{
    xq_read_lock();
    if (device != XQ_ALL_DEVICES) {
        decide_device(device);
    } else {
        uint64_t devices = 0;
        xq_foreach_joined_locked(note_device, &devices);
        for (int d = 0; d < 64; d++)
            if ((devices >> d & 1) || sb_has_board(d))
                decide_device(d);
    }
    xq_read_unlock();
}

/* ---- queues joining and leaving ---- */

static void set_priority_locked(struct xqueue *q, int priority, enum xq_priority_source source)
{
    atomic_store(&xq_st(q)->priority, priority);
    q->priority_source = source;
}

/* Its first command: onto its device's board (admission decides right after), and out of the
 * unused queues the process's record counts. */
static void queue_joining(struct xqueue *q)
{
    sb_attach(q);
    sb_queue_joined(q);
}

/*
 * A queue the application or the user named (gpuprio_stream_set_priority,
 * GPUPRIO_STREAM_PRIORITIES) takes part from now on, as if it had run, so the queues
 * below it are throttled before its first command arrives; its device is decided on again.
 */
static void join_named_locked(struct xqueue *q)
{
    if (!atomic_load(&q->joined)) {
        queue_joining(q);
        xq_join(q);
    }
    decide_locked(q->device);
}

/* The sources below a thread's priority, over what *p and *src say so far (weaker): the
 * process's (GPUPRIO_PRIORITY), then the queue's place in GPUPRIO_STREAM_PRIORITIES (-1: none). */
static void apply_env_sources(int env_stream, int *p, enum xq_priority_source *src)
{
    if (has_process_priority) {
        *p = process_priority;
        *src = XQ_PRIO_ENV_PROCESS;
    }
    const int *env_list; /* GPUPRIO_STREAM_PRIORITIES, as the options table holds it */
    if (env_stream >= 0 && env_stream < gp_opt_priority_list(GP_OPT_STREAM_PRIORITIES, &env_list)) {
        *p = capped(env_list[env_stream], "GPUPRIO_STREAM_PRIORITIES");
        *src = XQ_PRIO_ENV_STREAM;
    }
}

/* The sources from the thread's priority up (a queue of the calling thread, or created by it):
 * its priority, then `gpuprio set`'s for the process. Under the scheduling lock. */
static void apply_thread_sources(bool own_thread, int *p, enum xq_priority_source *src)
{
    if (thread_has_priority && own_thread) {
        *p = thread_priority;
        *src = XQ_PRIO_THREAD;
    }
    if (has_requested_priority) {
        *p = requested_priority;
        *src = XQ_PRIO_STREAM;
    }
}

/* A new queue: its priority from the strongest source that has one. It takes no part in
 * scheduling until it runs something (queue_joining): PyTorch creates whole pools of streams
 * that never do. Its device's board is opened now, outside the scheduling lock, as that may ask
 * the runtime for the device's identity. */
static void queue_created(struct xqueue *q)
{
    bool created_stream = q->key.device < 0;
    int env_stream = -1;
    if (created_stream) {
        env_stream = creating_index >= 0 ? creating_index : atomic_fetch_add(&streams_created, 1);
        creating_index = -1;
    }
    sb_join(q->device);
    sb_queue_created(q);
    xq_sched_lock();
    int p = GPUPRIO_PRIORITY_NORMAL;
    enum xq_priority_source src = XQ_PRIO_DEFAULT;
    if (created_stream && q->stream_priority) {
        p = capped(gp_priority_from_stream_priority(q->stream_priority),
                   "the stream's creation priority");
        src = XQ_PRIO_STREAM_CREATION;
    }
    apply_env_sources(env_stream, &p, &src);
    q->base_priority = p;
    q->base_source = src;
    apply_thread_sources(q->owner_tid == gp_tid(), &p, &src);
    set_priority_locked(q, p, src);
    if (src == XQ_PRIO_ENV_STREAM) /* named by the user: it takes part at once */
        join_named_locked(q);
    xq_sched_unlock();
}

/* A destroyed stream's queue, its work done and idle (decided on so already), leaves its board
 * slot. Under the scheduling lock, as leave_all gives the slots back at exit. */
static void queue_released(struct xqueue *q)
{
    xq_sched_lock();
    if (gp_log_on(GP_LOG_INFO))
        say_switches(q, true); /* its slot's count goes with the slot */
    sb_released(q);
    xq_sched_unlock();
}

static void board_changed(int device, bool decide);
static bool device_held(int device, bool *suspended);
static bool share_turn(int device);

/* ---- configuration ---- */

/* A share or weight the administrator's file gives this user: the environment (variable name,
 * value env) may ask for less, never more (the other users' processes yield to it); without the
 * file's, env. */
static unsigned from_file(enum gp_conf_setting what, const char *name, unsigned env)
{
    int value;
    unsigned line;
    const struct gp_conf *conf = gp_conf_get();
    if (gp_conf_lookup(conf, what, geteuid(), &value, &line) != 0)
        return env;
    if (!gp_config_get(name))
        return (unsigned)value;
    if (env > (unsigned)value)
        gp_log(GP_LOG_WARN, "%s=%u is more than %s line %u gives this user; using %d", name, env,
               conf->path, line, value);
    return env < (unsigned)value ? env : (unsigned)value;
}

void sched_configure(const struct xq_marker_ops *ops)
{
    policy = (enum sched_policy)gp_opt_choice(GP_OPT_POLICY);
    share_percent = from_file(GP_CONF_SHARE, "GPUPRIO_SHARE", (unsigned)gp_opt_uint(GP_OPT_SHARE));
    weight = from_file(GP_CONF_WEIGHT, "GPUPRIO_WEIGHT", (unsigned)gp_opt_uint(GP_OPT_WEIGHT));
    struct xq_admission_config cfg = {
        .enabled = policy != SCHED_POLICY_PASSTHROUGH,
        .window = (unsigned)gp_opt_uint(GP_OPT_WINDOW),
        .budget_ns = 1000 * gp_opt_uint(GP_OPT_WINDOW_US),
        .grace_ns = 1000 * gp_opt_uint(GP_OPT_GRACE_US),
        .watchdog_ns = 1000000 * gp_opt_uint(GP_OPT_WATCHDOG_MS),
        .poll_ns = 1000 * gp_opt_uint(GP_OPT_POLL_US),
        /* GPUPRIO_LOG=debug: where calls that held an application thread this long went. */
        .slow_ns = gp_log_on(GP_LOG_DEBUG) ? 1000 * gp_opt_uint(GP_OPT_SLOW_US) : 0,
        .peers_hold = policy == SCHED_POLICY_SHARE, /* only share's turns suspend equal peers */
    };
    slow_ns = cfg.slow_ns;
    has_cap = gp_conf_lookup(gp_conf_get(), GP_CONF_CAP, geteuid(), &user_cap, &cap_line) == 0;
    has_process_priority = gp_opt_priority(GP_OPT_PRIORITY, &process_priority);
    if (has_process_priority)
        note_given(process_priority = capped(process_priority, "GPUPRIO_PRIORITY"));
    const int *env_list;
    for (int i = gp_opt_priority_list(GP_OPT_STREAM_PRIORITIES, &env_list); i-- > 0;)
        note_given(capped(env_list[i], "GPUPRIO_STREAM_PRIORITIES"));
    sb_configure(&(struct sb_upcalls){.changed = board_changed,
                                      .device_held = device_held,
                                      .share_turn = share_turn,
                                      .leaving = say_leaving});
    xq_admission_configure(&cfg, ops,
                           &(struct xq_admission_hooks){.joining = queue_joining,
                                                        .activity_changed = decide_locked,
                                                        .held = sb_thread_held,
                                                        .holders_elsewhere = sb_holders_elsewhere,
                                                        .longest = sb_queue_longest});
    xq_set_hooks(&(struct xq_hooks){.created = queue_created, .released = queue_released});
}

void sched_set_device_ops(const struct sb_device_ops *ops)
{
    sb_set_device_ops(ops);
}

/* ---- the boards' listeners ---- */

struct request_scan {
    int device;
    bool changed;
    bool let_go; /* a queue of ours held by gates that another process no longer throttles */
};

/* q's slot, when a priority request in it was not applied yet (*seq: the request's). */
static struct gp_board_slot *unseen_request(struct xqueue *q, int device, uint32_t *seq)
{
    struct gp_board_slot *s = q->device == device ? sb_slot_of(q) : NULL;
    *seq = s ? atomic_load(&s->request_seq) : 0;
    return s && *seq != atomic_load(&q->request_seen) ? s : NULL;
}

/*
 * Also notes a queue that another process let go while it was held by gates: Level 2 is its
 * owner's to leave (apply_gate), and a queue that never goes idle would otherwise keep putting
 * gates on its stream, and its graphs' gated copies, until it did.
 */
static void note_request(struct xqueue *q, void *arg)
{
    struct request_scan *r = arg;
    uint32_t seq;
    if (unseen_request(q, r->device, &seq))
        r->changed = true;
    uint64_t gate = q->device == r->device ? atomic_load(&xq_st(q)->gate) : 0;
    if ((gate & XQ_GATE_DEVICE) && !(gate & XQ_GATE_THROTTLED))
        r->let_go = true;
}

static void apply_request(struct xqueue *q, void *arg)
{
    struct request_scan *r = arg;
    uint32_t seq;
    struct gp_board_slot *s = unseen_request(q, r->device, &seq);
    if (!s)
        return;
    atomic_store(&q->request_seen, seq);
    int priority = atomic_load(&s->request);
    if (!gp_priority_valid(priority))
        return;
    priority = capped(priority, "gpuprio set");
    gp_log(GP_LOG_INFO, "priority of queue %#llx set to %d from outside (gpuprio set)",
           (unsigned long long)q->key.handle, priority);
    set_priority_locked(q, priority, XQ_PRIO_STREAM);
    if (seq & GP_REQUEST_PROCESS) {
        has_requested_priority = true;
        requested_priority = priority;
    }
    note_given(priority);
    r->changed = true;
}

static void set_requested(struct xqueue *q, void *arg)
{
    set_priority_locked(q, *(const int *)arg, XQ_PRIO_STREAM);
}

/*
 * `gpuprio set PID PRIORITY` reached the process's record on device's board: every queue of the
 * process takes the priority, those that never ran included (they hold no slot to be asked
 * through), and so do the queues it creates from now on. True when it was applied.
 */
static bool apply_process_request(int device)
{
    int priority;
    if (!sb_record_request(device, &priority) || !gp_priority_valid(priority))
        return false;
    priority = capped(priority, "gpuprio set");
    gp_log(GP_LOG_INFO, "priority of every queue set to %d from outside (gpuprio set)", priority);
    xq_foreach(set_requested, &priority);
    has_requested_priority = true;
    requested_priority = priority;
    note_given(priority);
    sb_record_applied(device, priority);
    return true;
}

/*
 * GPUPRIO_POLICY=share, at a listener's look (every SB_SHARE_LOOK_NS while a queue of ours is
 * active): the time since the last look counts as run (vtime's measure) for a queue that is
 * active and not suspended. A queue with a minimum share is owed that share of the time that
 * passes while it is active, and pays back the time between looks in which it ran (was not
 * suspended) and completed something: in a turn it has the device, and before its first
 * completion the device finishes what the higher queues had in flight. The GPU time learned per
 * command would be the other measure; it counts how late the watcher saw each command complete
 * (about 60 us on the simulator, a fifth of a 300-us kernel). Owed at most its share of
 * SHARE_WINDOW_NS, owing at most its share of SHARE_DEBT_NS: a queue that gets its share between
 * the higher queues' work is never owed a turn.
 * The state between looks is taken as the decision after the last one left it (the gate still
 * shows it unless another process decided since), and only if the queue was active then too: an
 * idle one is looked at seldom.
 */
struct share_look {
    int device;
    uint64_t now;
    bool changed;
};

static void share_account(struct xqueue *q, void *arg)
{
    struct share_look *l = arg;
    if (q->device != l->device)
        return;
    uint64_t dt = q->share_look_ns ? l->now - q->share_look_ns : 0;
    uint64_t completed = atomic_load(&xq_st(q)->completed);
    bool moved = completed != q->share_completed_seen;
    q->share_look_ns = l->now;
    q->share_completed_seen = completed;
    bool active = counts_active(xq_st(q)), was_active = q->share_looked_active && active;
    bool suspended = (atomic_load(&xq_st(q)->gate) & XQ_GATE_SUSPENDED) != 0;
    q->share_looked_active = active;
    /* Run since the last look if it ran right after that look's decision and still does. A
     * turn our look's decision gave counts whole (the previous turn's commands that the device
     * finishes in it are matched by ours that it finishes in the next); one that a decision
     * between looks gave (another process's, which its board change brings to our next look at
     * once, or an activation's) counts from our next look. Counting a turn only from its second
     * look instead left a look period of every turn uncounted where each process gives its own
     * queues their turns (another user's board): weights 3:1 came out 2.83-2.94:1, under TSan
     * down to 2.72:1 (benchmarks.md). */
    if (was_active && !suspended && q->share_looked_running)
        q->share_ran_ns += dt;
    if (!share_percent)
        return;
    int64_t most = (int64_t)share_percent * SHARE_WINDOW_NS / 100;
    int64_t least = -(int64_t)share_percent * SHARE_DEBT_NS / 100;
    if (was_active)
        q->share_credit_ns += (int64_t)dt * share_percent / 100;
    if (was_active && !suspended && moved)
        q->share_credit_ns -= (int64_t)dt;
    q->share_credit_ns = q->share_credit_ns > most    ? most
                         : q->share_credit_ns < least ? least
                                                      : q->share_credit_ns;
    bool owed = active && q->share_credit_ns > 0;
    l->changed |= owed != q->share_owed;
    q->share_owed = owed;
}

/* After a look's decision: whether q runs now, which share_account's next look counts from. */
static void share_note_running(struct xqueue *q, void *arg)
{
    if (q->device == *(const int *)arg)
        q->share_looked_running =
            counts_active(xq_st(q)) && !(atomic_load(&xq_st(q)->gate) & XQ_GATE_SUSPENDED);
}

/*
 * The boards' listeners: another process asked for priorities or changed what is decided. The
 * request in the record is applied before those in the queues' slots: a later request for one
 * stream (only in its slot) must not be undone by an earlier one for the whole process, and a
 * later one for the whole process is in every slot too.
 *
 * Most wakes bring neither a request nor a reason to decide (another process's queue went
 * active or idle, the liveness period ended): those are found so without the scheduling lock,
 * which a queue becoming active must never wait behind. At GPUPRIO_LOG=info too: the lock is
 * taken to say suspensions only where a queue's count or suspension moved since its last line.
 */
static void board_changed(int device, bool decide)
{
    struct request_scan r = {.device = device};
    struct unsaid_scan u = {device, false};
    if (gp_log_on(GP_LOG_INFO))
        xq_foreach_joined(note_unsaid, &u);
    if (u.unsaid) {
        xq_sched_lock();
        xq_foreach_joined(say_device_switches, &device);
        xq_sched_unlock();
    }
    if (!decide && policy != SCHED_POLICY_SHARE && !sb_record_request_pending(device)) {
        xq_foreach_joined(note_request, &r);
        if (!r.changed && !r.let_go)
            return;
        decide = r.let_go;
        r.changed = false;
    }
    xq_sched_lock();
    if (policy == SCHED_POLICY_SHARE) {
        /* Owed shares are looked at, and equal peers take turns, at every look. */
        struct share_look l = {.device = device, .now = gp_now_ns()};
        xq_foreach_joined(share_account, &l);
        decide = true;
    }
    bool whole_process = apply_process_request(device);
    xq_foreach_joined(apply_request, &r);
    if (whole_process)
        decide_locked(XQ_ALL_DEVICES); /* the process's queues may be on any device */
    else if (decide || r.changed)
        decide_locked(device);
    if (policy == SCHED_POLICY_SHARE)
        xq_foreach_joined(share_note_running, &device);
    xq_sched_unlock();
}

struct held_scan {
    int device;
    bool held, suspended;
};

static void note_held(struct xqueue *q, void *arg)
{
    struct held_scan *h = arg;
    if (q->device != h->device)
        return;
    uint64_t gate = atomic_load(&xq_st(q)->gate);
    /* A queue held by gates counts while its owner keeps it so (XQ_GATE_DEVICE): another
     * process's decision may close its gate at any time without a wake, and its threads, with
     * everything submitted, may never call again to say so. */
    h->held |= (gate & (XQ_GATE_SUSPENDED | XQ_GATE_THROTTLED | XQ_GATE_DEVICE)) ||
               atomic_load(&q->waiters);
    h->suspended |= (gate & XQ_GATE_SUSPENDED) != 0;
}

struct turn_scan {
    int device;
    bool active;
};

static void note_active(struct xqueue *q, void *arg)
{
    struct turn_scan *t = arg;
    t->active |= q->device == t->device && counts_active(xq_st(q));
}

/* GPUPRIO_POLICY=share: turns are looked at often while a queue of ours on device is active. */
static bool share_turn(int device)
{
    struct turn_scan t = {device, false};
    if (policy == SCHED_POLICY_SHARE) {
        xq_sched_lock();
        xq_foreach_joined(note_active, &t);
        xq_sched_unlock();
    }
    return t.active;
}

static bool device_held(int device, bool *suspended)
{
    struct held_scan h = {.device = device};
    xq_foreach_joined(note_held, &h);
    *suspended = h.suspended;
    return h.held;
}

/* ---- the public calls ---- */

enum sched_policy sched_policy(void)
{
    return policy;
}

int sched_set_stream_priority(struct xqueue *q, int priority)
{
    if (!gp_priority_valid(priority))
        return -EINVAL;
    priority = capped(priority, "gpuprio_stream_set_priority");
    note_given(priority);
    xq_sched_lock();
    set_priority_locked(q, priority, XQ_PRIO_STREAM);
    join_named_locked(q);
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
    priority = capped(priority, "gpuprio_thread_set_priority");
    thread_has_priority = true;
    thread_priority = priority;
    note_given(priority);
    xq_sched_lock();
    xq_foreach(update_owned, &(struct thread_update){gp_tid(), priority});
    decide_locked(XQ_ALL_DEVICES); /* the thread's queues may be on any device */
    xq_sched_unlock();
    return 0;
}

/* The thread's own queues that took its priority go back to what their other sources give. */
static void restore_owned(struct xqueue *q, void *arg)
{
    if (q->owner_tid == *(const uint64_t *)arg && q->priority_source == XQ_PRIO_THREAD)
        set_priority_locked(q, q->base_priority, q->base_source);
}

int sched_clear_thread_priority(void)
{
    if (!thread_has_priority)
        return 0; /* nothing of its own: no queue took it, nothing to decide again */
    thread_has_priority = false;
    uint64_t tid = gp_tid();
    xq_sched_lock();
    xq_foreach(restore_owned, &tid);
    decide_locked(XQ_ALL_DEVICES);
    xq_sched_unlock();
    return 0;
}

int sched_stream_creating(int *priority)
{
    creating_index = atomic_fetch_add(&streams_created, 1);
    int p = GPUPRIO_PRIORITY_NORMAL;
    enum xq_priority_source src = XQ_PRIO_DEFAULT;
    apply_env_sources(creating_index, &p, &src);
    xq_sched_lock(); /* the board's listener sets the requested priority under it */
    apply_thread_sources(true, &p, &src);
    xq_sched_unlock();
    if (src == XQ_PRIO_DEFAULT)
        return -ENOENT;
    *priority = p;
    return 0;
}

void sched_stream_not_created(void)
{
    int index = creating_index;
    creating_index = -1;
    /* The place goes back unless a later creation took the next one meanwhile. */
    if (index >= 0)
        atomic_compare_exchange_strong(&streams_created, &(int){index + 1}, index);
}

int sched_highest_priority(void)
{
    return atomic_load(&highest_given);
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
    const struct xq_state *st = xq_st(q);
    uint64_t gate = atomic_load(&st->gate);
    *out = (struct gpuprio_queue_stats){
        .stream = q->key.handle,
        .thread = q->key.tid,
        .device = q->device,
        .flags = q->flags,
        .stream_priority = q->stream_priority,
        .priority = atomic_load(&st->priority),
        .suspended = (gate & XQ_GATE_SUSPENDED) != 0,
        .in_flight = XQ_GATE_IN_FLIGHT(gate),
        .submitted = atomic_load_explicit(&st->submitted, memory_order_relaxed),
        .completed = atomic_load_explicit(&st->completed, memory_order_relaxed),
        .held_ns = atomic_load_explicit(&st->held_ns, memory_order_relaxed),
        .suspensions = atomic_load_explicit(&st->suspensions, memory_order_relaxed),
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
    sb_reset();
    xq_admission_reset();
}
