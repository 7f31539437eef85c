/*
 * admission_test.c - admission (src/preempt/xq_admission.c) on its own: a clock the test sets,
 * markers the test reaches, and a watcher the test plays (the watcher's calls below stand in for
 * xq_watcher.c and hand the test what admission gives the watcher). So the budget's arithmetic,
 * the window, decisions, markers, completions and the grace window are checked to the
 * nanosecond, without threads or timing.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xq_admission.h"
#include "check.h"
#include "xc_cost.h"
#include "devgate.h"
#include "xq_watcher.h"

#define US 1000u
#define BUDGET (500 * US)
#define WINDOW 16u
#define GRACE (150 * US)

/* ---- the test's clock, markers and watcher ---- */

static uint64_t fake_now = 1000000000u;
static uint64_t clock_now(void)
{
    return fake_now;
}

static bool record_fails;
static unsigned recorded, released;
static void *record(const struct xqueue *q)
{
    (void)q;
    return record_fails ? NULL : (void *)(uintptr_t)++recorded;
}
static int query(void *marker)
{
    (void)marker;
    return 0; /* the test reaches markers itself (reach) */
}
static void release(const struct xqueue *q, void *marker)
{
    (void)q;
    (void)marker;
    released++;
}

/* Behind a refused command: a marker where the test lets the platform record one. */
static bool refused_recordable;
static unsigned recorded_behind_refused;
static void *record_behind_refused(const struct xqueue *q)
{
    (void)q;
    if (!refused_recordable)
        return NULL;
    recorded_behind_refused++;
    return (void *)(uintptr_t)++recorded;
}

static unsigned idle_queries;
static int stream_idle(const struct xqueue *q)
{
    (void)q;
    idle_queries++;
    return 0; /* still running */
}

static struct xq_watcher_ops watcher;
static unsigned watched;
void xq_watcher_configure(const struct xq_watcher_config *config,
                          const struct xq_marker_ops *markers, const struct xq_watcher_ops *ops)
{
    (void)config;
    (void)markers;
    watcher = *ops;
}
void xq_watcher_reset(void) {}
void xq_watch(struct xqueue *q)
{
    watched += q != NULL;
}
void xq_watcher_stop(void) {}

static unsigned activity_changes;
static int activity_device;
static void activity_changed(int device)
{
    activity_changes++;
    activity_device = device;
}

/* What the watcher does when it sees q's n oldest markers reached now. */
static void reach(struct xqueue *q, unsigned n)
{
    uint64_t cost = 0;
    for (unsigned i = 0; i < n; i++) {
        xq_lock_markers(q);
        struct xq_marker_ring *r = &q->markers;
        cost += r->slots[r->head].cost_ns;
        r->head = (r->head + 1) % r->cap;
        r->count--;
        xq_head_changed(q, fake_now);
        xq_unlock_markers(q);
    }
    watcher.completed(q, n, cost);
}

/* ---- helpers ---- */

static struct xqueue *new_queue(uintptr_t handle, uint64_t decision)
{
    struct xqueue *q = xq_create(&(struct xq_key){handle, -1, 0}, &(struct xq_stream_props){0}, 1);
    xq_sched_lock();
    xq_set_decision(q, decision);
    xq_sched_unlock();
    return q;
}

static uint64_t in_flight(const struct xqueue *q)
{
    return XQ_GATE_IN_FLIGHT(atomic_load(&xq_st(q)->gate));
}

/* Admits and submits one command of cost key `what` on q if it may go now. */
static bool submit(struct xqueue *q, uint64_t what, uint64_t *retry_at)
{
    struct xq_ticket t;
    if (!xq_try_admit(q, &t, 7, what, retry_at))
        return false;
    xq_submitted(&t, true);
    return true;
}

/* ---- cases ---- */

/* Nothing known of a command: it costs a quarter of the budget, so four go in at once. The
 * fifth fits once the oldest has run for the excess, and not a nanosecond before. */
static void unknown_costs(void)
{
    struct xqueue *q = new_queue(0x100, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    uint64_t retry_at = 1, t0 = fake_now;
    for (int i = 0; i < 4; i++)
        CHECK(submit(q, 1, &retry_at));
    CHECK_INT(in_flight(q), 4);
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), BUDGET);
    CHECK(!submit(q, 1, &retry_at));
    CHECK_INT(retry_at, t0 + BUDGET / 4);
    fake_now = t0 + BUDGET / 4 - 1;
    CHECK(!submit(q, 1, &retry_at));
    fake_now = t0 + BUDGET / 4;
    CHECK(submit(q, 1, &retry_at));
    CHECK_INT(in_flight(q), 5);

    /* The oldest reached: its cost leaves the budget, and the next head counts from now. */
    fake_now += 10 * US;
    reach(q, 1);
    CHECK_INT(in_flight(q), 4);
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), BUDGET);
    CHECK_INT(atomic_load(&q->head_since_ns), fake_now);
    CHECK(!submit(q, 1, &retry_at));
    CHECK_INT(retry_at, fake_now + BUDGET / 4);
    reach(q, 4);
    CHECK_INT(in_flight(q), 0);
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), 0);
}

/* A learned cost is what is charged. One command too big for the budget still goes in when
 * nothing costly is in flight, or it never could. */
static void learned_costs(void)
{
    struct xqueue *q = new_queue(0x200, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    uint64_t key = xc_command_key(7, 42), retry_at;
    xc_learn(&(struct xc_sample){key, 0}, 1, 300 * US);
    CHECK_INT(xc_predict(key), 300 * US);
    CHECK(submit(q, 42, &retry_at));
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), 300 * US);
    CHECK(!submit(q, 42, &retry_at)); /* 600 > 500 */
    CHECK_INT(retry_at, fake_now + 100 * US);
    reach(q, 1);

    uint64_t huge = xc_command_key(7, 43);
    xc_learn(&(struct xc_sample){huge, 0}, 1, 2 * BUDGET);
    CHECK(submit(q, 43, &retry_at));
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), 2 * BUDGET);
    /* It runs longer than the budget: the next one waits for the time it exceeds by. */
    CHECK(!submit(q, 42, &retry_at));
    CHECK_INT(retry_at, fake_now + 2 * BUDGET + 300 * US - BUDGET);
    reach(q, 1);
}

/* Commands that occupy no engine cost nothing and always fit, up to the window: the window is
 * the ceiling of what is in flight, whatever the budget says. */
static void window_ceiling(void)
{
    struct xqueue *q = new_queue(0x300, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    uint64_t retry_at;
    for (unsigned i = 0; i < WINDOW; i++)
        CHECK(submit(q, XC_NO_GPU_TIME, &retry_at));
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), 0);
    CHECK(!submit(q, XC_NO_GPU_TIME, &retry_at));
    CHECK_INT(retry_at, 0); /* only a completion lets it in */
    reach(q, 1);
    CHECK(submit(q, XC_NO_GPU_TIME, &retry_at));
    reach(q, WINDOW);
}

/* Decisions: suspended admits nothing; tracked alone admits all and charges nothing; not
 * scheduled at all records no marker and reserves nothing. */
static void decisions(void)
{
    uint64_t retry_at;
    struct xqueue *q = new_queue(0x400, XQ_GATE_SUSPENDED | XQ_GATE_TRACKED);
    CHECK(!submit(q, 1, &retry_at));
    CHECK_INT(retry_at, 0);
    CHECK_INT(in_flight(q), 0);

    xq_sched_lock();
    xq_set_decision(q, XQ_GATE_TRACKED);
    xq_sched_unlock();
    for (unsigned i = 0; i < 2 * WINDOW; i++)
        CHECK(submit(q, 1, &retry_at));
    CHECK_INT(in_flight(q), 2 * WINDOW);
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), 0);
    reach(q, 2 * WINDOW);

    xq_sched_lock();
    xq_set_decision(q, 0);
    xq_sched_unlock();
    unsigned before = recorded;
    struct xq_ticket t;
    CHECK(xq_try_admit(q, &t, 7, 1, &retry_at));
    CHECK(!t.reserved);
    xq_submitted(&t, true);
    CHECK_INT(recorded, before);
    CHECK_INT(in_flight(q), 0);
    CHECK_INT(atomic_load(&xq_st(q)->submitted), 2 * WINDOW + 1);
}

/* A command whose marker cannot be recorded counts as reached at once; a failed call is not
 * counted as submitted and holds nothing. */
static void unfollowed(void)
{
    struct xqueue *q = new_queue(0x500, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    uint64_t retry_at;
    record_fails = true;
    CHECK(submit(q, 1, &retry_at));
    record_fails = false;
    CHECK_INT(in_flight(q), 0);
    CHECK_INT(atomic_load(&q->cost_in_flight_ns), 0);
    struct xq_ticket t;
    CHECK(xq_try_admit(q, &t, 7, 1, &retry_at));
    xq_submitted(&t, false);
    CHECK_INT(in_flight(q), 0);
    CHECK_INT(atomic_load(&xq_st(q)->submitted), 1);
}

/* A queue becomes active on its first admitted command (asking for a decision on its device)
 * and idle once it has been empty for the grace window, not a nanosecond sooner. */
struct expiry_call {
    uint64_t now, next;
};

static void *call_expiry(void *arg)
{
    struct expiry_call *c = arg;
    c->next = watcher.expire_idle(c->now);
    return NULL;
}

/* The watcher's expiry at `now` while another thread holds the scheduling lock: a pass that
 * makes no queue idle must finish without it (a queue becoming active never waits behind the
 * pass). Returns what expiry returned, or 1 when it did not finish within 10 s. */
static uint64_t expire_beside_holder(uint64_t now)
{
    struct expiry_call c = {.now = now, .next = 1};
    pthread_t t;
    xq_sched_lock();
    CHECK(pthread_create(&t, NULL, call_expiry, &c) == 0);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    bool finished = pthread_timedjoin_np(t, NULL, &deadline) == 0;
    xq_sched_unlock();
    if (!finished)
        pthread_join(t, NULL);
    return finished ? c.next : 1;
}

static void activity(void)
{
    fake_now += 10 * GRACE; /* the queues of the cases before go idle first */
    watcher.expire_idle(fake_now);
    struct xqueue *q =
        xq_create(&(struct xq_key){0x600, -1, 0}, &(struct xq_stream_props){.device = 3}, 1);
    xq_sched_lock();
    xq_set_decision(q, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    xq_sched_unlock();
    unsigned changes = activity_changes;
    uint64_t retry_at;
    CHECK(submit(q, 1, &retry_at));
    CHECK(atomic_load(&xq_st(q)->active));
    CHECK_INT(activity_changes, changes + 1);
    CHECK_INT(activity_device, 3);
    CHECK(submit(q, 1, &retry_at)); /* already active: no decision */
    CHECK_INT(activity_changes, changes + 1);

    fake_now += 50 * US;
    uint64_t done = fake_now;
    reach(q, 2);
    CHECK_INT(expire_beside_holder(done + GRACE - 1), done + GRACE);
    CHECK(atomic_load(&xq_st(q)->active));
    CHECK_INT(watcher.expire_idle(done + GRACE), 0);
    CHECK(!atomic_load(&xq_st(q)->active));
    CHECK_INT(activity_changes, changes + 2);
    CHECK_INT(activity_device, 3);
}

/* A stream whose destroy is under way is neither queried nor taken for idle (the destroy may
 * fail); after a failed destroy it is queried as before; destroyed, it is idle without a query. */
static void closing(void)
{
    struct xqueue *q = new_queue(0x700, XQ_GATE_TRACKED);
    unsigned queries = idle_queries;
    xq_stream_closing(q);
    CHECK_INT(watcher.stream_idle(q), 0);
    CHECK_INT(idle_queries, queries);
    xq_stream_closed(q, false);
    CHECK_INT(watcher.stream_idle(q), 0);
    CHECK_INT(idle_queries, queries + 1);
    xq_stream_closing(q);
    xq_stream_closed(q, true);
    CHECK_INT(watcher.stream_idle(q), 1);
    CHECK_INT(idle_queries, queries + 1);
    xq_destroy(&(struct xq_key){0x700, -1, 0});
}

static unsigned releases;
static void on_released(struct xqueue *q)
{
    (void)q;
    releases++;
}

/* A queue whose stream is destroyed with work in flight stays in scheduling until its work is
 * reached and its grace window ends; then it goes idle like any queue (counted: the watcher's
 * expiry skips its pass while nothing is active, and its device is decided on again) and only
 * then is released. Before, it left the joined queues at once and was never made idle. */
static void retired(void)
{
    xq_set_hooks(&(struct xq_hooks){.released = on_released});
    fake_now += 10 * GRACE;
    watcher.expire_idle(fake_now);
    int active = xq_active_queues();
    struct xqueue *q =
        xq_create(&(struct xq_key){0x800, -1, 0}, &(struct xq_stream_props){.device = 5}, 1);
    xq_sched_lock();
    xq_set_decision(q, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    xq_sched_unlock();
    uint64_t retry_at;
    CHECK(submit(q, 1, &retry_at));
    CHECK(submit(q, 1, &retry_at));
    CHECK_INT(xq_active_queues(), active + 1);
    xq_destroy(&(struct xq_key){0x800, -1, 0});
    CHECK_INT(releases, 0); /* its work is in flight */
    fake_now += 50 * US;
    uint64_t done = fake_now;
    reach(q, 2);
    xq_lock_markers(q); /* the watcher's prune: drained, off its list */
    q->watched = false;
    xq_unlock_markers(q);
    CHECK(!xq_release_if_done(q)); /* still active, within its grace window */
    CHECK_INT(releases, 0);
    unsigned changes = activity_changes;
    watcher.expire_idle(done + GRACE);
    CHECK_INT(xq_active_queues(), active);
    CHECK_INT(activity_changes, changes + 1);
    CHECK_INT(activity_device, 5);
    CHECK_INT(releases, 1);
    xq_set_hooks(&(struct xq_hooks){0});
}

/* A gated queue (Level 2) whose next command gets a gate: admitted, the gate's number taken. */
static struct xqueue *gated_queue(uintptr_t handle)
{
    struct xqueue *q = new_queue(handle, XQ_GATE_DEVICE | XQ_GATE_TRACKED);
    atomic_store(&q->dgate_bound_ns, 100 * US);
    return q;
}

static void admit_gated(struct xqueue *q, struct xq_ticket *t)
{
    uint64_t retry_at;
    CHECK(xq_try_admit(q, t, 7, 1, &retry_at));
    CHECK(t->gate != 0); /* a queue's first costly command always gets one */
}

/* Released once its grace window has passed, as the watcher would. */
static void expire_all(void)
{
    fake_now += 10 * GRACE;
    watcher.expire_idle(fake_now);
}

/*
 * No gate without a counted command behind it (docs/design.md, "A queue's gate, from creation to
 * exit"). A gate is put before a command that the runtime then refuses: a marker recorded behind
 * the refusal is followed instead (without a key: nothing is learned from it), and the queue is
 * released only once it is reached. Where none can be recorded (the null and per-thread streams)
 * or a capture began between admission and the call, the queue owes one: it is not released
 * while it owes, and the next command's marker pays. Before, the refused command was simply let
 * go, and the queue's slot, whose line the device may still wait on, was released at once.
 */
static void gates_backed(void)
{
    xq_set_hooks(&(struct xq_hooks){.released = on_released});
    expire_all();
    unsigned released_before = releases;
    struct xq_ticket t;

    refused_recordable = true;
    struct xqueue *q = gated_queue(0x900);
    admit_gated(q, &t);
    xq_submitted(&t, false);
    CHECK_INT(recorded_behind_refused, 1);
    CHECK_INT(q->markers.count, 1);
    CHECK(q->markers.count == 1 && q->markers.slots[q->markers.head].cost_key == 0);
    CHECK(!atomic_load(&q->gate_unbacked));
    xq_destroy(&(struct xq_key){0x900, -1, 0});
    expire_all();
    CHECK_INT(releases, released_before); /* its marker is not reached */
    reach(q, 1);
    xq_lock_markers(q);
    q->watched = false;
    xq_unlock_markers(q);
    expire_all();
    CHECK_INT(releases, released_before + 1);

    refused_recordable = false;
    q = gated_queue(0x901);
    admit_gated(q, &t);
    xq_submitted(&t, false);
    CHECK_INT(q->markers.count, 0);
    CHECK(atomic_load(&q->gate_unbacked));
    struct dg_line line;
    dg_reset(&line);
    atomic_store(&line.word, 0); /* closed: the stream may wait at that gate */
    atomic_store(&q->dgate, &line);
    xq_destroy(&(struct xq_key){0x901, -1, 0});
    expire_all();
    CHECK(!xq_release_if_done(q));
    CHECK_INT(releases, released_before + 1); /* kept: it owes a marker */
    fake_now += 2000000000u;                  /* closed all along: still owed */
    watcher.expire_idle(fake_now);
    CHECK_INT(releases, released_before + 1);
    atomic_store(&line.word, DG_OPEN); /* seen open, then open a second later: passed */
    watcher.expire_idle(fake_now);
    fake_now += 999999999u;
    watcher.expire_idle(fake_now);
    CHECK_INT(releases, released_before + 1);
    fake_now += 1;
    watcher.expire_idle(fake_now);
    CHECK_INT(releases, released_before + 2);
    CHECK(!atomic_load(&q->gate_unbacked));
    released_before++;

    q = gated_queue(0x902);
    admit_gated(q, &t);
    xq_capture_beginning(); /* on another thread, between admission and the call */
    xq_capture_begun(true);
    xq_submitted(&t, true);
    xq_capture_end();
    CHECK_INT(q->markers.count, 0);
    CHECK(atomic_load(&q->gate_unbacked));
    uint64_t retry_at;
    CHECK(submit(q, 1, &retry_at)); /* the next command's marker stands behind that gate too */
    CHECK(!atomic_load(&q->gate_unbacked));
    xq_destroy(&(struct xq_key){0x902, -1, 0});
    reach(q, 1);
    xq_lock_markers(q);
    q->watched = false;
    xq_unlock_markers(q);
    expire_all();
    CHECK_INT(releases, released_before + 2);
    refused_recordable = true;
    xq_set_hooks(&(struct xq_hooks){0});
}

/* ---- the slow-call report ---- */

struct lock_holder {
    pid_t waiter;          /* the thread that will wait for the lock */
    _Atomic bool holding;  /* the holder has the lock */
    _Atomic bool about_to; /* the waiter is about to take it */
};

/* Whether thread tid of this process sleeps (state S in /proc: blocked, here in the lock). */
static bool sleeping(pid_t tid)
{
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
    if (f)
        fclose(f);
    stat[n] = 0;
    const char *end = strrchr(stat, ')');
    return end && end[1] == ' ' && end[2] == 'S';
}

/* Holds the scheduling lock, in a role of its own, until the waiter sleeps waiting for it. */
static void *hold_lock(void *arg)
{
    struct lock_holder *h = arg;
    xq_sched_thread_role("the test's holder");
    xq_sched_lock();
    atomic_store(&h->holding, true);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 10000 && !(atomic_load(&h->about_to) && sleeping(h->waiter)); i++)
        nanosleep(&ms, NULL);
    xq_sched_unlock();
    return NULL;
}

/* With slow calls reported, an activation says what it waited for: the holder's role and how
 * long, that it spun and then slept, how long the hand-over took, and that the thread was
 * switched out meanwhile; an activation that found the lock free says nobody held it. */
static void slow_report(struct xq_admission_config cfg, const struct xq_admission_hooks *hooks)
{
    cfg.slow_ns = 1;
    xq_admission_configure(
        &cfg, &(struct xq_marker_ops){.record = record, .query = query, .release = release}, hooks);
    struct xqueue *free_q = new_queue(0x700, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    struct xqueue *held_q = new_queue(0x701, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
    struct xq_ticket t;
    uint64_t retry_at;

    CHECK(xq_try_admit(free_q, &t, 7, 1, &retry_at));
    xq_submitted(&t, true);
    CHECK(t.activation_ns || t.timed_from_ns); /* it was timed */
    CHECK(t.lock.holder == NULL);
    CHECK_INT(t.lock.wait_ns, 0);

    struct lock_holder h = {.waiter = gettid()};
    pthread_t holder;
    CHECK(pthread_create(&holder, NULL, hold_lock, &h) == 0);
    while (!atomic_load(&h.holding))
        sched_yield();
    atomic_store(&h.about_to, true);
    CHECK(xq_try_admit(held_q, &t, 7, 1, &retry_at));
    xq_submitted(&t, true);
    pthread_join(holder, NULL);
    CHECK(t.lock.holder && strcmp(t.lock.holder, "the test's holder") == 0);
    CHECK(t.lock.wait_ns > 0);
    CHECK(t.lock.held_ns > 0);
    CHECK(t.lock.slept); /* it spun for longer than the spin allows, then slept */
    CHECK(t.lock.handover_ns > 0 && t.lock.handover_ns <= t.lock.wait_ns);
    CHECK(t.switches >= 1); /* it slept in the lock */
}

int main(void)
{
    struct xq_admission_config cfg = {
        .enabled = true,
        .window = WINDOW,
        .budget_ns = BUDGET,
        .grace_ns = GRACE,
        .watchdog_ns = 500000000u,
        .poll_ns = 20 * US,
    };
    const struct xq_admission_hooks hooks = {.activity_changed = activity_changed,
                                             .now_ns = clock_now};
    xq_admission_configure(&cfg,
                           &(struct xq_marker_ops){.record = record,
                                                   .query = query,
                                                   .release = release,
                                                   .stream_idle = stream_idle,
                                                   .record_behind_refused = record_behind_refused},
                           &hooks);
    CHECK(watcher.completed && watcher.expire_idle && watcher.stream_idle);
    unknown_costs();
    learned_costs();
    window_ceiling();
    decisions();
    unfollowed();
    activity();
    closing();
    retired();
    gates_backed();
    CHECK(watched > 0);
    slow_report(cfg, &hooks);
    return check_finish("unit.admission");
}
