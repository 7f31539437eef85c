/*
 * sim_slots.c - the compute slots of a device (its CUs), and the dispatcher that grants them.
 *
 * A kernel takes a ticket when it reaches the head of its hardware queue, saying its queue's
 * priority, the slots it may use (its stream's CU mask) and how many it can fill (its width).
 * The dispatcher works as AMD's does (docs/simulator.md, "Hardware model"): it looks at the
 * waiting kernels by queue priority, most urgent first, and in ticket order within a priority;
 * each one that finds a free slot it may use starts on all such free slots up to its width, and
 * holds them until it ends: running kernels are never preempted, and a kernel that finds no
 * free slot in its mask does not hold up those behind it that do. With the default single slot
 * and streams of one priority this is plain ticket order, which is what makes a latency-critical
 * kernel wait behind best-effort ones. The table lives in private memory, or, with
 * HIPSIM_SHARED, in a file in /dev/shm that several processes map, so that they contend for one
 * device (queue priorities compare across processes, as the hardware scheduler's do).
 *
 * A process that shares the table may end at any instruction: returning from main ends its
 * hardware-queue threads wherever they are, and so does SIGKILL. Nothing it leaves may block the
 * others for good, so:
 *   - the mutex is robust: the next locker gets EOWNERDEAD and goes on;
 *   - the table makes sense after any prefix of an update, so going on needs no repair: every
 *     word is _Atomic (each store is whole, and stores stay in program order), a ticket's entry
 *     is written before the counter that issues the ticket, and whether a ticket is unfinished
 *     is read from its own entry, never from counters that two stores would keep in step;
 *   - waiters sleep on a futex on `seq`, which every finished ticket bumps, for at most
 *     SLOTS_WAIT_MS. Never on a process-shared condition variable: glibc's has no robust mode,
 *     and one whose process died inside a wait or a broadcast leaves its internal lock or
 *     group counts behind, blocking every other process forever (issue 21);
 *   - a waiter that has waited SLOTS_REAP_MS, and again every SLOTS_REAP_MS, frees the tickets
 *     of processes that have ended (sim_peer.c: zombies and reused pids included); a dead
 *     process's waiting ticket thus counts as if its kernel ran in no time;
 *   - so does a waiter with the tickets of a stopped process (SIGSTOP), whose kernels a real
 *     device would run on without it: its running kernels end there, and its waiting ones give
 *     way. Resumed, its threads find their tickets freed: a waiting one takes a new ticket, and
 *     releasing a freed one does nothing;
 *   - the file is built under a temporary name and linked into place, so that a creator that
 *     dies leaves at most a stray temporary file, never a device that is half set up.
 * A process that execs keeps its pid and start time: the new image frees the old image's
 * tickets when it opens the device.
 */
#include "sim_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLOTS_DIR "/dev/shm"
#define SLOTS_MAGIC 0x48495053u /* "HIPS" */
#define SLOTS_VERSION 3u
#define SLOTS_RING 1024u
#define SLOTS_WAIT_MS 10
#define SLOTS_REAP_MS 10
/* Processes looked at per reap, the oldest tickets' first: a dead one among them is found on the
 * first reap, one further back on a later reap, once those before it were freed. */
#define SLOTS_REAP_MAX 64

enum { TICKET_FREE, TICKET_WAITING, TICKET_RUNNING };

/* Ticket t's entry is ring[t % SLOTS_RING]; it speaks for t only while its ticket field is t. */
struct ticket_entry {
    _Atomic uint64_t ticket;
    _Atomic uint64_t start; /* the holder's start time (sim_peer.c) */
    _Atomic int32_t pid;
    _Atomic int32_t state;
    _Atomic int32_t priority; /* the request's (struct sim_slot_request) */
    _Atomic uint32_t width;
    _Atomic uint64_t mask;
    _Atomic uint64_t held; /* the slots it runs on, once RUNNING */
};

struct sim_slots {
    _Atomic uint32_t magic;
    uint32_t version;
    uint32_t size;
    uint32_t nslots;
    pthread_mutex_t mu;   /* robust; guards the fields below, seq aside */
    _Atomic uint32_t seq; /* bumped when tickets finish; waiters sleep on it */
    _Atomic uint64_t next_ticket;
    _Atomic uint64_t oldest; /* no ticket below it is unfinished */
    struct ticket_entry ring[SLOTS_RING];
};

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static void slots_init(struct sim_slots *s, int nslots)
{
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&s->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    s->version = SLOTS_VERSION;
    s->size = sizeof *s;
    s->nslots = (uint32_t)nslots;
    atomic_store(&s->magic, SLOTS_MAGIC);
}

static void slots_lock(struct sim_slots *s)
{
    int rc = pthread_mutex_lock(&s->mu);
    if (rc == EOWNERDEAD) /* nothing to repair: see the header */
        rc = pthread_mutex_consistent(&s->mu);
    if (rc != 0) {
        /* Cannot happen while every locker marks a dead holder's lock consistent. */
        fprintf(stderr, "hipsim: the compute slots' lock failed: %s\n", strerror(rc));
        abort();
    }
}

static void slots_unlock(struct sim_slots *s)
{
    pthread_mutex_unlock(&s->mu);
}

static struct ticket_entry *entry_of(struct sim_slots *s, uint64_t t)
{
    return &s->ring[t % SLOTS_RING];
}

/* Whether the issued ticket t is unfinished; the lock is held. */
static bool unfinished(struct sim_slots *s, uint64_t t)
{
    struct ticket_entry *e = entry_of(s, t);
    return atomic_load(&e->ticket) == t && atomic_load(&e->state) != TICKET_FREE;
}

/* After tickets finished, with the lock held: moves oldest up and bumps seq (wake() then wakes
 * the waiters, after the unlock, so that they do not wake into a held lock). */
static void finished(struct sim_slots *s)
{
    uint64_t next = atomic_load(&s->next_ticket), t = atomic_load(&s->oldest);
    while (t < next && !unfinished(s, t))
        t++;
    atomic_store(&s->oldest, t);
    atomic_fetch_add(&s->seq, 1);
}

static void wake(struct sim_slots *s)
{
    futex(&s->seq, FUTEX_WAKE, INT_MAX, NULL);
}

/* ---- opening ---- */

/* Tickets of this pid are an earlier image's (before an exec), as this image has taken none. */
static void forget_own(struct sim_slots *s)
{
    struct sim_peer me;
    sim_peer_self(&me);
    slots_lock(s);
    uint64_t next = atomic_load(&s->next_ticket);
    for (uint64_t t = atomic_load(&s->oldest); t < next; t++)
        if (unfinished(s, t) && atomic_load(&entry_of(s, t)->pid) == me.pid)
            atomic_store(&entry_of(s, t)->state, TICKET_FREE);
    finished(s);
    slots_unlock(s);
    wake(s);
}

static struct sim_slots *slots_private(int nslots)
{
    struct sim_slots *s = calloc(1, sizeof *s);
    if (s)
        slots_init(s, nslots);
    return s;
}

/* Builds the device in a private file and links it to path, so that no process ever maps one
 * that is half set up; 0, -EEXIST when another process was first (fine), or -errno. */
static int slots_create(const char *path, int nslots)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof tmp, "%s.%d.%llx.tmp", path, (int)getpid(),
                     (unsigned long long)sim_now_ns());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return -ENAMETOOLONG;
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = 0;
    struct sim_slots *s;
    if (ftruncate(fd, sizeof *s) < 0) {
        rc = -errno;
        goto out;
    }
    s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        rc = -errno;
        goto out;
    }
    slots_init(s, nslots);
    munmap(s, sizeof *s);
    rc = link(tmp, path) == 0 ? 0 : -errno;
out:
    unlink(tmp);
    close(fd);
    return rc;
}

static struct sim_slots *slots_shared(int device, int nslots, const char *name)
{
    char path[PATH_MAX];
    if (strchr(name, '/')) {
        fprintf(stderr, "hipsim: HIPSIM_SHARED=%s: the name may not contain '/'\n", name);
        return NULL;
    }
    snprintf(path, sizeof path, SLOTS_DIR "/hipsim-%u-%s-%d", (unsigned)getuid(), name, device);
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        int rc = slots_create(path, nslots);
        if (rc != 0 && rc != -EEXIST) {
            fprintf(stderr, "hipsim: cannot create shared device %s: %s\n", path, strerror(-rc));
            return NULL;
        }
        fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        fprintf(stderr, "hipsim: cannot open shared device %s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct sim_slots *s = NULL;
    const char *bad = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        bad = "is not a file of this user's alone (mode 0600)";
    else if (st.st_size != (off_t)sizeof *s)
        bad = "has another size";
    else if ((s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        s = NULL;
        bad = "cannot be mapped";
    } else if (atomic_load(&s->magic) != SLOTS_MAGIC || s->version != SLOTS_VERSION ||
               s->size != sizeof *s || s->nslots == 0) {
        bad = "has another layout";
    }
    close(fd);
    if (bad) {
        fprintf(stderr, "hipsim: shared device %s %s; remove it\n", path, bad);
        if (s)
            munmap(s, sizeof *s);
        return NULL;
    }
    if ((int)s->nslots != nslots)
        fprintf(stderr, "hipsim: shared device %s has %u compute slots; using them\n", path,
                s->nslots);
    forget_own(s);
    return s;
}

struct sim_slots *sim_slots_open(int device, int nslots, const char *shared_name)
{
    if (shared_name && shared_name[0]) {
        struct sim_slots *s = slots_shared(device, nslots, shared_name);
        if (s)
            return s;
        fprintf(stderr, "hipsim: device %d is private to this process\n", device);
    }
    return slots_private(nslots);
}

/* ---- waiting ---- */

/* Sleeps until a ticket finishes, or for SLOTS_WAIT_MS at most; the lock is held before and
 * after. A ticket that finishes after seq was read here makes the futex return at once. */
static void slots_wait(struct sim_slots *s)
{
    uint32_t seen = atomic_load(&s->seq);
    slots_unlock(s);
    struct timespec ts = {0, SLOTS_WAIT_MS * 1000000L};
    futex(&s->seq, FUTEX_WAIT, seen, &ts);
    slots_lock(s);
}

static bool same_peer(const struct sim_peer *a, const struct sim_peer *b)
{
    return a->pid == b->pid && a->start == b->start;
}

/* Frees the tickets of processes that have ended or are stopped (sim_peer_absent). Asking /proc
 * about them is too slow to do while every process waits for the lock, so the lock is taken twice
 * around it. */
static void reap_absent(struct sim_slots *s)
{
    struct sim_peer me, peers[SLOTS_REAP_MAX];
    int n = 0, dead = 0;
    sim_peer_self(&me);
    slots_lock(s);
    uint64_t next = atomic_load(&s->next_ticket);
    for (uint64_t t = atomic_load(&s->oldest); t < next && n < SLOTS_REAP_MAX; t++) {
        struct ticket_entry *e = entry_of(s, t);
        struct sim_peer p = {atomic_load(&e->pid), atomic_load(&e->start)};
        if (!unfinished(s, t) || same_peer(&p, &me))
            continue;
        int i = 0;
        while (i < n && !same_peer(&peers[i], &p))
            i++;
        if (i == n)
            peers[n++] = p;
    }
    slots_unlock(s);
    for (int i = 0; i < n; i++)
        if (sim_peer_absent(peers[i].pid, peers[i].start))
            peers[dead++] = peers[i];
    if (!dead)
        return;
    slots_lock(s);
    next = atomic_load(&s->next_ticket);
    for (uint64_t t = atomic_load(&s->oldest); t < next; t++) {
        struct ticket_entry *e = entry_of(s, t);
        struct sim_peer p = {atomic_load(&e->pid), atomic_load(&e->start)};
        for (int i = 0; i < dead && unfinished(s, t); i++)
            if (same_peer(&peers[i], &p))
                atomic_store(&e->state, TICKET_FREE);
    }
    finished(s);
    slots_unlock(s);
    wake(s);
}

/* One wait for a turn, the lock held before and after; once the caller has waited until
 * *reap_at (SLOTS_REAP_MS after its first wait, then every SLOTS_REAP_MS), it looks for dead
 * processes instead of sleeping. */
static void wait_turn(struct sim_slots *s, uint64_t *reap_at)
{
    uint64_t now = sim_now_ns();
    if (!*reap_at) {
        *reap_at = now + SLOTS_REAP_MS * 1000000ull;
    } else if (now >= *reap_at) {
        *reap_at = now + SLOTS_REAP_MS * 1000000ull;
        slots_unlock(s);
        reap_absent(s);
        slots_lock(s);
        return; /* the reap may have made way: look again before sleeping */
    }
    slots_wait(s);
}

static uint64_t all_slots(const struct sim_slots *s)
{
    return s->nslots >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << s->nslots) - 1;
}

unsigned sim_slots_count(const struct sim_slots *s)
{
    return s->nslots;
}

/* The lowest `width` slots of avail. */
static uint64_t lowest_slots(uint64_t avail, uint32_t width)
{
    uint64_t take = 0;
    for (; avail && width; width--) {
        uint64_t bit = avail & -avail;
        take |= bit;
        avail &= ~bit;
    }
    return take;
}

/* Whether the waiting ticket t may start now, and on which slots (0: not yet). The dispatch the
 * header describes is replayed over every waiting ticket; t starts when it gets slots. Priorities
 * are HIP's (-1, 0, 1) or, under SIM_FAULT_PRIORITY_IGNORED, all equal. */
static uint64_t granted(struct sim_slots *s, uint64_t t)
{
    uint64_t free_slots = all_slots(s), first = atomic_load(&s->oldest),
             next = atomic_load(&s->next_ticket);
    for (uint64_t k = first; k < next; k++)
        if (unfinished(s, k) && atomic_load(&entry_of(s, k)->state) == TICKET_RUNNING)
            free_slots &= ~atomic_load(&entry_of(s, k)->held);
    for (int32_t prio = -1; prio <= 1 && free_slots; prio++) {
        for (uint64_t k = first; k < next && free_slots; k++) {
            struct ticket_entry *e = entry_of(s, k);
            if (!unfinished(s, k) || atomic_load(&e->state) != TICKET_WAITING ||
                atomic_load(&e->priority) != prio)
                continue;
            uint64_t take =
                lowest_slots(free_slots & atomic_load(&e->mask), atomic_load(&e->width));
            if (k == t)
                return take;
            free_slots &= ~take;
        }
    }
    return 0;
}

uint64_t sim_slots_acquire(struct sim_slots *s, const struct sim_slot_request *r, uint64_t *held)
{
    struct sim_peer me;
    sim_peer_self(&me);
    int32_t prio = r->priority < -1 ? -1 : r->priority > 1 ? 1 : r->priority;
    uint64_t mask = r->mask & all_slots(s), reap_at = 0, t, take = 0;
    struct ticket_entry *e;
    slots_lock(s);
    do {
        /* The ring is full while the entry the next ticket needs still speaks for an unfinished
         * one. */
        while ((t = atomic_load(&s->next_ticket)) >= SLOTS_RING && unfinished(s, t - SLOTS_RING))
            wait_turn(s, &reap_at);
        /* The entry first, then the counter: a process that dies in between leaves an entry
         * that speaks for a ticket not yet issued, which the next taker overwrites. */
        e = entry_of(s, t);
        atomic_store(&e->ticket, t);
        atomic_store(&e->pid, me.pid);
        atomic_store(&e->start, me.start);
        atomic_store(&e->priority, prio);
        atomic_store(&e->mask, mask ? mask : all_slots(s));
        atomic_store(&e->width, r->width ? r->width : 1);
        atomic_store(&e->held, 0);
        atomic_store(&e->state, TICKET_WAITING);
        atomic_store(&s->next_ticket, t + 1);
        /* Freed while the process was stopped: it queues again, behind those that went on. */
        while (unfinished(s, t) && !(take = granted(s, t)))
            wait_turn(s, &reap_at);
    } while (!unfinished(s, t));
    atomic_store(&e->held, take);
    atomic_store(&e->state, TICKET_RUNNING);
    slots_unlock(s);
    *held = take;
    return t;
}

void sim_slots_release(struct sim_slots *s, uint64_t ticket)
{
    slots_lock(s);
    struct ticket_entry *e = entry_of(s, ticket);
    if (atomic_load(&e->ticket) == ticket)
        atomic_store(&e->state, TICKET_FREE);
    finished(s);
    slots_unlock(s);
    wake(s);
}
