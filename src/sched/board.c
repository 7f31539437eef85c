/*
 * board.c - the board's slots (claiming, publishing, freeing), its decision lock and
 * notifications, and requests to other processes' queues. See board.h; the file's names are in
 * board_name.c, liveness in board_owner.c, opening in board_open.c, listing in board_list.c.
 *
 * Nothing here trusts the file: it is checked before it is mapped, a slot's fields are only
 * ever used as numbers, and every wait is bounded. The decision lock is a futex word holding
 * the holder's library image (pid and incarnation): a waiter that finds the holder gone takes
 * the lock over (what the holder protected is recomputed by every decision anyway), and one that
 * waited GP_BOARD_LOCK_MAX_NS for a live holder gives the board up rather than stall the
 * application, until one look a second later finds the lock free (a process stopped while it
 * held the lock, and continued). A holder of this very image is one of our own threads, alive by
 * definition: it is waited for like any other, never taken over. Sleepers wait on a separate
 * futex word, so the holder word can be 64 bits wide.
 */
#include "board_impl.h"

/* The layout is the file format: a change here is a new GP_BOARD_VERSION. */
_Static_assert(sizeof(struct xq_state) == 48, "xq_state is part of the board's layout");
_Static_assert(sizeof(struct gp_board_slot) == 136, "board slot layout");
_Static_assert(sizeof(struct gp_board_header) == 256, "board header layout");
/* A record's GEMM counts take exactly the bytes of st's counters, which a record does not use. */
_Static_assert(offsetof(struct gp_board_slot, gemm) ==
                       offsetof(struct gp_board_slot, st.submitted) &&
                   offsetof(struct gp_board_slot, st.priority) == 80 &&
                   sizeof(struct gp_record_gemm) == 32 && GP_RECORD_GEMM_WHOLE_COUNT == 4 &&
                   offsetof(struct gp_board_slot, gemm) + sizeof(struct gp_record_gemm) ==
                       offsetof(struct gp_board_slot, pid_ns),
               "record GEMM counts layout");
_Static_assert(sizeof(struct dg_line) == 64, "gate line layout");
_Static_assert(offsetof(struct gp_board_file, gates) == GP_BOARD_GATES_OFFSET &&
                   GP_BOARD_GATES_OFFSET % 4096 == 0,
               "the gates start a page of their own");

#define GP_BOARD_LOCK_MAX_NS 200000000ull
#define GP_BOARD_RETRY_NS 1000000000ull
/* A waiter yields up to 64 times, for no longer than this, before it sleeps: next to busy threads
 * a yield lasts one of their time slices, and 64 of them took all of GP_BOARD_LOCK_MAX_NS. */
#define GP_BOARD_YIELD_NS 1000000ull

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

/* ---- slots ---- */

static void clear_slot(struct gp_board_slot *s)
{
    s->stream = s->thread = 0;
    s->device = -1;
    s->flags = 0;
    s->cu_usable = s->cu_total = 0;
    s->cu_mask = 0;
    memset(s->comm, 0, sizeof s->comm);
    atomic_store(&s->request, 0);
    atomic_store(&s->request_seq, 0);
    atomic_store(&s->st.gate, 0);
    atomic_store(&s->st.priority, 0);
    atomic_store(&s->st.active, 0);
    atomic_store(&s->st.submitted, 0);
    atomic_store(&s->st.completed, 0);
    atomic_store(&s->st.held_ns, 0);
    atomic_store(&s->st.suspensions, 0);
    atomic_store(&s->unused_queues, 0);
    atomic_store(&s->liveness_lock, 0);
}

struct gp_board_slot *gp_board_claim(struct gp_board *b)
{
    const struct gp_board_owner *me = gp_board_self();
    uint64_t claimed = (uint64_t)me->pid << 32 | GP_SLOT_CLAIMED;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        uint64_t expected = 0;
        if (atomic_load(&s->owner) != 0)
            continue;
        /* Scans stop at the limit: raised before the claim, so that a claimer killed right after
         * it leaves a slot that others' scans see and reclaim. */
        uint32_t limit = atomic_load(&b->f->h.slot_limit);
        while (limit < i + 1 && !atomic_compare_exchange_weak(&b->f->h.slot_limit, &limit, i + 1))
            ;
        if (!atomic_compare_exchange_strong(&s->owner, &expected, claimed))
            continue;
        /* Then the lock and the identity: until the lock is held, the claimer can only be told
         * alive by its pid (in the pid namespace the slot names) or by how short a claim is
         * (gp_board_claimer_gone). One that stalled longer than that before it (stopped) may
         * find the slot reclaimed: it leaves it to its new owner. */
        /* A write lock, which only the board's writers can take: refused when someone holds a
         * read lock on the byte (any reader of the file can), the slot is judged by pid. */
        struct flock l = gp_board_slot_lock(b, s, F_WRLCK);
        bool locked = fcntl(b->fd, F_OFD_SETLK, &l) == 0;
        if (atomic_load(&s->owner) != claimed) {
            if (locked) {
                l.l_type = F_UNLCK;
                fcntl(b->fd, F_OFD_SETLK, &l);
            }
            continue;
        }
        s->owner_start = me->start;
        s->incarnation = me->incarnation;
        s->pid_ns = me->pid_ns;
        clear_slot(s);
        dg_reset(gp_board_gate(b, s));
        atomic_store(&s->liveness_lock, locked ? GP_LIVENESS_WRITE_LOCK : GP_LIVENESS_PID);
        memcpy(s->comm, me->comm, sizeof s->comm);
        return s;
    }
    return NULL;
}

void gp_board_publish(struct gp_board *b, struct gp_board_slot *s)
{
    (void)b;
    atomic_store(&s->owner, (uint64_t)gp_board_self()->pid << 32 | GP_SLOT_LIVE);
}

void gp_board_publish_record(struct gp_board *b, struct gp_board_slot *s)
{
    (void)b;
    atomic_store(&s->owner, (uint64_t)gp_board_self()->pid << 32 | GP_SLOT_PROCESS);
}

void gp_board_free(struct gp_board *b, struct gp_board_slot *s)
{
    uint64_t word = atomic_load(&s->owner);
    if (!word)
        return;
    /* Taken over first (a dead owner's, or back to claimed if ours), so that nobody claims it half
     * cleared, and nobody judges it by its lock once that is gone: a claimed slot is judged by
     * its pid alone. Ours is unlocked before it is free, so that a thread of ours claiming it
     * again keeps its new lock. */
    const struct gp_board_owner *me = gp_board_self();
    bool own = GP_SLOT_OWNER(word) == me->pid && s->incarnation == me->incarnation &&
               s->pid_ns == me->pid_ns;
    uint64_t mine = (uint64_t)me->pid << 32 | GP_SLOT_CLAIMED;
    if (word != mine && !atomic_compare_exchange_strong(&s->owner, &word, mine))
        return; /* someone else reclaimed it first */
    bool locked = own && atomic_load(&s->liveness_lock);
    clear_slot(s);
    dg_reset(gp_board_gate(b, s));
    if (locked) {
        struct flock l = gp_board_slot_lock(b, s, F_UNLCK);
        fcntl(b->fd, F_OFD_SETLK, &l);
    }
    /* Still ours unless we stalled here past GP_BOARD_CLAIM_MAX_NS and someone reclaimed it:
     * then it is theirs, or free, or someone else's again. */
    atomic_compare_exchange_strong(&s->owner, &mine, 0);
}

bool gp_board_linked(const struct gp_board *b)
{
    struct stat st;
    return lstat(b->path, &st) == 0 && st.st_dev == b->dev && st.st_ino == b->ino;
}

bool gp_board_remove_unused(struct gp_board *b)
{
    for (unsigned i = 0; i < gp_board_slots_used(b); i++)
        if (atomic_load(&b->f->slots[i].owner))
            return false;
    return gp_board_linked(b) && unlink(b->path) == 0;
}

/* ---- lock and notification ---- */

/* Whether the holder named by a lock word can never unlock. It is judged by its slots when it
 * has one (it takes the lock after claiming its record), which tell a process of another pid
 * namespace with our pid from an earlier image of ours; else by its pid: gone, or ours (an earlier
 * image, before an exec). Our own image's holders are threads that run. */
static bool holder_gone(const struct gp_board *b, uint64_t word)
{
    const struct gp_board_owner *me = gp_board_self();
    uint32_t pid = GP_BOARD_LOCK_PID(word);
    if (word == GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation))
        return false;
    for (unsigned i = 0; i < gp_board_slots_used(b); i++) {
        const struct gp_board_slot *s = &b->f->slots[i];
        uint64_t owner = atomic_load(&s->owner);
        if (GP_SLOT_PUBLISHED(owner) && GP_SLOT_OWNER(owner) == pid &&
            GP_BOARD_LOCK_HOLDER(pid, s->incarnation) == word)
            return !gp_board_owner_alive(b, s);
    }
    return pid == me->pid || !gp_board_pid_runs(pid, NULL);
}

static _Thread_local struct gp_board_wait last_wait;

struct gp_board_wait gp_board_last_wait(void)
{
    return last_wait;
}

bool gp_board_given_up(const struct gp_board *b)
{
    return atomic_load(&b->retry_at_ns) != 0;
}

/* On a board given up: whether the calling thread is the one to look at the lock again now. */
static bool time_to_retry(struct gp_board *b)
{
    uint64_t at = atomic_load(&b->retry_at_ns), now = gp_now_ns();
    return now >= at &&
           atomic_compare_exchange_strong(&b->retry_at_ns, &at, now + GP_BOARD_RETRY_NS);
}

static int give_up(struct gp_board *b)
{
    atomic_store(&b->retry_at_ns, gp_now_ns() + GP_BOARD_RETRY_NS);
    gp_rank_release(GP_RANK_BOARD);
    return -ETIMEDOUT;
}

int gp_board_lock(struct gp_board *b)
{
    bool retrying = gp_board_given_up(b);
    if (retrying && !time_to_retry(b))
        return -ETIMEDOUT;
    struct gp_board_header *h = &b->f->h;
    const struct gp_board_owner *me = gp_board_self();
    const uint64_t mine = GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation);
    uint64_t waiting_from = 0;
    gp_rank_acquire(GP_RANK_BOARD);
    last_wait = (struct gp_board_wait){0, 0};
    for (int spins = 0;; spins++) {
        uint64_t v = 0;
        if (atomic_compare_exchange_strong(&h->lock, &v, mine))
            break;
        uint64_t now = gp_now_ns();
        if (!waiting_from) {
            waiting_from = now;
            last_wait.holder_pid = GP_BOARD_LOCK_PID(v);
        }
        if (retrying) { /* one look, no wait: the holder may still be stuck */
            if (holder_gone(b, v) && atomic_compare_exchange_strong(&h->lock, &v, mine))
                break;
            return give_up(b);
        }
        if (spins < 64 && now - waiting_from < GP_BOARD_YIELD_NS) {
            sched_yield();
            continue;
        }
        if (holder_gone(b, v)) {
            if (atomic_compare_exchange_strong(&h->lock, &v, mine))
                break;
            continue;
        }
        if (now - waiting_from > GP_BOARD_LOCK_MAX_NS)
            return give_up(b);
        /* Counted as a sleeper before the holder word is read again: an unlock either sees the
         * count and bumps lock_wake, or happened before that read, which then sees it free. */
        uint32_t wake = atomic_load(&h->lock_wake);
        atomic_fetch_add(&h->lock_sleepers, 1);
        if (atomic_load(&h->lock) == v) {
            struct timespec ts = {0, 1000000};
            futex(&h->lock_wake, FUTEX_WAIT, wake, &ts);
        }
        atomic_fetch_sub(&h->lock_sleepers, 1);
    }
    if (waiting_from)
        last_wait.ns = gp_now_ns() - waiting_from;
    if (retrying)
        atomic_store(&b->retry_at_ns, 0);
    return 0;
}

void gp_board_unlock(struct gp_board *b)
{
    struct gp_board_header *h = &b->f->h;
    const struct gp_board_owner *me = gp_board_self();
    uint64_t mine = GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation);
    /* Never frees a lock another holder took over (it judged this image gone: cannot happen
     * while this image runs). */
    bool held = atomic_compare_exchange_strong(&h->lock, &mine, 0);
    gp_rank_release(GP_RANK_BOARD);
    if (!held)
        return;
    if (atomic_load(&h->lock_sleepers)) {
        atomic_fetch_add(&h->lock_wake, 1);
        futex(&h->lock_wake, FUTEX_WAKE, INT_MAX, NULL);
    }
}

void gp_board_notify(struct gp_board *b)
{
    atomic_fetch_add(&b->f->h.seq, 1);
    futex(&b->f->h.seq, FUTEX_WAKE, INT_MAX, NULL);
}

void gp_board_poke(const struct gp_board *b)
{
    futex(&b->live->seq, FUTEX_WAKE, INT_MAX, NULL);
}

bool gp_board_set_summary(struct gp_board *b, uint64_t summary)
{
    if (atomic_load(&b->f->h.summary) == summary)
        return false;
    atomic_store(&b->f->h.summary, summary);
    atomic_fetch_add(&b->f->h.summary_seq, 1);
    return true;
}

void gp_board_summary_wake(struct gp_board *b)
{
    futex(&b->f->h.summary_seq, FUTEX_WAKE, INT_MAX, NULL);
}

uint32_t gp_board_wait(struct gp_board *b, uint32_t seen, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    if (atomic_load(&b->f->h.seq) == seen)
        futex(&b->f->h.seq, FUTEX_WAIT, seen, &ts);
    return atomic_load(&b->f->h.seq);
}

/* Whether slot s (the owner word seen as word) is one a request of pid goes to. */
static bool requested(uint64_t word, const struct gp_board_slot *s, uint32_t pid, bool stream_only,
                      uint64_t stream)
{
    bool record = GP_SLOT_STATE(word) == GP_SLOT_PROCESS;
    /* A record has no stream (its 0 is not the null stream's): asked for the process only. */
    return GP_SLOT_OWNER(word) == pid &&
           (record ? !stream_only
                   : GP_SLOT_STATE(word) == GP_SLOT_LIVE && (!stream_only || s->stream == stream));
}

/* Writes a 32-bit word of b's file at offset (never through a mapping); 0 or -errno. */
static int write_word(const struct gp_board *b, uint32_t value, size_t offset)
{
    ssize_t n = pwrite(b->fd, &value, sizeof value, (off_t)offset);
    return n == (ssize_t)sizeof value ? 0 : n < 0 ? -errno : -ENODATA;
}

int gp_board_request_copy(struct gp_board *b, uint32_t pid, bool stream_only, uint64_t stream,
                          int priority)
{
    uint64_t queues = 0;
    bool asked = false;
    for (unsigned i = 0; i < gp_board_copy_slots(b->f); i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        uint64_t word = atomic_load(&s->owner);
        if (!requested(word, s, pid, stream_only, stream) || !gp_board_slot_is(b, s, pid))
            continue;
        size_t at = offsetof(struct gp_board_file, slots) + i * sizeof *s;
        uint32_t seq;
        int rc = write_word(b, (uint32_t)priority, at + offsetof(struct gp_board_slot, request));
        if (rc == 0)
            rc = gp_board_read_at(b->fd, &seq, sizeof seq,
                                  (off_t)(at + offsetof(struct gp_board_slot, request_seq)));
        if (rc == 0)
            rc = write_word(
                b, ((seq + 1) & ~GP_REQUEST_PROCESS) | (stream_only ? 0 : GP_REQUEST_PROCESS),
                at + offsetof(struct gp_board_slot, request_seq));
        if (rc != 0)
            return rc;
        asked = true;
        queues += GP_SLOT_STATE(word) == GP_SLOT_PROCESS ? atomic_load(&s->unused_queues) : 1;
    }
    if (!asked)
        return -ESRCH;
    uint32_t seq;
    int rc =
        gp_board_read_at(b->fd, &seq, sizeof seq, (off_t)offsetof(struct gp_board_header, seq));
    if (rc == 0)
        rc = write_word(b, seq + 1, offsetof(struct gp_board_header, seq));
    if (rc != 0)
        return rc;
    futex(&b->live->seq, FUTEX_WAKE, INT_MAX, NULL);
    return queues < INT_MAX ? (int)queues : INT_MAX;
}

int gp_board_request(struct gp_board *b, uint32_t pid, bool stream_only, uint64_t stream,
                     int priority)
{
    uint64_t queues = 0; /* the counts are the owners' word: summed wide, so garbage cannot wrap */
    bool asked = false;
    for (unsigned i = 0; i < gp_board_slots_used(b); i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        uint64_t word = atomic_load(&s->owner);
        bool record = GP_SLOT_STATE(word) == GP_SLOT_PROCESS;
        if (!requested(word, s, pid, stream_only, stream))
            continue;
        atomic_store(&s->request, priority);
        uint32_t seq = atomic_load(&s->request_seq), next;
        do
            next = ((seq + 1) & ~GP_REQUEST_PROCESS) | (stream_only ? 0 : GP_REQUEST_PROCESS);
        while (!atomic_compare_exchange_weak(&s->request_seq, &seq, next));
        asked = true;
        queues += record ? atomic_load(&s->unused_queues) : 1;
    }
    if (asked)
        gp_board_notify(b);
    return !asked ? -ESRCH : queues < INT_MAX ? (int)queues : INT_MAX;
}
