/*
 * xqueue.c - the registry of XQueues (see xqueue.h).
 *
 * An open-addressing hash table from key to XQueue under a reader-writer lock: the launch path
 * only reads. XQueue memory is never returned to the system while the process runs; a destroyed
 * stream's XQueue goes on a free list and is reused for a later stream, so a thread that raced
 * with the destruction still touches valid memory. A destroyed stream's queue (retired) stays on
 * the list of joined queues, in its process's decisions, until the watcher has seen its markers
 * all reached and its activity has ended (xq_release_if_done): its commands may wait at its
 * gates until then, and only its own process decides for them. So a reused queue never inherits
 * another stream's markers, and a retired queue goes idle the way every queue does.
 */
#include "xqueue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gp_clock.h"
#include "gp_grow.h"
#include "gp_lockrank.h"
#include "gp_thread.h"

struct slot {
    struct xqueue *q; /* NULL: empty; &tombstone: deleted */
};

static pthread_mutex_t sched_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct slot *table;
static size_t cap, used;
static struct xqueue tombstone;
static struct xqueue *free_list; /* linked through next_free */
static struct {
    struct xqueue **q;
    size_t n, cap;
} joined; /* the queues that joined scheduling, in no order (registry lock) */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xq_hooks hooks;

void xq_set_hooks(const struct xq_hooks *h)
{
    hooks = *h;
}

/* Who holds the scheduling lock and since when, kept only while slow calls are reported
 * (xq_sched_timing): read racily by a thread about to wait, which is enough for a report. */
static _Atomic bool timing;
static _Atomic(const char *) holder;
static _Atomic uint64_t holder_since_ns, released_ns;
static _Thread_local const char *thread_role;

void xq_sched_timing(bool on)
{
    atomic_store(&timing, on);
}

void xq_sched_thread_role(const char *role)
{
    thread_role = role;
}

static void note_holder(void)
{
    if (!atomic_load_explicit(&timing, memory_order_relaxed))
        return;
    atomic_store_explicit(&holder, thread_role ? thread_role : "an application thread",
                          memory_order_relaxed);
    atomic_store_explicit(&holder_since_ns, gp_now_ns(), memory_order_relaxed);
}

void xq_sched_lock(void)
{
    gp_mutex_lock(&sched_mu, GP_RANK_SCHED);
    note_holder();
}

/*
 * How long an activating thread spins for the scheduling lock before it sleeps. Decisions hold
 * the lock for microseconds (nothing holds it for a pass over every queue), but a thread that
 * went to sleep on it was measured on the H100 host to wake 30-100 us after the holder let go
 * (docs/benchmarks.md, tenth run): a queue becoming active spins through a hold instead.
 */
#define ACTIVATION_SPIN_NS 50000u

/* After a failed trylock: whether the lock was taken within the spin. */
static bool lock_spinning(void)
{
    uint64_t until = gp_now_ns() + ACTIVATION_SPIN_NS;
    do {
        for (int i = 0; i < 16; i++)
            gp_cpu_relax();
        if (pthread_mutex_trylock(&sched_mu) == 0)
            return true;
    } while (gp_now_ns() < until);
    return false;
}

void xq_sched_lock_activating(struct xq_lock_wait *w)
{
    gp_rank_acquire(GP_RANK_SCHED);
    *w = (struct xq_lock_wait){.holder = NULL};
    if (pthread_mutex_trylock(&sched_mu) != 0) {
        uint64_t from = gp_now_ns(),
                 since = atomic_load_explicit(&holder_since_ns, memory_order_relaxed);
        w->holder = atomic_load_explicit(&holder, memory_order_relaxed);
        w->held_ns = since && since < from ? from - since : 0;
        w->slept = !lock_spinning();
        if (w->slept)
            pthread_mutex_lock(&sched_mu);
        uint64_t now = gp_now_ns(),
                 released = atomic_load_explicit(&released_ns, memory_order_relaxed);
        w->wait_ns = now - from;
        w->handover_ns = released > from && released < now ? now - released : 0;
    }
    note_holder();
}

void xq_sched_unlock(void)
{
    if (atomic_load_explicit(&timing, memory_order_relaxed))
        atomic_store_explicit(&released_ns, gp_now_ns(), memory_order_relaxed);
    gp_mutex_unlock(&sched_mu, GP_RANK_SCHED);
}

void xq_sched_wait(pthread_cond_t *cv, uint64_t deadline_ns)
{
    if (!deadline_ns) {
        pthread_cond_wait(cv, &sched_mu);
    } else {
        struct timespec ts = gp_timespec_at(deadline_ns);
        pthread_cond_timedwait(cv, &sched_mu, &ts);
    }
    note_holder(); /* retaken */
}

void xq_lock_markers(struct xqueue *q)
{
    gp_mutex_lock(&q->mu, GP_RANK_QUEUE);
}

void xq_unlock_markers(struct xqueue *q)
{
    gp_mutex_unlock(&q->mu, GP_RANK_QUEUE);
}

void xq_lock_submit(struct xqueue *q)
{
    gp_mutex_lock(&q->submit_mu, GP_RANK_SUBMIT);
}

void xq_unlock_submit(struct xqueue *q)
{
    gp_mutex_unlock(&q->submit_mu, GP_RANK_SUBMIT);
}

void xq_head_changed(struct xqueue *q, uint64_t now)
{
    const struct xq_marker_ring *r = &q->markers;
    if (!r->count) {
        atomic_store(&q->head_cost_ns, 0);
        return;
    }
    const struct xq_in_flight *h = &r->slots[r->head];
    atomic_store(&q->head_since_ns, h->submit_ns > now ? h->submit_ns : now);
    atomic_store(&q->head_cost_ns, h->cost_ns);
}

static bool key_eq(const struct xq_key *a, const struct xq_key *b)
{
    return a->handle == b->handle && a->device == b->device && a->tid == b->tid;
}

static size_t key_hash(const struct xq_key *k)
{
    uint64_t x = (uint64_t)k->handle ^ ((uint64_t)(unsigned)k->device << 48) ^ (k->tid * 31);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static struct slot *lookup(const struct xq_key *k)
{
    if (!cap)
        return NULL;
    for (size_t i = key_hash(k) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (!table[i].q)
            return NULL;
        if (table[i].q != &tombstone && key_eq(&table[i].q->key, k))
            return &table[i];
    }
}

static void insert(struct xqueue *q)
{
    size_t i = key_hash(&q->key) & (cap - 1);
    while (table[i].q && table[i].q != &tombstone)
        i = (i + 1) & (cap - 1);
    if (!table[i].q)
        used++;
    table[i].q = q;
}

static int grow(void)
{
    size_t old_cap = cap, live = 0;
    for (size_t i = 0; i < old_cap; i++)
        live += table[i].q && table[i].q != &tombstone;
    size_t new_cap = cap ? cap : 64;
    while ((live + 1) * 2 > new_cap)
        new_cap *= 2;
    struct slot *n = calloc(new_cap, sizeof *n), *old = table;
    if (!n)
        return -ENOMEM;
    table = n;
    cap = new_cap;
    used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].q && old[i].q != &tombstone)
            insert(old[i].q);
    free(old);
    return 0;
}

struct xqueue *xq_find(const struct xq_key *key)
{
    xq_read_lock();
    struct slot *s = lookup(key);
    struct xqueue *q = s ? s->q : NULL;
    xq_read_unlock();
    return q;
}

static struct xqueue *take_free(void)
{
    gp_mutex_lock(&free_lock, GP_RANK_FREE_QUEUES);
    struct xqueue *q = free_list;
    if (q)
        free_list = q->next_free;
    gp_mutex_unlock(&free_lock, GP_RANK_FREE_QUEUES);
    return q;
}

static void put_free(struct xqueue *q)
{
    if (hooks.released)
        hooks.released(q);
    gp_mutex_lock(&free_lock, GP_RANK_FREE_QUEUES);
    q->next_free = free_list;
    free_list = q;
    gp_mutex_unlock(&free_lock, GP_RANK_FREE_QUEUES);
}

/* Adds a new XQueue for key; the write lock is held. */
static struct xqueue *add(const struct xq_key *key, const struct xq_stream_props *props,
                          uint64_t owner_tid)
{
    if ((used + 1) * 2 > cap && grow() < 0)
        return NULL;
    struct xqueue *q = take_free();
    struct xq_marker_ring ring = {0};
    if (q) {
        ring = q->markers; /* keeps its storage; empty, as only drained queues are freed */
        pthread_mutex_destroy(&q->mu);
        pthread_mutex_destroy(&q->submit_mu);
    } else if (!(q = malloc(sizeof *q))) {
        return NULL;
    }
    memset(q, 0, sizeof *q);
    q->key = *key;
    q->device = props->device;
    q->flags = props->flags;
    q->stream_priority = props->priority;
    q->cus = props->cus;
    q->owner_tid = owner_tid;
    q->markers = ring;
    q->markers.head = q->markers.count = 0;
    atomic_init(&q->st, &q->own);
    pthread_mutex_init(&q->mu, NULL);
    pthread_mutex_init(&q->submit_mu, NULL);
    insert(q);
    return q;
}

static struct xqueue *created(struct xqueue *q)
{
    if (q && hooks.created)
        hooks.created(q);
    return q;
}

/* Takes q off the list of joined queues; the write lock is held. */
static void unjoin_locked(struct xqueue *q)
{
    if (!atomic_load(&q->joined))
        return;
    struct xqueue *last = joined.q[--joined.n];
    joined.q[q->joined_at] = last;
    last->joined_at = q->joined_at;
    atomic_store(&q->joined, false);
}

bool xq_join(struct xqueue *q)
{
    bool ok = true;
    gp_rwlock_wrlock(&lock, GP_RANK_REGISTRY);
    if (!atomic_load(&q->joined)) {
        struct xqueue **l = gp_grow(joined.q, &joined.cap, joined.n, sizeof *l, 32);
        ok = l != NULL;
        if (ok) {
            joined.q = l;
            q->joined_at = joined.n;
            joined.q[joined.n++] = q;
            atomic_store(&q->joined, true);
        }
    }
    gp_rwlock_unlock(&lock, GP_RANK_REGISTRY);
    return ok;
}

/*
 * Whether a retired queue is done with: its work all seen reached and its activity ended. The
 * first caller to find it so (the destroying thread, the watcher's prune, expiry) gets true, and
 * only it releases the queue. Until then the queue stays on the joined list: its board slot is
 * live and its commands may still wait at its gates, so its own process must keep deciding for
 * it (docs/design.md, "A queue's gate, from creation to exit").
 */
static bool done_with(struct xqueue *q)
{
    xq_lock_markers(q);
    bool done = q->retired && q->markers.count == 0 && !q->watched;
    xq_unlock_markers(q);
    /* A gate with nothing counted behind it may still hold its stream: kept, and its line
     * decided, until the process ends (xqueue.h's gate_unbacked). */
    done &= !atomic_load(&q->gate_unbacked);
    return done && !atomic_load(&xq_st(q)->active) && !atomic_exchange(&q->releasing, true);
}

/* Takes key's queue out of the table (write lock held); returns it when it is done with already,
 * for release() once the lock is dropped. */
static struct xqueue *remove_locked(const struct xq_key *key)
{
    struct slot *s = lookup(key);
    if (!s)
        return NULL;
    struct xqueue *q = s->q;
    s->q = &tombstone;
    xq_lock_markers(q);
    q->retired = true;
    xq_unlock_markers(q);
    if (!done_with(q))
        return NULL;
    unjoin_locked(q);
    return q;
}

/* A retired queue that left the joined list goes back for reuse; no lock held. */
static void release(struct xqueue *q)
{
    if (q)
        put_free(q);
}

bool xq_release_if_done(struct xqueue *q)
{
    if (!done_with(q))
        return false;
    gp_rwlock_wrlock(&lock, GP_RANK_REGISTRY);
    unjoin_locked(q);
    gp_rwlock_unlock(&lock, GP_RANK_REGISTRY);
    release(q);
    return true;
}

struct xqueue *xq_create(const struct xq_key *key, const struct xq_stream_props *props,
                         uint64_t owner_tid)
{
    gp_rwlock_wrlock(&lock, GP_RANK_REGISTRY);
    struct xqueue *old = remove_locked(key);
    struct xqueue *q = add(key, props, owner_tid);
    gp_rwlock_unlock(&lock, GP_RANK_REGISTRY);
    release(old);
    return created(q);
}

void xq_destroy(const struct xq_key *key)
{
    gp_rwlock_wrlock(&lock, GP_RANK_REGISTRY);
    struct xqueue *q = remove_locked(key);
    gp_rwlock_unlock(&lock, GP_RANK_REGISTRY);
    release(q);
}

/*
 * Per-thread queues (null and per-thread stream, per device) die with their thread: a
 * thread-specific destructor forgets them, so threads that come and go leave nothing behind.
 */
#define THREAD_QUEUES_MAX 32
struct thread_queues {
    struct xq_key keys[THREAD_QUEUES_MAX];
    int n;
};
static _Thread_local struct thread_queues thread_queues;
static pthread_key_t thread_exit_key;
static pthread_once_t thread_exit_once = PTHREAD_ONCE_INIT;

static void forget_thread_queues(void *arg)
{
    struct thread_queues *tq = arg;
    for (int i = 0; i < tq->n; i++)
        xq_destroy(&tq->keys[i]);
    tq->n = 0;
}

static void make_thread_exit_key(void)
{
    pthread_key_create(&thread_exit_key, forget_thread_queues);
}

static void note_thread_queue(const struct xq_key *key)
{
    struct thread_queues *tq = &thread_queues;
    if (tq->n == THREAD_QUEUES_MAX)
        return; /* kept until exit: only a thread using more than 16 devices gets here */
    if (tq->n == 0) {
        pthread_once(&thread_exit_once, make_thread_exit_key);
        pthread_setspecific(thread_exit_key, tq);
    }
    tq->keys[tq->n++] = *key;
}

struct xqueue *xq_get_thread_queue(const struct xq_key *key, uint8_t cu_mask)
{
    struct xqueue *q = xq_find(key);
    if (q)
        return q;
    gp_rwlock_wrlock(&lock, GP_RANK_REGISTRY);
    struct slot *s = lookup(key);
    bool is_new = !s;
    q = s ? s->q
          : add(key, &(struct xq_stream_props){.device = key->device, .cus.mask = cu_mask},
                key->tid);
    gp_rwlock_unlock(&lock, GP_RANK_REGISTRY);
    if (!is_new || !q)
        return q;
    note_thread_queue(key);
    return created(q);
}

void xq_read_lock(void)
{
    gp_rwlock_rdlock(&lock, GP_RANK_REGISTRY);
}

void xq_read_unlock(void)
{
    gp_rwlock_unlock(&lock, GP_RANK_REGISTRY);
}

void xq_foreach_joined_locked(void (*fn)(struct xqueue *q, void *arg), void *arg)
{
    for (size_t i = 0; i < joined.n; i++)
        fn(joined.q[i], arg);
}

void xq_foreach_joined(void (*fn)(struct xqueue *q, void *arg), void *arg)
{
    xq_read_lock();
    xq_foreach_joined_locked(fn, arg);
    xq_read_unlock();
}

void xq_foreach(void (*fn)(struct xqueue *q, void *arg), void *arg)
{
    xq_read_lock();
    for (size_t i = 0; i < cap; i++)
        if (table[i].q && table[i].q != &tombstone)
            fn(table[i].q, arg);
    xq_read_unlock();
}

void xq_reset(void)
{
    /*
     * In the child of fork the locks may have been held by threads that do not exist here. The
     * parent's queues and their markers are abandoned, not reused: the markers belong to the
     * parent's runtime state.
     */
    pthread_mutex_init(&sched_mu, NULL);
    pthread_rwlock_init(&lock, NULL);
    pthread_mutex_init(&free_lock, NULL);
    free(table);
    table = NULL;
    cap = used = 0;
    joined.q = NULL; /* the parent's queues are abandoned, not freed */
    joined.n = joined.cap = 0;
    free_list = NULL;
    thread_queues.n = 0; /* the forking thread's: the parent's queues */
}
