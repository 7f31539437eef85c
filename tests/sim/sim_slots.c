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
 * The dispatcher of a real device is not a process: nothing a process does (dying, being
 * stopped) can stall it for the others. Here every process runs the dispatch itself, on the
 * shared table, so the table takes no lock at all: a process stopped (SIGSTOP) or killed while
 * it held one would stall every other process's kernels until it went on, which no GPU does.
 * Instead every change is one compare-and-swap on one word, and every word says whose it is:
 *   - a ticket's entry has a tag (ticket, holder, state) changed only by CAS; its other fields
 *     are written by the holder between claiming the entry (CLAIMED) and opening it for dispatch
 *     (WAITING), and readers check that the tag did not change while they read them;
 *   - each slot has an owner word, the tag of the kernel running on it or 0; a kernel takes its
 *     slots one by one by CAS from 0 (giving back what it took when one was taken first), then
 *     frees its entry; it gives them back by CAS from its own tag, so a slot freed meanwhile by
 *     someone else stays theirs;
 *   - a ticket is issued by claiming the entry (CAS), then counting it (CAS on next_ticket,
 *     which anyone who finds the entry claimed does too), so a taker stopped in between holds up
 *     nobody;
 *   - waiters sleep on a futex on `seq`, which every change of slots bumps, for at most
 *     SLOTS_WAIT_MS; the value is read before looking, so a change made while looking ends the
 *     sleep at once. Never on a process-shared condition variable or mutex (issue 21);
 *   - a waiter that has waited SLOTS_REAP_MS, and again every SLOTS_REAP_MS, frees the entries and
 *     slots of processes that have ended or are stopped (sim_peer.c: zombies and reused pids
 *     included), by CAS from the word it found, so it never frees what was taken again since.
 *     A real device runs what a stopped process queued on without it; here its kernels are its
 *     threads, stopped with it, so its running kernels end there and its waiting ones give way.
 *     Resumed, its threads find their entries freed: a waiting one takes a new ticket, and giving
 *     back slots taken since by others does nothing;
 *   - the file is built under a temporary name and linked into place, so that a creator that
 *     dies leaves at most a stray temporary file, never a device that is half set up.
 * One race is left, and taken: a taker stopped after claiming an entry and before writing its
 * fields, whose claim is freed and whose entry is claimed again by a ticket SLOTS_RING later,
 * overwrites that ticket's priority, mask and width with its own when it resumes (it then finds
 * its claim gone and takes another ticket): a kernel dispatched with another's request, never a
 * slot lost or held twice.
 * A process that execs keeps its pid and start time: the new image frees the old image's
 * entries and slots when it opens the device.
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
#define SLOTS_VERSION 4u
#define SLOTS_MAX 64 /* slots are bits of a uint64_t mask */
#define SLOTS_RING 1024u
#define SLOTS_WAIT_MS 10
#define SLOTS_REAP_MS 10
/* Processes looked at per reap, the oldest tickets' first: a dead one among them is found on the
 * first reap, one further back on a later reap, once those before it were freed. */
#define SLOTS_REAP_MAX 64

/* A tag: bits 0-1 the state, 2-23 the holder's pid (Linux pids are below 2^22), 24-39 the low
 * bits of its start time (sim_peer.c), 40-63 the low bits of the ticket (enough to tell apart
 * the tickets that share an entry of the ring over 2^14 turns). */
enum { TICKET_FREE, TICKET_CLAIMED, TICKET_WAITING, SLOT_RUNNING };
#define TAG_PID_MASK ((UINT64_C(1) << 22) - 1)
#define TAG_START_MASK SIM_PEER_START_MASK
#define TAG_TICKET_SHIFT 40

struct ticket_entry {
    _Atomic uint64_t tag;
    _Atomic int32_t priority; /* the request's (struct sim_slot_request) */
    _Atomic uint32_t width;
    _Atomic uint64_t mask;
};

struct sim_slots {
    _Atomic uint32_t magic;
    uint32_t version;
    uint32_t size;
    uint32_t nslots;
    _Atomic uint32_t seq; /* bumped when slots are taken or freed; waiters sleep on it */
    _Atomic uint64_t next_ticket;
    _Atomic uint64_t oldest;              /* no ticket below it is unfinished */
    _Atomic uint64_t owner[SLOTS_MAX];    /* the tag of the kernel running on slot i, or 0 */
    struct ticket_entry ring[SLOTS_RING]; /* ticket t's entry is ring[t % SLOTS_RING] */
};

static uint64_t tag_of(uint64_t t, const struct sim_peer *holder, unsigned state)
{
    return t << TAG_TICKET_SHIFT | (holder->start & TAG_START_MASK) << 24 |
           ((uint64_t)holder->pid & TAG_PID_MASK) << 2 | state;
}

static unsigned tag_state(uint64_t tag)
{
    return (unsigned)(tag & 3);
}

static bool tag_is_ticket(uint64_t tag, uint64_t t)
{
    return tag >> TAG_TICKET_SHIFT == (t << TAG_TICKET_SHIFT) >> TAG_TICKET_SHIFT;
}

static struct sim_peer tag_holder(uint64_t tag)
{
    return (struct sim_peer){(int32_t)(tag >> 2 & TAG_PID_MASK), tag >> 24 & TAG_START_MASK};
}

static bool same_peer(const struct sim_peer *a, const struct sim_peer *b)
{
    return a->pid == b->pid && a->start == b->start;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

static void slots_init(struct sim_slots *s, int nslots)
{
    s->version = SLOTS_VERSION;
    s->size = sizeof *s;
    s->nslots = (uint32_t)(nslots > SLOTS_MAX ? SLOTS_MAX : nslots);
    /* Ticket 0 would have the tag of a blank entry. */
    atomic_store(&s->next_ticket, 1);
    atomic_store(&s->oldest, 1);
    atomic_store(&s->magic, SLOTS_MAGIC);
}

static struct ticket_entry *entry_of(struct sim_slots *s, uint64_t t)
{
    return &s->ring[t % SLOTS_RING];
}

/* Whether the issued ticket t is unfinished: its entry is claimed or waiting for it. */
static bool unfinished(struct sim_slots *s, uint64_t t)
{
    uint64_t tag = atomic_load(&entry_of(s, t)->tag);
    return tag_is_ticket(tag, t) && tag_state(tag) != TICKET_FREE;
}

/* Moves oldest past the finished tickets; losing the race to another mover only leaves it lower,
 * which is still true (a finished ticket never becomes unfinished). */
static void advance_oldest(struct sim_slots *s)
{
    uint64_t from = atomic_load(&s->oldest), next = atomic_load(&s->next_ticket), t = from;
    while (t < next && !unfinished(s, t))
        t++;
    if (t != from)
        atomic_compare_exchange_strong(&s->oldest, &from, t);
}

/* After slots were taken or freed: those waiting look again. */
static void changed(struct sim_slots *s)
{
    atomic_fetch_add(&s->seq, 1);
    futex(&s->seq, FUTEX_WAKE, INT_MAX, NULL);
}

static bool among(const struct sim_peer *peers, int n, uint64_t tag)
{
    struct sim_peer p = tag_holder(tag);
    for (int i = 0; i < n; i++)
        if (same_peer(&peers[i], &p))
            return true;
    return false;
}

/* Frees the ticket entries and slots held by any of peers, by CAS from the tag found, so what was
 * freed and taken again meanwhile stays taken. */
static void free_held_by(struct sim_slots *s, const struct sim_peer *peers, int n)
{
    for (unsigned i = 0; i < s->nslots; i++) {
        uint64_t tag = atomic_load(&s->owner[i]);
        if (tag && among(peers, n, tag))
            atomic_compare_exchange_strong(&s->owner[i], &tag, 0);
    }
    uint64_t next = atomic_load(&s->next_ticket);
    for (uint64_t t = atomic_load(&s->oldest); t < next; t++) {
        struct ticket_entry *e = entry_of(s, t);
        uint64_t tag = atomic_load(&e->tag);
        if (unfinished(s, t) && among(peers, n, tag))
            atomic_compare_exchange_strong(&e->tag, &tag, tag & ~UINT64_C(3));
    }
    advance_oldest(s);
    changed(s);
}

/* ---- opening ---- */

/* Entries and slots of this pid are an earlier image's (before an exec), as this image has taken
 * none. */
static void forget_own(struct sim_slots *s)
{
    struct sim_peer me;
    sim_peer_self(&me);
    free_held_by(s, &me, 1);
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
static int slots_create(const char *path, int nslots, bool shared_users)
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
    if ((shared_users && fchmod(fd, 0666) < 0) || ftruncate(fd, sizeof *s) < 0) {
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

static struct sim_slots *slots_shared(int device, int nslots, const char *name, bool shared_users)
{
    char path[PATH_MAX];
    if (strchr(name, '/')) {
        fprintf(stderr, "hipsim: HIPSIM_SHARED=%s: the name may not contain '/'\n", name);
        return NULL;
    }
    if (shared_users)
        snprintf(path, sizeof path, SLOTS_DIR "/hipsim-all-%s-%d", name, device);
    else
        snprintf(path, sizeof path, SLOTS_DIR "/hipsim-%u-%s-%d", (unsigned)getuid(), name, device);
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        int rc = slots_create(path, nslots, shared_users);
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
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (!shared_users && (st.st_uid != getuid() || (st.st_mode & 077))))
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

struct sim_slots *sim_slots_open(int device, int nslots, const char *shared_name, bool shared_users)
{
    if (shared_name && shared_name[0]) {
        struct sim_slots *s = slots_shared(device, nslots, shared_name, shared_users);
        if (s)
            return s;
        fprintf(stderr, "hipsim: device %d is private to this process\n", device);
    }
    return slots_private(nslots);
}

/* ---- waiting ---- */

/* Adds tag's holder to peers (n of them so far, at most SLOTS_REAP_MAX) unless it is there or me.
 */
static void note_holder(struct sim_peer *peers, int *n, uint64_t tag, const struct sim_peer *me)
{
    struct sim_peer p = tag_holder(tag);
    if (!same_peer(&p, me) && *n < SLOTS_REAP_MAX && !among(peers, *n, tag))
        peers[(*n)++] = p;
}

/* Frees the entries and slots of processes that have ended or are stopped (sim_peer_absent):
 * first the holders are gathered, then /proc is asked about each, then what they hold is freed. */
static void reap_absent(struct sim_slots *s)
{
    struct sim_peer me, peers[SLOTS_REAP_MAX];
    int n = 0, absent = 0;
    sim_peer_self(&me);
    for (unsigned i = 0; i < s->nslots; i++) {
        uint64_t tag = atomic_load(&s->owner[i]);
        if (tag)
            note_holder(peers, &n, tag, &me);
    }
    uint64_t next = atomic_load(&s->next_ticket);
    for (uint64_t t = atomic_load(&s->oldest); t < next; t++)
        if (unfinished(s, t))
            note_holder(peers, &n, atomic_load(&entry_of(s, t)->tag), &me);
    for (int i = 0; i < n; i++)
        if (sim_peer_absent(peers[i].pid, peers[i].start))
            peers[absent++] = peers[i];
    if (absent)
        free_held_by(s, peers, absent);
}

/* One wait for a turn, given the value of seq read before the caller looked; once the caller has
 * waited until *reap_at (SLOTS_REAP_MS after its first wait, then every SLOTS_REAP_MS), it looks
 * for absent processes instead of sleeping. */
static void wait_turn(struct sim_slots *s, uint32_t seen, uint64_t *reap_at)
{
    uint64_t now = sim_now_ns();
    if (!*reap_at) {
        *reap_at = now + SLOTS_REAP_MS * 1000000ull;
    } else if (now >= *reap_at) {
        *reap_at = now + SLOTS_REAP_MS * 1000000ull;
        reap_absent(s);
        return; /* the reap may have made way: look again before sleeping */
    }
    struct timespec ts = {0, SLOTS_WAIT_MS * 1000000L};
    futex(&s->seq, FUTEX_WAIT, seen, &ts);
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
    uint64_t free_slots = 0, first = atomic_load(&s->oldest), next = atomic_load(&s->next_ticket);
    for (unsigned i = 0; i < s->nslots; i++)
        if (!atomic_load(&s->owner[i]))
            free_slots |= UINT64_C(1) << i;
    for (int32_t prio = -1; prio <= 1 && free_slots; prio++) {
        for (uint64_t k = first; k < next && free_slots; k++) {
            struct ticket_entry *e = entry_of(s, k);
            uint64_t tag = atomic_load(&e->tag);
            if (!tag_is_ticket(tag, k) || tag_state(tag) != TICKET_WAITING ||
                atomic_load(&e->priority) != prio)
                continue;
            uint64_t take =
                lowest_slots(free_slots & atomic_load(&e->mask), atomic_load(&e->width));
            if (atomic_load(&e->tag) != tag) /* finished (or freed) while read */
                continue;
            if (k == t)
                return take;
            free_slots &= ~take;
        }
    }
    return 0;
}

/* Gives back the slots of held that still belong to the kernel tagged running. */
static void give_slots(struct sim_slots *s, uint64_t held, uint64_t running)
{
    for (; held; held &= held - 1) {
        uint64_t mine = running;
        atomic_compare_exchange_strong(&s->owner[__builtin_ctzll(held)], &mine, 0);
    }
}

/* Takes the slots of take for the kernel tagged running, all or none. */
static bool take_slots(struct sim_slots *s, uint64_t take, uint64_t running)
{
    for (uint64_t left = take; left; left &= left - 1) {
        unsigned i = (unsigned)__builtin_ctzll(left);
        uint64_t none = 0;
        if (!atomic_compare_exchange_strong(&s->owner[i], &none, running)) {
            give_slots(s, take & ~left, running);
            return false;
        }
    }
    return true;
}

static bool own_all(struct sim_slots *s, uint64_t held, uint64_t running)
{
    for (; held; held &= held - 1)
        if (atomic_load(&s->owner[__builtin_ctzll(held)]) != running)
            return false;
    return true;
}

/* Issues a ticket for the request and opens it for dispatch; returns it. */
static uint64_t take_ticket(struct sim_slots *s, const struct sim_peer *me, int32_t prio,
                            uint64_t mask, uint32_t width, uint64_t *reap_at)
{
    for (;;) {
        uint32_t seen = atomic_load(&s->seq);
        uint64_t t = atomic_load(&s->next_ticket);
        struct ticket_entry *e = entry_of(s, t);
        uint64_t tag = atomic_load(&e->tag);
        if (tag_is_ticket(tag, t)) { /* claimed by a taker that has not counted it yet */
            atomic_compare_exchange_strong(&s->next_ticket, &t, t + 1);
            continue;
        }
        if (tag_state(tag) != TICKET_FREE) { /* the ring is full: it speaks for t - SLOTS_RING */
            wait_turn(s, seen, reap_at);
            continue;
        }
        uint64_t claimed = tag_of(t, me, TICKET_CLAIMED);
        if (!atomic_compare_exchange_strong(&e->tag, &tag, claimed))
            continue;
        uint64_t counted = t;
        atomic_compare_exchange_strong(&s->next_ticket, &counted, t + 1);
        atomic_store(&e->priority, prio);
        atomic_store(&e->mask, mask);
        atomic_store(&e->width, width);
        if (atomic_compare_exchange_strong(&e->tag, &claimed, tag_of(t, me, TICKET_WAITING)))
            return t;
        /* Freed while this process was stopped: it takes another, behind those that went on. */
    }
}

uint64_t sim_slots_acquire(struct sim_slots *s, const struct sim_slot_request *r, uint64_t *held)
{
    struct sim_peer me;
    sim_peer_self(&me);
    int32_t prio = r->priority < -1 ? -1 : r->priority > 1 ? 1 : r->priority;
    uint64_t mask = r->mask & all_slots(s), reap_at = 0;
    mask = mask ? mask : all_slots(s);
    for (;;) {
        uint64_t t = take_ticket(s, &me, prio, mask, r->width ? r->width : 1, &reap_at);
        struct ticket_entry *e = entry_of(s, t);
        uint64_t waiting = tag_of(t, &me, TICKET_WAITING), running = tag_of(t, &me, SLOT_RUNNING);
        for (;;) {
            uint32_t seen = atomic_load(&s->seq);
            if (atomic_load(&e->tag) != waiting)
                break; /* freed while this process was stopped */
            uint64_t take = granted(s, t);
            if (take && take_slots(s, take, running)) {
                bool freed_here =
                    atomic_compare_exchange_strong(&e->tag, &waiting, waiting & ~UINT64_C(3));
                /* Else a reaper freed the entry while this process was stopped after taking
                 * the slots, and may have freed them as well. */
                if (freed_here || own_all(s, take, running)) {
                    advance_oldest(s);
                    changed(s);
                    *held = take;
                    return t;
                }
                give_slots(s, take, running);
                changed(s);
                break;
            }
            wait_turn(s, seen, &reap_at);
        }
    }
}

void sim_slots_release(struct sim_slots *s, uint64_t ticket, uint64_t held)
{
    struct sim_peer me;
    sim_peer_self(&me);
    give_slots(s, held, tag_of(ticket, &me, SLOT_RUNNING));
    changed(s);
}
