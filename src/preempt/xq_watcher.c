/*
 * xq_watcher.c - the one thread per process that follows completion markers.
 *
 * Queues with markers outstanding are on the watcher's list. The watcher asks each for its
 * oldest marker (markers of a queue are reached in order; a sparse one reaches the unmarked
 * commands before it too, and the stream's idleness those after the last: xq_admission.h, "Sparse
 * markers"), frees the window for those reached,
 * and wakes waiting threads at once. While markers are outstanding it polls every poll_ns with
 * a timer slack of 1 ns (only for itself), so a queue is seen idle within microseconds, not
 * timeslices; with none outstanding it sleeps until a queue's grace window ends or new markers
 * arrive. It starts on the first marker, blocks every signal (the application's handlers run on
 * the application's threads), and is joined at exit before the runtime goes away.
 */
#include "xq_watcher.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "xc_cost.h"
#include "gp_clock.h"
#include "gp_grow.h"
#include "gp_lockrank.h"
#include "gp_log.h"

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct xqueue **list;
    size_t n, cap;
    bool started, stop, kicked;
    /* Teardowns in progress (xq_watcher_pause): no pass starts while any is; busy while a pass
     * (queries, releases, expiry) runs, outside w.mu. */
    unsigned paused;
    bool busy;
    pthread_cond_t parked_cv; /* busy went false */
    pthread_t thread;
    struct xq_watcher_config cfg;
    struct xq_marker_ops markers;
    struct xq_watcher_ops ops;
} w = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void lock_list(void)
{
    gp_mutex_lock(&w.mu, GP_RANK_WATCHER);
}

static void unlock_list(void)
{
    gp_mutex_unlock(&w.mu, GP_RANK_WATCHER);
}

static void lock_queue(struct xqueue *q)
{
    gp_mutex_lock(&q->mu, GP_RANK_QUEUE);
}

static void unlock_queue(struct xqueue *q)
{
    gp_mutex_unlock(&q->mu, GP_RANK_QUEUE);
}

/* Commands seen reached per queue and poll (more are at the next poll), and the most whose costs
 * one poll learns from (a sparse marker may reach more at once: they then teach nothing). */
#define FOLLOW_BATCH 64
#define LEARN_MAX 256

/* Learns what the commands reached in this poll took (xc_cost.h): together, the time since the
 * later of the queue's previous completion seen and the first one's submission. Not when the
 * queue was suspended meanwhile (higher-priority work ran between its commands on purpose), nor
 * across a stream capture (markers were not queried: they were seen reached late). */
static void learn(struct xqueue *q, const struct xc_sample *done, size_t n, uint64_t first_submit,
                  bool suspended_meanwhile, uint64_t now)
{
    uint64_t start = q->last_reached_ns > first_submit ? q->last_reached_ns : first_submit;
    q->last_reached_ns = now;
    uint64_t epoch = w.ops.capture_epoch();
    bool captured = epoch != q->capture_epoch_seen || w.ops.capturing();
    q->capture_epoch_seen = epoch;
    if (suspended_meanwhile || captured || (atomic_load(&xq_st(q)->gate) & XQ_GATE_SUSPENDED))
        return;
    uint64_t mean = xc_learn(done, n, now > start ? now - start : 0);
    if (!mean)
        return;
    uint64_t old = atomic_load_explicit(&q->cost_mean_ns, memory_order_relaxed);
    atomic_store_explicit(&q->cost_mean_ns, old ? old - old / 4 + mean / 4 : mean,
                          memory_order_relaxed);
}

/* What the commands reached in this poll say of the longest command q ran recently (xc_cost.h's
 * struct xc_longest): shown (on its board slot) only when it moved noticeably. */
static void note_longest(struct xqueue *q, const struct xc_sample *done, size_t n, uint64_t now)
{
    uint64_t longest = 0, show;
    for (size_t i = 0; i < n; i++) {
        uint64_t ns = done[i].key ? xc_predict(done[i].key) : 0;
        longest = ns > longest ? ns : longest;
    }
    if (xc_longest_note(&q->longest, longest, now, &show))
        w.ops.longest(q, show);
}

/* Whether the marker was reached; a slow query is reported (GPUPRIO_LOG=debug), as it delays
 * every queue's progress and may hold the runtime's locks against the application. */
static bool query(struct xqueue *q, void *marker)
{
    uint64_t slow_ns = w.cfg.slow_ns, from = slow_ns ? gp_now_ns() : 0;
    bool reached = w.markers.query(marker) != 0;
    uint64_t took = from ? gp_now_ns() - from : 0;
    if (from && took >= slow_ns)
        gp_log(GP_LOG_DEBUG, "a marker query on queue %#llx took %llu us",
               (unsigned long long)q->key.handle, (unsigned long long)(took / 1000));
    return reached;
}

/*
 * q's oldest marked command, and how many commands reaching it reaches (itself and the unmarked
 * ones before it: sparse markers, xq_admission.h), with q->mu held. Without a marked command, *n is
 * every command in flight and *newest the latest one's submission.
 */
static void *oldest_marked(const struct xq_marker_ring *r, size_t *n, uint64_t *newest)
{
    for (size_t i = 0; i < r->marked; i++) {
        void *m = r->slots[(r->head + i) % r->cap].marker;
        if (m) {
            *n = i + 1;
            return m;
        }
    }
    *n = r->count;
    *newest = r->count ? r->slots[(r->head + r->count - 1) % r->cap].submit_ns : 0;
    return NULL;
}

/* Follows q's markers: frees the window of the commands reached, and learns what they cost.
 * Returns how many were reached. */
static unsigned follow(struct xqueue *q)
{
    struct xc_sample done[LEARN_MAX];
    uint64_t cost = 0, first_submit = 0, now = 0;
    uint32_t suspensions =
        (uint32_t)atomic_load_explicit(&xq_st(q)->suspensions, memory_order_relaxed);
    bool suspended_meanwhile = false, learnable = true;
    unsigned reached = 0, sampled = 0;
    while (reached < FOLLOW_BATCH) {
        size_t n = 0;
        uint64_t newest = 0;
        lock_queue(q);
        struct xq_marker_ring *r = &q->markers;
        void *marker = oldest_marked(r, &n, &newest);
        unlock_queue(q);
        /* Only this thread removes commands, so those looked at stay where they are meanwhile.
         * Unmarked ones after the last marker: once nothing came for two polls (the burst is
         * over), the stream's idleness reaches them; it covers every one submitted before. */
        if (!n || (marker && !query(q, marker)))
            break;
        if (!marker && (gp_now_ns() - newest < 2 * w.cfg.poll_ns || !w.ops.stream_idle(q)))
            break;
        if (!reached) /* one clock read per poll: the batch was seen reached together */
            now = gp_now_ns();
        lock_queue(q);
        for (size_t i = 0; i < n; i++) {
            struct xq_in_flight c = r->slots[r->head];
            r->head = (r->head + 1) % r->cap;
            r->count--;
            if (!reached && !i)
                first_submit = c.submit_ns;
            if (sampled < LEARN_MAX)
                done[sampled++] = (struct xc_sample){c.cost_key, c.predicted_ns};
            else
                learnable = false;
            cost += c.cost_ns;
            suspended_meanwhile |= c.suspensions != suspensions;
        }
        r->marked = r->marked > n ? r->marked - n : 0;
        xq_head_changed(q, now);
        unlock_queue(q);
        if (marker)
            w.markers.release(q, marker);
        reached += (unsigned)n;
    }
    if (reached) {
        if (learnable)
            learn(q, done, sampled, first_submit, suspended_meanwhile, now);
        /* Before completed frees the window: until then q is not released, so its slot is its. */
        note_longest(q, done, sampled, now);
        w.ops.completed(q, reached, cost);
    }
    return reached;
}

/* Retired queues that prune took off the list, released once w.mu is let go (the registry's
 * lock ranks below it); the watcher thread's own. */
static struct {
    struct xqueue **q;
    size_t n, cap;
} pruned;

/* Takes drained queues off the list (w.mu held); retired ones are noted in pruned, for
 * release_pruned. One that cannot be noted (no memory) stays on the list for the next pass. */
static void prune(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < w.n; i++) {
        struct xqueue *q = w.list[i];
        lock_queue(q);
        bool drained = q->markers.count == 0, retired = q->retired;
        struct xqueue **l =
            drained && retired ? gp_grow(pruned.q, &pruned.cap, pruned.n, sizeof *l, 16) : NULL;
        if (l)
            pruned.q = l;
        drained &= !retired || l != NULL;
        if (drained)
            q->watched = false;
        unlock_queue(q);
        if (!drained)
            w.list[kept++] = q;
        else if (retired)
            pruned.q[pruned.n++] = q;
    }
    w.n = kept;
}

/* Without w.mu: the pruned retired queues go back to the registry if they are idle too; an
 * active one is released by expiry once its grace window ends (xq_release_if_done). */
static void release_pruned(void)
{
    for (size_t i = 0; i < pruned.n; i++)
        xq_release_if_done(pruned.q[i]);
    pruned.n = 0;
}

static void timed_wait_until(uint64_t deadline)
{
    struct timespec ts = gp_timespec_at(deadline);
    pthread_cond_timedwait(&w.cv, &w.mu, &ts);
}

static void *watcher_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    prctl(PR_SET_NAME, (unsigned long)"gpuprio-watch", 0, 0, 0);
    xq_sched_thread_role("the watcher");
    struct xqueue **snapshot = NULL;
    size_t snapshot_cap = 0;
    uint64_t next_expiry = 0;
    lock_list();
    while (!w.stop) {
        while (w.paused && !w.stop)
            pthread_cond_wait(&w.cv, &w.mu);
        if (w.stop)
            break;
        size_t n = w.n;
        if (n > snapshot_cap) {
            struct xqueue **s = realloc(snapshot, n * sizeof *s);
            if (s) {
                snapshot = s;
                snapshot_cap = n;
            }
        }
        n = n < snapshot_cap ? n : snapshot_cap;
        if (n)
            memcpy(snapshot, w.list, n * sizeof *snapshot);
        bool rescan = w.kicked;
        w.kicked = false;
        w.busy = true;
        unlock_list();

        for (size_t i = 0; i < n; i++)
            if (follow(snapshot[i]))
                rescan = true;
        uint64_t now = gp_now_ns();
        if (rescan || (next_expiry && now >= next_expiry))
            next_expiry = w.ops.expire_idle(now);

        lock_list();
        prune();
        if (pruned.n) {
            unlock_list();
            release_pruned();
            lock_list();
        }
        w.busy = false; /* the releases too: a teardown retires queues while paused */
        pthread_cond_broadcast(&w.parked_cv);
        if (w.stop || w.kicked || w.paused)
            continue;
        if (w.n) {
            unlock_list();
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)w.cfg.poll_ns};
            nanosleep(&ts, NULL);
            lock_list();
        } else if (next_expiry) {
            timed_wait_until(next_expiry);
        } else {
            pthread_cond_wait(&w.cv, &w.mu);
        }
    }
    unlock_list();
    free(snapshot);
    return NULL;
}

/* With w.mu held. */
static void start(void)
{
    static bool exit_hook;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w.thread, NULL, watcher_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        gp_log(GP_LOG_ERROR,
               "cannot start the watcher thread (error %d); queues will be let "
               "through by the watchdog only",
               rc);
        w.stop = true; /* do not try again for every marker */
        return;
    }
    w.started = true;
    /* Registered after the runtime's own exit handlers, so it runs before them. */
    if (!exit_hook)
        exit_hook = atexit(w.ops.at_exit) == 0;
}

void xq_watch(struct xqueue *q)
{
    lock_list();
    if (q) {
        struct xqueue **l = gp_grow(w.list, &w.cap, w.n, sizeof *l, 16);
        if (l) {
            w.list = l;
            w.list[w.n++] = q;
        }
        /* Out of memory: the queue's markers are never followed and the watchdog lets
         * its waiters through; gpuprio degrades, the application goes on. */
    }
    w.kicked = true;
    if (!w.started && !w.stop)
        start();
    pthread_cond_signal(&w.cv);
    unlock_list();
}

void xq_watcher_pause(void)
{
    lock_list();
    w.paused++;
    while (w.busy)
        pthread_cond_wait(&w.parked_cv, &w.mu);
    unlock_list();
}

void xq_watcher_resume(void)
{
    lock_list();
    if (w.paused && --w.paused == 0) {
        w.kicked = true; /* what was dropped meanwhile: pruned at once */
        pthread_cond_signal(&w.cv);
    }
    unlock_list();
}

/*
 * Takes every command in flight on q off its ring as reached, without querying its markers: each
 * goes to forget, which drops or pools it (the platform knows which die with a context). The
 * watcher is paused, so nothing of q's ring is being queried; submitting threads may add to it
 * meanwhile (under q->mu: they come after the ones taken here).
 */
static void drop_all(struct xqueue *q, void (*forget)(struct xqueue *q, void *marker, void *arg),
                     void *arg)
{
    uint64_t cost = 0;
    unsigned n = 0;
    lock_queue(q);
    struct xq_marker_ring *r = &q->markers;
    size_t count = r->count;
    void **markers = count ? malloc(count * sizeof *markers) : NULL;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        struct xq_in_flight c = r->slots[r->head];
        r->head = (r->head + 1) % r->cap;
        r->count--;
        cost += c.cost_ns;
        n++;
        if (c.marker && markers)
            markers[kept++] = c.marker;
        /* Out of memory: the marker is leaked, never queried again. */
    }
    r->marked = 0;
    if (n)
        xq_head_changed(q, gp_now_ns());
    unlock_queue(q);
    for (size_t i = 0; i < kept; i++)
        forget(q, markers[i], arg);
    free(markers);
    if (n)
        w.ops.completed(q, n, cost);
}

void xq_watcher_drop(bool (*pick)(const struct xqueue *q, void *arg),
                     void (*forget)(struct xqueue *q, void *marker, void *arg), void *arg)
{
    lock_list();
    size_t n = w.n;
    struct xqueue **snapshot = n ? malloc(n * sizeof *snapshot) : NULL;
    if (snapshot)
        memcpy(snapshot, w.list, n * sizeof *snapshot);
    else
        n = 0;
    unlock_list();
    /* Queues on the list only: one with markers in flight is on it (xq_watch before the watcher
     * can prune it again), and the list's queues stay valid memory (queues are never freed). */
    for (size_t i = 0; i < n; i++)
        if (pick(snapshot[i], arg))
            drop_all(snapshot[i], forget, arg);
    free(snapshot);
}

void xq_watcher_stop(void)
{
    lock_list();
    w.stop = true;
    bool join = w.started;
    w.started = false;
    pthread_cond_signal(&w.cv);
    unlock_list();
    if (join)
        pthread_join(w.thread, NULL);
}

void xq_watcher_configure(const struct xq_watcher_config *config,
                          const struct xq_marker_ops *markers, const struct xq_watcher_ops *ops)
{
    w.cfg = *config;
    w.markers = *markers;
    w.ops = *ops;
    xq_watcher_reset();
}

void xq_watcher_reset(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* deadlines come from gp_now_ns */
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, &attr);
    pthread_cond_init(&w.parked_cv, NULL);
    pthread_condattr_destroy(&attr);
    w.list = NULL; /* the parent's queues are abandoned, not freed: see xq_reset */
    w.n = w.cap = 0;
    w.started = w.stop = w.kicked = w.busy = false;
    w.paused = 0;
    pruned.n = 0;
}
