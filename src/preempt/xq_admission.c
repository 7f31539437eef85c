/*
 * xq_admission.c - see xq_admission.h.
 *
 * The launch path takes no lock when the queue may submit: one compare-and-swap on the gate
 * reserves a window slot, and the queue is normally already active. Everything that changes
 * decisions (a queue becoming active or idle, a suspension, a wait) happens under one
 * scheduling lock, which is also what waiting threads sleep on; the watcher takes it only to
 * wake threads that wait.
 *
 * The watcher's expiry does not take the lock for its pass over the queues: a queue becoming
 * active must never wait behind it. A queue goes idle by a compare-and-swap on `active`
 * (activation exchanges it the other way, so each change is counted once), and the lock is
 * taken only afterwards, to decide with the queues that did go idle. Its thread can reserve
 * without any lock, so the two sides use the store-then-load pattern: admission reserves, then
 * reads `active`; expiry clears `active`, then reads the gate again and takes it back if a slot
 * was reserved meanwhile. With sequentially consistent atomics one of them always sees the
 * other. Every change of `active` is followed by a decision under the lock, and a decision
 * reads the flags as they are then, so the last one decided on the state that holds.
 */
#include "xq_admission.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "xc_cost.h"
#include "devgate.h"
#include "gp_clock.h"
#include "gp_grow.h"
#include "gp_lockrank.h"
#include "gp_log.h"
#include "xq_watcher.h"

/* A command whose cost nothing predicts yet, in a queue with no history, is taken to cost this
 * share of the budget: until something is learned, the budget admits 4 at a time. */
#define UNKNOWN_COST_SHARE 4

static struct xq_admission_config cfg;
static struct xq_marker_ops marker_ops;
static struct xq_admission_hooks hooks = {.now_ns = gp_now_ns}; /* the rest at configuration */

static pthread_cond_t sched_cv;        /* waits under the scheduling lock (xqueue.h) */
static _Atomic int captures;           /* stream captures in progress */
static _Atomic uint64_t capture_epoch; /* captures begun and ended */
static _Atomic bool exiting;           /* exit began: admit everything */
static _Atomic int total_waiters;      /* threads held anywhere */
static _Atomic int active_queues;      /* lets idle scans be skipped */
static _Atomic int owing_queues;       /* queues that owe a marker (gate_unbacked): scanned too */
/* The watchdog's warnings, once for each reason a thread was held (enum hold). */
static atomic_flag watchdog_warned[2] = {ATOMIC_FLAG_INIT, ATOMIC_FLAG_INIT};
/* Orders the watcher's stream queries against captures beginning and streams ending. */
static pthread_mutex_t query_mu = PTHREAD_MUTEX_INITIALIZER;

static void completed(struct xqueue *q, unsigned n, uint64_t cost_ns);
static uint64_t expire_idle(uint64_t now);
static int stream_idle(struct xqueue *q);

static uint64_t now_ns(void)
{
    return hooks.now_ns();
}

static void init_cv(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&sched_cv, &attr);
    pthread_condattr_destroy(&attr);
}

/* ---- configuration and the scheduler's hooks ---- */

static void no_hook(int device)
{
    (void)device;
}
static void no_joining(struct xqueue *q)
{
    (void)q;
}
static void no_holders_elsewhere(int device, int priority, struct xq_holders *h)
{
    (void)device;
    (void)priority;
    (void)h;
}
static void no_longest(struct xqueue *q, uint64_t ns)
{
    (void)q;
    (void)ns;
}

/* What can hold q back by suspending it (struct xq_holders): the queues of its device above its
 * priority, and at it, except q; this process's here, other processes' from the hook. Those at
 * its priority count only where equal priorities take turns (cfg.peers_hold: share), and only
 * while none above is active (watch_look): under hpf queues of one priority never suspend each
 * other, so their completions are no progress of what holds q; counted, a neighbour at q's
 * priority that its own watchdog lets through now and then held q for as long as it ran
 * (board.watchdog_suspended_neighbour). A lower queue owed its minimum share (share) suspends q
 * for a turn of a few milliseconds, far below the watchdog: not counted. With the scheduling
 * lock held, which keeps priorities still. A queue that goes idle keeps its count, so only a
 * queue joining, leaving or changing priority moves a count without completing anything. */
struct holders_scan {
    const struct xqueue *held;
    int priority;
    struct xq_holders h;
};

void xq_holders_add(struct xq_holders *h, int its, int priority, uint64_t completed, bool active)
{
    if (its > priority) {
        h->higher += completed;
        h->higher_active |= active;
    } else if (its == priority) {
        h->peers += completed;
    }
}

static void add_holder(struct xqueue *q, void *arg)
{
    struct holders_scan *s = arg;
    const struct xq_state *st = xq_st(q);
    if (q == s->held || q->device != s->held->device)
        return;
    /* active as decisions take it: a stalled queue holds nobody back (xqueue.h) */
    xq_holders_add(&s->h, atomic_load(&st->priority), s->priority,
                   atomic_load_explicit(&st->completed, memory_order_relaxed),
                   atomic_load(&st->active) && !(atomic_load(&st->gate) & XQ_GATE_STALLED));
}

static struct xq_holders holders_of(const struct xqueue *q)
{
    struct holders_scan s = {q, atomic_load(&xq_st(q)->priority), {0, 0, false}};
    xq_foreach_joined(add_holder, &s);
    hooks.holders_elsewhere(q->device, s.priority, &s.h);
    return s.h;
}

void xq_admission_configure(const struct xq_admission_config *config,
                            const struct xq_marker_ops *ops, const struct xq_admission_hooks *h)
{
    cfg = *config;
    if (ops)
        marker_ops = *ops;
    hooks = *h;
    if (!hooks.activity_changed)
        hooks.activity_changed = no_hook;
    if (!hooks.joining)
        hooks.joining = no_joining;
    if (!hooks.held)
        hooks.held = no_hook;
    if (!hooks.holders_elsewhere)
        hooks.holders_elsewhere = no_holders_elsewhere;
    if (!hooks.longest)
        hooks.longest = no_longest;
    if (!hooks.now_ns)
        hooks.now_ns = gp_now_ns;
    if (!marker_ops.record)
        cfg.enabled = false;
    xq_sched_timing(cfg.slow_ns != 0);
    init_cv();
    xq_watcher_configure(
        &(struct xq_watcher_config){.poll_ns = cfg.poll_ns, .slow_ns = cfg.slow_ns}, &marker_ops,
        &(struct xq_watcher_ops){.completed = completed,
                                 .longest = hooks.longest,
                                 .expire_idle = expire_idle,
                                 .capturing = xq_capturing,
                                 .stream_idle = stream_idle,
                                 .capture_epoch = xq_capture_epoch,
                                 .at_exit = xq_shutdown});
}

void xq_wake_waiters(void)
{
    if (atomic_load(&total_waiters) == 0)
        return;
    xq_sched_lock();
    pthread_cond_broadcast(&sched_cv);
    xq_sched_unlock();
}

/* ---- the budget: what may be admitted ---- */

/* The GPU time a command of q with cost_key is expected to take (never 0). */
static uint64_t predict_cost(struct xqueue *q, uint64_t cost_key)
{
    uint64_t ns = xc_predict(cost_key);
    if (!ns)
        ns = atomic_load_explicit(&q->cost_mean_ns, memory_order_relaxed);
    if (!ns)
        ns = cfg.budget_ns / UNKNOWN_COST_SHARE;
    return ns == 0 ? 1 : ns > UINT32_MAX ? UINT32_MAX : ns; /* in flight as uint32 */
}

/*
 * Whether gate g lets one more command of the given cost in. The command count and the cost are
 * two words: two threads admitting to one queue at once may both fit where only one does, which
 * overshoots the budget by a command, never the window.
 *
 * What counts against the budget is the work still to run: the in-flight cost less what the
 * oldest command has run already (at most its own cost), so a long command near its end lets
 * the next ones in before it finishes and the pipeline does not run dry. When only time is
 * missing, *retry_at says when the command would fit (0: wait for a completion).
 */
static bool may_admit(struct xqueue *q, uint64_t g, uint64_t cost_ns, uint64_t *retry_at)
{
    *retry_at = 0;
    if (g & XQ_GATE_SUSPENDED)
        return false;
    if (!(g & XQ_GATE_THROTTLED) || XQ_GATE_IN_FLIGHT(g) == 0)
        return true;
    if (XQ_GATE_IN_FLIGHT(g) >= cfg.window)
        return false;
    /* A costless command (an event record, a wait) adds nothing to what a higher-priority
     * command would wait for; with nothing costly in flight, one command goes in even when it
     * alone exceeds the budget, or it could never go in. */
    uint64_t in_flight = atomic_load(&q->cost_in_flight_ns);
    if (!cfg.budget_ns || cost_ns == 0 || in_flight == 0 || in_flight + cost_ns <= cfg.budget_ns)
        return true;
    uint64_t head_cost = atomic_load(&q->head_cost_ns), since = atomic_load(&q->head_since_ns);
    uint64_t now = now_ns(), ran = now > since ? now - since : 0;
    if (head_cost > in_flight)
        head_cost = in_flight; /* read while the watcher moved on: take what is left */
    if (ran > head_cost)
        ran = head_cost;
    uint64_t excess = in_flight + cost_ns - cfg.budget_ns; /* > 0 here */
    if (ran >= excess)
        return true;
    if (excess <= head_cost)
        *retry_at = since + excess;
    return false;
}

/* The gate word as the host sees it: a queue held by gates on the device (XQ_GATE_DEVICE) is not
 * throttled on the host, so its in-flight limit is the runtime's. */
static uint64_t host_view(uint64_t g)
{
    return (g & XQ_GATE_DEVICE) ? g & ~XQ_GATE_THROTTLED : g;
}

/*
 * Level 2: whether a gate goes on the stream before a command of q predicted to cost cost_ns (the
 * ticket's gate, numbered on from the last). Commands go behind the latest gate while their
 * predicted time together stays within the bound, so a closed gate stops the queue after at most
 * that much work; the queue's first costly command always gets one. Two threads submitting to
 * one stream at once may both put a gate where one would do, which costs a gate, never the bound.
 */
static void choose_gate(struct xqueue *q, struct xq_ticket *t, uint64_t cost_ns)
{
    if (!cost_ns || xq_capturing())
        return;
    uint64_t batch = atomic_fetch_add(&q->dgate_batch_ns, cost_ns) + cost_ns;
    if (atomic_load(&q->dgate_placed) != 0 &&
        batch <= atomic_load_explicit(&q->dgate_bound_ns, memory_order_relaxed))
        return;
    atomic_store(&q->dgate_batch_ns, cost_ns);
    t->gate = atomic_fetch_add(&q->dgate_placed, 1) + 1;
}

/*
 * Takes a slot for t's command unless the gate keeps it out (or force). Its cost is predicted
 * and charged only while the queue is throttled, the one state where the budget applies: a
 * queue that is only tracked (nothing above it) pays no prediction and shares no counter with
 * the watcher on its launch path. A command admitted unthrottled counts as costless until it is
 * reached, even if the queue is throttled meanwhile. A queue held by gates is predicted for
 * them, and charged nothing.
 */
static bool reserve(struct xqueue *q, struct xq_ticket *t, bool force, uint64_t *retry_at)
{
    uint64_t g = atomic_load(&xq_st(q)->gate), cost = 0;
    bool predicted = false;
    for (;;) {
        uint64_t h = host_view(g);
        if ((g & (XQ_GATE_THROTTLED | XQ_GATE_DEVICE)) && !predicted && t->cost_key) {
            cost = predict_cost(q, t->cost_key);
            predicted = true;
        }
        uint64_t charge = (h & XQ_GATE_THROTTLED) ? cost : 0;
        if (!force && !may_admit(q, h, charge, retry_at))
            return false;
        if (atomic_compare_exchange_weak(&xq_st(q)->gate, &g, g + 1)) {
            t->cost_ns = charge;
            t->predicted_ns = cost;
            break;
        }
    }
    if (t->cost_ns)
        atomic_fetch_add(&q->cost_in_flight_ns, t->cost_ns);
    if (g & XQ_GATE_DEVICE)
        choose_gate(q, t, cost);
    return true;
}

void xq_gate_failed(struct xqueue *q)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    atomic_store(&q->dgate_off, true);
    atomic_fetch_and(&xq_st(q)->gate, ~XQ_GATE_DEVICE);
    struct dg_line *l = atomic_load(&q->dgate);
    if (l) {
        dg_pin(l);
        dg_mirror(q->dgate_region, l); /* gates already put wait there (mirrored gates) */
    }
    if (!atomic_flag_test_and_set(&warned))
        gp_log(GP_LOG_WARN,
               "the runtime refused a gate on queue %#llx: it is held on the host only "
               "(Level 1) from now on (this is said once)",
               (unsigned long long)q->key.handle);
}

/* ---- active and idle queues ---- */

/* Marks q active; true when it was idle (counted here). */
static bool mark_active(struct xqueue *q)
{
    if (atomic_exchange(&xq_st(q)->active, true))
        return false;
    atomic_fetch_add(&active_queues, 1);
    return true;
}

int xq_active_queues(void)
{
    return atomic_load(&active_queues);
}

/* Marks q idle; true when it was active. */
static bool mark_idle(struct xqueue *q)
{
    uint32_t was = true;
    if (!atomic_compare_exchange_strong(&xq_st(q)->active, &was, false))
        return false;
    atomic_fetch_sub(&active_queues, 1);
    return true;
}

/* With the scheduling lock held. A queue that another process marked stalled (XQ_GATE_STALLED)
 * and that moves again holds others back again from here on. */
static void activate_locked(struct xqueue *q)
{
    /* Read first: activation must not write the gate's cache line for a mark that is rare. */
    bool was_stalled = (atomic_load(&xq_st(q)->gate) & XQ_GATE_STALLED) &&
                       (atomic_fetch_and(&xq_st(q)->gate, ~XQ_GATE_STALLED) & XQ_GATE_STALLED);
    if (mark_active(q) || was_stalled)
        hooks.activity_changed(q->device);
}

/*
 * Why a thread is held on q, and so what it waits for (the watchdog counts only that as
 * progress): suspended, for the queues that hold q back to let it go, which is their work
 * completing (in this process or any other, of any user); else for its own queue's commands in
 * flight (the window or the budget), which only q's own completions free. Another process's work
 * completing says nothing of either: counted, one that never stops would hold a thread that
 * waits on its own stream forever.
 */
enum hold { HELD_SUSPENDED, HELD_BY_OWN_WORK };

static enum hold why_held(const struct xqueue *q)
{
    return (atomic_load(&xq_st(q)->gate) & XQ_GATE_SUSPENDED) ? HELD_SUSPENDED : HELD_BY_OWN_WORK;
}

static uint64_t own_completed(const struct xqueue *q)
{
    return atomic_load_explicit(&xq_st(q)->completed, memory_order_relaxed);
}

/*
 * One wait's watchdog: for each reason, how long the thread has been held for it while what
 * holds it for that reason completed nothing. Time suspended is not the queue's own stillness
 * (its commands may wait behind the higher work on the device), so a thread whose own stream
 * waits on its later write is let through after a period of its being held by that alone, even
 * while a higher queue's bursts suspend it again and again in between; and the suspended count
 * starts afresh with each suspension. Another process suspending q wakes nobody (nor do its
 * completions), so the thread looks every WATCH_STEPS-th of a period, and each step counts for
 * the reason it began with: give or take a step at each change.
 */
#define WATCH_STEPS 8
/* ---- the watchdog ---- */

struct watchdog {
    enum hold why;    /* at the last look */
    uint64_t last_ns; /* the last look */
    uint64_t own_seen, own_still_ns;
    struct xq_holders holders_seen;
    uint64_t holders_still_ns;
    uint64_t holders_looked_ns; /* their completions are added up at most once a step: every
                                   completion of this process wakes every held thread */
};

static void watch_start(struct watchdog *w, const struct xqueue *q, uint64_t now)
{
    w->why = why_held(q);
    w->last_ns = now;
    w->own_seen = own_completed(q);
    w->holders_seen = w->why == HELD_SUSPENDED ? holders_of(q) : (struct xq_holders){0, 0, false};
    w->own_still_ns = w->holders_still_ns = 0;
    w->holders_looked_ns = now;
}

/* A look (scheduling lock held): how long the thread has been held for its present reason while
 * that completed nothing. */
static uint64_t watch_look(struct watchdog *w, const struct xqueue *q, uint64_t now)
{
    uint64_t step = now - w->last_ns;
    w->last_ns = now;
    if (w->why == HELD_SUSPENDED)
        w->holders_still_ns += step;
    else
        w->own_still_ns += step;
    uint64_t own = own_completed(q);
    if (own != w->own_seen) {
        w->own_seen = own;
        w->own_still_ns = 0;
    }
    enum hold why = why_held(q);
    bool suspension_began = why == HELD_SUSPENDED && w->why != HELD_SUSPENDED;
    if (suspension_began ||
        (why == HELD_SUSPENDED && now - w->holders_looked_ns >= cfg.watchdog_ns / WATCH_STEPS)) {
        struct xq_holders h = holders_of(q);
        w->holders_looked_ns = now;
        /* Peers (share) count only while nothing above is active: then the suspension can be a
         * peer's turn. Behind a higher queue, a peer let through by its own watchdog now and
         * then would otherwise hold q for as long as it ran (board.watchdog_suspended_neighbour,
         * its _share variant: still held after 15 s). Both counts are kept up either way, so
         * that what completed while they did not count is no progress once they do. */
        bool peers_count = cfg.peers_hold && !h.higher_active;
        if (suspension_began || h.higher != w->holders_seen.higher ||
            (peers_count && h.peers != w->holders_seen.peers))
            w->holders_still_ns = 0;
        w->holders_seen = h;
    }
    w->why = why;
    return why == HELD_SUSPENDED ? w->holders_still_ns : w->own_still_ns;
}

/* Once per reason: how long the thread waited in all, how long of that nothing that held it
 * completed, and why it was held. */
static void watchdog_warning(const struct xqueue *q, enum hold why, uint64_t waited_ns,
                             uint64_t still_ns)
{
    if (atomic_flag_test_and_set(&watchdog_warned[why]))
        return;
    unsigned long long ms = 1000000, handle = (unsigned long long)q->key.handle;
    if (why == HELD_SUSPENDED)
        gp_log(GP_LOG_WARN,
               "a thread waited %llu ms to submit to queue %#llx, suspended for the queues that "
               "can hold it back on device %d (of higher priority%s), none of which completed any "
               "work for the last %llu ms; letting it through. A process of higher priority is "
               "stopped or hung (gpuprio top then shows its queue stalled), a higher stream waits "
               "for something done later, or one runs a command longer than that "
               "(GPUPRIO_WATCHDOG_MS sets the wait; this is said once)",
               waited_ns / ms, handle, q->device,
               cfg.peers_hold ? ", or of its own while none above was active" : "", still_ns / ms);
    else
        gp_log(GP_LOG_WARN,
               "a thread waited %llu ms to submit to queue %#llx, behind its own queue's commands "
               "in flight (%u of them), none of which was reached in %llu ms of its not being "
               "suspended; letting it through. The application makes the stream wait for "
               "something it does later (a value or an event that this thread sets after this "
               "call), or a command runs longer than that (GPUPRIO_WATCHDOG_MS sets the wait; "
               "this is said once)",
               waited_ns / ms, handle, (unsigned)XQ_GATE_IN_FLIGHT(atomic_load(&xq_st(q)->gate)),
               still_ns / ms);
}

/* ---- admission ---- */

static void wait_for_admission(struct xqueue *q, struct xq_ticket *t)
{
    uint64_t start = now_ns(), retry_at;
    xq_sched_lock();
    atomic_fetch_add(&q->waiters, 1);
    atomic_fetch_add(&total_waiters, 1);
    activate_locked(q);
    struct watchdog w;
    watch_start(&w, q, start);
    for (;;) {
        if (reserve(q, t, false, &retry_at))
            break;
        /* Exit, or a capture began (markers are not followed then): let it go. */
        if (atomic_load(&exiting) || atomic_load(&captures)) {
            reserve(q, t, true, &retry_at);
            break;
        }
        uint64_t now = now_ns(), still = watch_look(&w, q, now);
        if (still >= cfg.watchdog_ns) {
            watchdog_warning(q, w.why, now - start, still);
            reserve(q, t, true, &retry_at);
            break;
        }
        uint64_t step = cfg.watchdog_ns / WATCH_STEPS, left = cfg.watchdog_ns - still;
        uint64_t deadline = now + (left < step || step == 0 ? left : step);
        if (retry_at && retry_at < deadline)
            deadline = retry_at; /* the oldest command will have run long enough by then */
        xq_sched_wait(&sched_cv, deadline);
    }
    atomic_fetch_sub(&q->waiters, 1);
    atomic_fetch_sub(&total_waiters, 1);
    xq_sched_unlock();
    atomic_fetch_add_explicit(&xq_st(q)->held_ns, now_ns() - start, memory_order_relaxed);
}

static void admitted(struct xq_ticket *t)
{
    t->reserved = true;
    if (t->timed_from_ns)
        t->admitted_ns = now_ns();
}

/*
 * Makes q active, and first has it join scheduling if it never ran anything: it gets its board
 * slot, and its device is decided on once with it active. A queue that the decision leaves
 * unscheduled (one priority on its device) changes nobody's decision by being active, so it is
 * made idle again at once, and the watcher is not needed for it.
 */
static void activate(struct xqueue *q, struct xq_ticket *t)
{
    struct rusage before;
    if (t->timed_from_ns)
        getrusage(RUSAGE_THREAD, &before);
    xq_sched_lock_activating(&t->lock);
    if (t->timed_from_ns)
        t->lock_wait_ns = now_ns() - t->timed_from_ns;
    bool joining = !atomic_load(&q->joined);
    if (joining) {
        hooks.joining(q);
        if (!xq_join(q)) {
            xq_sched_unlock();
            return; /* out of memory: it stays out of scheduling */
        }
    }
    uint64_t deciding = t->timed_from_ns ? now_ns() : 0;
    activate_locked(q);
    if (deciding)
        t->decide_ns = now_ns() - deciding;
    if (joining && !(atomic_load(&xq_st(q)->gate) & XQ_GATE_DECISION) && !atomic_load(&q->waiters))
        mark_idle(q);
    xq_sched_unlock();
    if (t->timed_from_ns) {
        t->activation_ns = now_ns() - t->timed_from_ns;
        struct rusage after;
        getrusage(RUSAGE_THREAD, &after);
        t->switches = (after.ru_nvcsw - before.ru_nvcsw) + (after.ru_nivcsw - before.ru_nivcsw);
        t->faults = (after.ru_minflt - before.ru_minflt) + (after.ru_majflt - before.ru_majflt);
    }
}

bool xq_try_admit(struct xqueue *q, struct xq_ticket *t, unsigned entry, uint64_t what,
                  uint64_t *retry_at)
{
    *retry_at = 0;
    t->q = q;
    t->reserved = false;
    t->gate = 0;
    t->timed_from_ns = 0;
    if (!q || !cfg.enabled || atomic_load(&captures) || atomic_load(&exiting))
        return true;
    bool joined = atomic_load(&q->joined);
    if (joined && !(atomic_load(&xq_st(q)->gate) & XQ_GATE_DECISION))
        return true; /* one priority on the device: nothing to schedule, nothing to follow */
    uint64_t cost_key = xc_command_key(entry, what);
    t->cost_key = cost_key == XC_NO_GPU_TIME ? 0 : cost_key; /* 0: costless, nothing learned */
    t->cost_ns = t->predicted_ns = 0;
    t->activation_ns = t->lock_wait_ns = t->decide_ns = 0;
    if (cfg.slow_ns)
        t->timed_from_ns = now_ns();
    if (!joined) {
        activate(q, t);
        if (!(atomic_load(&xq_st(q)->gate) & XQ_GATE_DECISION)) {
            t->timed_from_ns = 0;
            return true;
        }
    }
    if (!reserve(q, t, false, retry_at))
        return false;
    if (!atomic_load(&xq_st(q)->active) || (atomic_load(&xq_st(q)->gate) & XQ_GATE_STALLED))
        activate(q, t);
    admitted(t);
    return true;
}

void xq_admit(struct xqueue *q, struct xq_ticket *t, unsigned entry, uint64_t what)
{
    uint64_t retry_at;
    if (xq_try_admit(q, t, entry, what, &retry_at))
        return;
    hooks.held(q->device);
    wait_for_admission(q, t);
    admitted(t);
}

/* ---- submission: markers and gates ---- */

/* Gives back n slots of q, of commands predicted to cost cost_ns; without any lock held. */
static void free_slots(struct xqueue *q, unsigned n, uint64_t cost_ns, uint64_t now)
{
    if (cost_ns)
        atomic_fetch_sub(&q->cost_in_flight_ns, cost_ns);
    uint64_t before = atomic_fetch_sub(&xq_st(q)->gate, n);
    if (XQ_GATE_IN_FLIGHT(before) == n)
        atomic_store(&q->last_done_ns, now);
    if (before & XQ_GATE_STALLED) { /* it moved: it holds others back again */
        xq_sched_lock();
        activate_locked(q);
        xq_sched_unlock();
    }
}

/* Room for one more marker (q->mu held); false when memory ran out. */
static bool ring_reserve(struct xq_marker_ring *r)
{
    if (r->count < r->cap)
        return true;
    size_t cap = r->cap ? r->cap * 2 : 8;
    struct xq_in_flight *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < r->count; i++)
        slots[i] = r->slots[(r->head + i) % r->cap];
    free(r->slots);
    r->slots = slots;
    r->cap = cap;
    r->head = 0;
    return true;
}

/* GPUPRIO_LOG=debug: where a call that took the application's thread long went. */
static void report_if_slow(const struct xq_ticket *t, uint64_t returned_ns)
{
    uint64_t now = now_ns(), us = 1000;
    if (now - t->timed_from_ns < cfg.slow_ns)
        return;
    char activating[256] = "";
    if (t->activation_ns)
        snprintf(
            activating, sizeof activating,
            "; activating: %llu us deciding, %llu us waiting for the lock (held by %s, "
            "for %llu us before; handed over in %llu us, %s), %ld context switches, %ld "
            "page faults",
            (unsigned long long)(t->decide_ns / us), (unsigned long long)(t->lock.wait_ns / us),
            t->lock.holder ? t->lock.holder : "nobody", (unsigned long long)(t->lock.held_ns / us),
            (unsigned long long)(t->lock.handover_ns / us), t->lock.slept ? "slept" : "spun",
            t->switches, t->faults);
    gp_log(GP_LOG_DEBUG,
           "a call on queue %#llx took %llu us: %llu admitting it (%llu of them activating the "
           "queue, %llu of those waiting for the scheduling lock), %llu in the runtime, %llu "
           "recording and handing over its marker%s",
           (unsigned long long)t->q->key.handle,
           (unsigned long long)((now - t->timed_from_ns) / us),
           (unsigned long long)((t->admitted_ns - t->timed_from_ns) / us),
           (unsigned long long)(t->activation_ns / us), (unsigned long long)(t->lock_wait_ns / us),
           (unsigned long long)((returned_ns - t->admitted_ns) / us),
           (unsigned long long)((now - returned_ns) / us), activating);
}

static void submitted(struct xq_ticket *t, bool ok);

void xq_submitted(struct xq_ticket *t, bool ok)
{
    uint64_t returned = t->reserved && t->timed_from_ns ? now_ns() : 0;
    submitted(t, ok);
    if (returned)
        report_if_slow(t, returned);
}

/* Sparse markers (the top of xq_admission.h): whether t's command needs a marker of its own. One
 * predicted to take a quarter of the gate bound or more gets one anyway: the host cost of a
 * marker matters only next to short commands, and a long one's cost is then learned alone. */
static bool needs_marker(const struct xqueue *q, const struct xq_ticket *t)
{
    uint64_t g = atomic_load(&xq_st(q)->gate);
    return t->gate || !marker_ops.stream_idle || q->key.device >= 0 || q->key.tid ||
           !(g & XQ_GATE_DEVICE) || (g & XQ_GATE_SUSPENDED) ||
           t->predicted_ns >= atomic_load_explicit(&q->dgate_bound_ns, memory_order_relaxed) / 4;
}

/* Puts t's command on q's ring for the watcher (q->submit_mu held), behind the marker recorded
 * for it or none (sparse); false when there is no memory for it. *start_watching: the watcher
 * must be told of q. */
static bool follow_marker(struct xqueue *q, const struct xq_ticket *t, void *marker,
                          bool *start_watching)
{
    xq_lock_markers(q);
    bool room = ring_reserve(&q->markers);
    if (room) {
        struct xq_marker_ring *r = &q->markers;
        uint64_t now = now_ns();
        r->slots[(r->head + r->count++) % r->cap] = (struct xq_in_flight){
            marker,
            t->cost_key,
            now,
            (uint32_t)t->cost_ns,
            t->predicted_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)t->predicted_ns,
            (uint32_t)atomic_load_explicit(&xq_st(q)->suspensions, memory_order_relaxed)};
        if (marker) {
            r->marked = r->count;
            if (atomic_exchange(&q->gate_unbacked, false)) /* behind every gate put so far */
                atomic_fetch_sub(&owing_queues, 1);
        }
        if (r->count == 1)
            xq_head_changed(q, now);
        *start_watching = !q->watched;
        q->watched = true;
    }
    xq_unlock_markers(q);
    return room;
}

/*
 * A gate was put before t's command, and the command will not be followed: the runtime refused
 * it, or a capture began meanwhile (the command may be in the graph, not behind the gate). A
 * marker recorded now stands behind the gate instead, where the platform can record one without
 * touching the refusal's error state and no capture can take it (the capture lock); otherwise
 * the queue owes a marker and is not released until one follows (xqueue.h's gate_unbacked).
 * With q->submit_mu held. Whether t's slot is now followed.
 */
static bool back_gate(struct xqueue *q, const struct xq_ticket *t, bool *start_watching)
{
    void *marker = NULL;
    if (marker_ops.record_behind_refused) {
        gp_mutex_lock(&query_mu, GP_RANK_STREAM_QUERY);
        if (!atomic_load(&captures) && !q->closing && !q->closed)
            marker = marker_ops.record_behind_refused(q);
        gp_mutex_unlock(&query_mu, GP_RANK_STREAM_QUERY);
    }
    /* Followed as a command of no key: what the refused command costs is not learned from the
     * time the marker waited behind the work before it. */
    struct xq_ticket keyless = *t;
    keyless.cost_key = 0;
    keyless.predicted_ns = 0;
    if (marker && follow_marker(q, &keyless, marker, start_watching))
        return true;
    if (marker)
        marker_ops.release(q, marker);
    if (!atomic_exchange(&q->gate_unbacked, true))
        atomic_fetch_add(&owing_queues, 1);
    return false;
}

static void submitted(struct xq_ticket *t, bool ok)
{
    struct xqueue *q = t->q;
    if (ok && q)
        atomic_fetch_add_explicit(&xq_st(q)->submitted, 1, memory_order_relaxed);
    if (!t->reserved)
        return;
    bool follow = ok && !atomic_load(&captures) && (atomic_load(&xq_st(q)->gate) & XQ_GATE_TRACKED);
    if (follow || t->gate) {
        /*
         * Recorded and queued under the submitters' lock, so that the ring has the markers in
         * their order on the stream, but not under the ring's lock: recording calls the runtime
         * (it may create an event), and the watcher takes the ring's lock for every queue it
         * follows.
         */
        bool start_watching = false, followed = false;
        void *marker = NULL;
        xq_lock_submit(q);
        if (!follow) {
            followed = back_gate(q, t, &start_watching);
        } else if (!needs_marker(q, t) || (marker = marker_ops.record(q)) != NULL) {
            followed = follow_marker(q, t, marker, &start_watching);
            if (!followed && marker)
                marker_ops.release(q, marker);
        }
        xq_unlock_submit(q);
        if (start_watching)
            xq_watch(q);
        if (followed)
            return;
    }
    /* Nothing to follow: the command no longer holds the window. */
    free_slots(q, 1, t->cost_ns, now_ns());
    xq_wake_waiters();
    xq_watch(NULL); /* the watcher ends the queue's grace window */
}

/* The watcher saw n markers of q reached, of commands charged cost_ns. Counted before the slots
 * are freed: whoever sees the queue drained (gpuprio_stream_drain) sees its stats settled. */
static void completed(struct xqueue *q, unsigned n, uint64_t cost_ns)
{
    atomic_fetch_add_explicit(&xq_st(q)->completed, n, memory_order_relaxed);
    free_slots(q, n, cost_ns, now_ns());
    xq_wake_waiters();
}

/* ---- completions and idle queues ---- */

struct expire_scan {
    uint64_t now, next;
    bool changed;
    int device; /* the device of the queues that went idle, or XQ_ALL_DEVICES */
};

/* Retired queues (their streams gone) that expiry made idle, released after its pass; the
 * watcher thread's own. One that cannot be noted (no memory) stays joined, idle, until the
 * process ends. */
static struct {
    struct xqueue **q;
    size_t n, cap;
} gone_idle;

/*
 * A retired queue that owes a marker (xqueue.h's gate_unbacked) can get none any more: its stream
 * is gone, or its thread ended. Once its work before that gate is all reached, its stream stands
 * at the gate, which a device compares with the line continuously; once the line has been seen
 * open at looks DEBT_OPEN_NS apart with no suspension between them, the stream passed it. The
 * debt is then settled and the queue released like any, so that threads that come and go keep
 * no board slot for good. The watcher thread's own.
 */
#define DEBT_OPEN_NS 1000000000ull
static void settle_debt(struct xqueue *q, struct expire_scan *scan)
{
    xq_lock_markers(q);
    bool at_gate = q->retired && q->markers.count == 0;
    xq_unlock_markers(q);
    if (!at_gate)
        return;
    struct dg_line *line = atomic_load(&q->dgate);
    uint32_t suspensions = (uint32_t)atomic_load(&xq_st(q)->suspensions);
    bool open = !line || atomic_load(&line->word) >= DG_OPEN; /* open or pinned */
    if (!open || !q->debt_open_since_ns || q->debt_suspensions != suspensions) {
        q->debt_open_since_ns = open ? scan->now : 0;
        q->debt_suspensions = suspensions;
    } else if (scan->now - q->debt_open_since_ns >= DEBT_OPEN_NS) {
        if (atomic_exchange(&q->gate_unbacked, false))
            atomic_fetch_sub(&owing_queues, 1);
        struct xqueue **l = gp_grow(gone_idle.q, &gone_idle.cap, gone_idle.n, sizeof *l, 16);
        if (l) {
            gone_idle.q = l;
            gone_idle.q[gone_idle.n++] = q;
        }
        return;
    }
    uint64_t due = (q->debt_open_since_ns ? q->debt_open_since_ns : scan->now) + DEBT_OPEN_NS;
    if (!scan->next || due < scan->next)
        scan->next = due;
}

/* Without the scheduling lock (see the top of the file). */
static void expire_one(struct xqueue *q, void *arg)
{
    struct expire_scan *scan = arg;
    if (atomic_load(&q->gate_unbacked))
        settle_debt(q, scan);
    if (!atomic_load(&xq_st(q)->active) || atomic_load(&q->waiters) ||
        XQ_GATE_IN_FLIGHT(atomic_load(&xq_st(q)->gate)))
        return;
    uint64_t end = atomic_load(&q->last_done_ns) + cfg.grace_ns;
    if (end > scan->now) {
        if (!scan->next || end < scan->next)
            scan->next = end;
        return;
    }
    if (!mark_idle(q))
        return; /* made idle meanwhile by activation's own undo, which decided */
    /* Reserved meanwhile: still active. Its thread may have made it so again already, and
     * decided; if not, a decision taken since may have seen it idle, so it is decided again. */
    if ((XQ_GATE_IN_FLIGHT(atomic_load(&xq_st(q)->gate)) || atomic_load(&q->waiters)) &&
        !mark_active(q))
        return;
    scan->device = !scan->changed || scan->device == q->device ? q->device : XQ_ALL_DEVICES;
    scan->changed = true;
    xq_lock_markers(q);
    bool retired = q->retired;
    xq_unlock_markers(q);
    struct xqueue **l =
        retired ? gp_grow(gone_idle.q, &gone_idle.cap, gone_idle.n, sizeof *l, 16) : NULL;
    if (l) {
        gone_idle.q = l;
        gone_idle.q[gone_idle.n++] = q;
    }
}

/* For the watcher: queues idle for the grace window become inactive; returns when the next
 * grace window ends (0: none pending). The pass takes only the registry's read lock; the
 * scheduling lock is taken after it, and only when some queue did go idle. */
static uint64_t expire_idle(uint64_t now)
{
    if (!atomic_load(&active_queues) && !atomic_load(&owing_queues))
        return 0;
    struct expire_scan scan = {.now = now};
    xq_foreach_joined(expire_one, &scan);
    if (scan.changed) {
        xq_sched_lock();
        hooks.activity_changed(scan.device);
        xq_sched_unlock();
    }
    /* Decided on idle first: what a retired queue held back is let go before it leaves. */
    for (size_t i = 0; i < gone_idle.n; i++)
        xq_release_if_done(gone_idle.q[i]);
    gone_idle.n = 0;
    return scan.next;
}

/* ---- decisions, draining, capture, streams closing ---- */

uint64_t xq_state_set_decision(struct xq_state *st, uint64_t decision)
{
    uint64_t old = atomic_load(&st->gate) & XQ_GATE_DECISION;
    if (old == decision)
        return old;
    /* Counted before the bit is set: whoever sees the queue suspended sees it counted too, so
     * its owner, saying each suspension (scheduler.c's say_switches), reads the gate first and
     * then the count, and never says one twice. */
    if ((decision & XQ_GATE_SUSPENDED) && !(old & XQ_GATE_SUSPENDED))
        atomic_fetch_add(&st->suspensions, 1);
    atomic_fetch_or(&st->gate, decision & ~old);
    atomic_fetch_and(&st->gate, ~(old & ~decision));
    return old;
}

uint64_t xq_set_decision(struct xqueue *q, uint64_t decision)
{
    uint64_t old = xq_state_set_decision(xq_st(q), decision);
    if (old != decision && atomic_load(&q->waiters))
        pthread_cond_broadcast(&sched_cv);
    return old;
}

int xq_drain(struct xqueue *q, uint64_t timeout_ns)
{
    uint64_t deadline = now_ns() + timeout_ns;
    int rc = 0;
    xq_sched_lock();
    atomic_fetch_add(&total_waiters, 1); /* so that the watcher wakes us */
    while (XQ_GATE_IN_FLIGHT(atomic_load(&xq_st(q)->gate))) {
        if (now_ns() >= deadline) {
            rc = -ETIMEDOUT;
            break;
        }
        xq_sched_wait(&sched_cv, deadline);
    }
    atomic_fetch_sub(&total_waiters, 1);
    xq_sched_unlock();
    return rc;
}

void xq_capture_beginning(void)
{
    gp_mutex_lock(&query_mu, GP_RANK_STREAM_QUERY);
}

void xq_capture_begun(bool begun)
{
    if (begun) {
        atomic_fetch_add(&captures, 1);
        atomic_fetch_add(&capture_epoch, 1);
    }
    gp_mutex_unlock(&query_mu, GP_RANK_STREAM_QUERY);
    if (begun)
        xq_wake_waiters(); /* threads held now are let go: markers are not followed meanwhile */
}

void xq_stream_closing(struct xqueue *q)
{
    if (!q)
        return;
    gp_mutex_lock(&query_mu, GP_RANK_STREAM_QUERY);
    q->closing = true;
    gp_mutex_unlock(&query_mu, GP_RANK_STREAM_QUERY);
}

void xq_stream_closed(struct xqueue *q, bool destroyed)
{
    if (!q)
        return;
    gp_mutex_lock(&query_mu, GP_RANK_STREAM_QUERY);
    q->closing = false;
    q->closed = destroyed;
    gp_mutex_unlock(&query_mu, GP_RANK_STREAM_QUERY);
}

/* For the watcher (xq_watcher.h). While its destroy is under way a stream is neither queried nor
 * taken for idle: the destroy may fail, and the stream then runs on with its commands. */
static int stream_idle(struct xqueue *q)
{
    gp_mutex_lock(&query_mu, GP_RANK_STREAM_QUERY);
    int r = q->closed ? 1 : q->closing || atomic_load(&captures) ? 0 : marker_ops.stream_idle(q);
    gp_mutex_unlock(&query_mu, GP_RANK_STREAM_QUERY);
    return r;
}

void xq_capture_end(void)
{
    atomic_fetch_sub(&captures, 1);
    atomic_fetch_add(&capture_epoch, 1);
}

bool xq_capturing(void)
{
    return atomic_load(&captures) > 0;
}

uint64_t xq_capture_epoch(void)
{
    return atomic_load(&capture_epoch);
}

/* ---- shutdown and the forked child ---- */

void xq_shutdown(void)
{
    if (atomic_exchange(&exiting, true))
        return;
    xq_sched_lock();
    pthread_cond_broadcast(&sched_cv);
    xq_sched_unlock();
    xq_watcher_stop();
}

void xq_admission_reset(void)
{
    init_cv();
    pthread_mutex_init(&query_mu, NULL); /* a parent's thread may have held it at fork */
    atomic_store(&captures, 0);
    atomic_store(&total_waiters, 0);
    atomic_store(&active_queues, 0);
    atomic_store(&owing_queues, 0);
    gone_idle.n = 0;
    xq_watcher_reset();
}
