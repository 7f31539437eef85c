/*
 * sched_board.c - see sched_board.h.
 *
 * A board is joined the first time a queue appears on its device, and its listener thread
 * starts then. The listener sleeps on the board's sequence word: when it changes, another
 * process changed gates (or asked for a priority), so this process's held threads look at
 * theirs again. It also wakes on a timeout, every LIVENESS_HELD_NS while one of our queues is
 * held back or held by gates (a dead process's active slot must not hold it for long) and every
 * LIVENESS_IDLE_NS otherwise, to reclaim the slots of processes that are gone.
 *
 * Failure to use a board (no identity for the device, a refused file, a full board) is one
 * warning; the device's queues are then scheduled among this process's own.
 *
 * Level 2's gates wait on the board's own lines where the runtime registers them, and on a
 * private copy of them where it refuses (mirrored gates, devgate.h): the listener then also
 * copies the board's words of our lines into the copy on every wake, which is how another
 * process's decision reaches our streams (it wakes us when it changes a mirrored line:
 * scheduler.c).
 *
 * The process's record (board.h) is claimed with the board and freed at exit. It holds the count
 * of the device's queues that never joined scheduling: kept here in an atomic (queues are created
 * and released under no lock of ours, or under the registry's, where the scheduling lock cannot
 * be taken), and stored into the record after every change, again until the store is of the
 * latest count, so concurrent changes leave the latest there.
 */
#include "sched_board.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "xq_admission.h"
#include "gate_copy.h"
#include "gpuprio.h"
#include "gp_clock.h"
#include "gp_lockrank.h"
#include "gp_log.h"
#include "gp_options.h"
#include "gp_priority.h"
#include "tenants.h"

#define LIVENESS_HELD_NS 20000000ull
#define LIVENESS_IDLE_NS 1000000000ull

static struct device_board {
    bool tried;
    _Atomic bool ok;
    bool listening;
    bool warned_full, warned_record;
    bool warned_given_up;    /* said that the board was given up (under the scheduling lock) */
    _Atomic bool say_usable; /* taken back since: to be said once the board is unlocked */
    _Atomic bool redecide;
    _Atomic bool dozing; /* the listener sleeps the long period: nothing of ours was held */
    struct gp_board b;
    pthread_t listener;
    struct gp_board_slot *_Atomic record; /* this process's record on the board, or NULL */
    _Atomic uint32_t unused;              /* queues on the device that never joined */
    _Atomic uint32_t unslotted;           /* queues that joined when the board was full */
    _Atomic uint32_t publishers;          /* threads storing the count into the record */
    /* The GEMM counts (sb_record_gemm), kept for the record, whenever it is claimed. */
    _Atomic uint64_t gemm_sliced, gemm_slices, gemm_whole[GP_RECORD_GEMM_WHOLE_COUNT];
    _Atomic uint32_t record_request_seen; /* written by the listener, under the scheduling lock */
    struct dg_region gates;  /* the board's gate lines, as this process registered them */
    _Atomic bool gates_lost; /* a teardown unregistered them: registered again on next use */
    /* Mirrored gates: the slots whose lines the listener copies into gates.mirror (ours). */
    _Atomic uint64_t mirrored[GP_BOARD_SLOTS / 64];
    int copy_fd; /* 1 + the descriptor of gates.mirror's file, which deciders write too; 0: none */
    struct gc_peers peers;    /* the copies of our user's other processes (board lock) */
    uint64_t gate_ns;         /* Level 2: the predicted GPU time one gate may hold back */
    struct xq_mps mps;        /* whether the process is an MPS client on the device */
    struct tn_device tenants; /* other users' boards of the device (shared directory only) */
    /* At exit: our slots kept until the process ends, their gates pinned open (leave_all). */
    uint64_t kept[GP_BOARD_SLOTS / 64];
} boards[SB_MAX_DEVICES];

static pthread_mutex_t boards_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sb_device_ops device_ops;
static struct sb_upcalls up;
static bool enabled;
static uint64_t watchdog_ns; /* GPUPRIO_WATCHDOG_MS: when an active queue counts as stalled */
static _Atomic bool stopping;
static bool exit_hook;

void sb_configure(const struct sb_upcalls *upcalls)
{
    enabled = gp_opt_choice(GP_OPT_BOARD) == 0; /* on */
    watchdog_ns = 1000000 * gp_opt_uint(GP_OPT_WATCHDOG_MS);
    up = *upcalls;
}

void sb_set_device_ops(const struct sb_device_ops *ops)
{
    device_ops = *ops;
}

static struct device_board *usable(int device)
{
    if (device < 0 || device >= SB_MAX_DEVICES || !atomic_load(&boards[device].ok))
        return NULL;
    return &boards[device];
}

bool sb_has_board(int device)
{
    return usable(device) != NULL;
}

bool sb_leaving(void)
{
    return atomic_load(&stopping);
}

bool sb_foreign(const struct gp_board_slot *s)
{
    const struct gp_board_owner *me = gp_board_self();
    return GP_SLOT_OWNER(atomic_load(&s->owner)) != me->pid || s->incarnation != me->incarnation;
}

/* What other processes' queues of a device at a priority or above tell a suspended queue's
 * watchdog (xq_admission.h's struct xq_holders): their completions, above the priority and at it,
 * and whether one above it is active as decisions take it (not stalled). Our own slots are
 * skipped: admission counts this process's queues. Other users' boards are read as decisions
 * read them (tenants.c: live slots of owners not found dead, each priority within its user's cap,
 * active as decided); no read goes past a board's slots, and a priority no gpuprio writes counts
 * for nothing, as it does in decisions. */
struct holders_scan {
    int priority;
    struct xq_holders *h;
};

static void add_tenant_holder(const struct sched_queue *q, struct xq_state *st, void *arg)
{
    struct holders_scan *p = arg;
    xq_holders_add(p->h, q->priority, p->priority,
                   atomic_load_explicit(&st->completed, memory_order_relaxed), q->active);
}

void sb_holders_elsewhere(int device, int priority, struct xq_holders *h)
{
    struct device_board *d = usable(device);
    for (unsigned i = 0; d && i < gp_board_slots_used(&d->b); i++) {
        struct gp_board_slot *s = &d->b.f->slots[i];
        int its = atomic_load_explicit(&s->st.priority, memory_order_relaxed);
        if (GP_SLOT_STATE(atomic_load(&s->owner)) != GP_SLOT_LIVE || !sb_foreign(s) ||
            !gp_priority_valid(its))
            continue;
        uint64_t gate = atomic_load(&s->st.gate);
        xq_holders_add(h, its, priority,
                       atomic_load_explicit(&s->st.completed, memory_order_relaxed),
                       atomic_load(&s->st.active) && !(gate & (XQ_GATE_STALLED | XQ_GATE_LEFT)));
    }
    if (d)
        tn_foreach_queue(&d->tenants, add_tenant_holder, &(struct holders_scan){priority, h});
}

/* ---- reclaiming dead owners' slots ---- */

/*
 * Owners seen alive during one scan: a process has one slot per queue, often dozens (PyTorch
 * keeps pools of streams), and looking each up in /proc again would cost a few system calls per
 * slot, every LIVENESS_HELD_NS.
 */
struct alive_owner {
    uint32_t pid;
    uint64_t start, incarnation;
};
struct alive_cache {
    struct alive_owner seen[32];
    unsigned n;
};

static bool live_owner_alive(struct alive_cache *c, const struct gp_board *b,
                             const struct gp_board_slot *s, uint32_t pid)
{
    uint64_t start = s->owner_start, incarnation = s->incarnation;
    for (unsigned i = 0; i < c->n; i++)
        if (c->seen[i].pid == pid && c->seen[i].start == start &&
            c->seen[i].incarnation == incarnation)
            return true;
    if (!gp_board_owner_alive(b, s))
        return false;
    if (c->n < sizeof c->seen / sizeof c->seen[0])
        c->seen[c->n++] = (struct alive_owner){pid, start, incarnation};
    return true;
}

/* The listener's memory of claimed slots: since when each has been claimed by the same owner
 * word (gp_board_claimer_gone). */
struct claim_watch {
    uint64_t word, since;
};

/*
 * Frees the slots of owners that are gone; true when it freed any. A record is judged like a
 * queue's slot: by its owner's identity, so an exec'd image's goes too. A claimed slot (being
 * filled in or freed) has no identity of its own yet: by its lock and pid, and with claims (the
 * listener's, at now) by how long it has stayed claimed, which frees one whose claimer was killed
 * whatever its pid says (judged by pid alone, a claimer killed before it wrote its pid namespace
 * held a new slot for ever: chaos.short_lived under TSan). *pending: a claimed slot not judged
 * gone yet (look again soon).
 */
static bool reclaim_dead(struct device_board *d, struct claim_watch *claims, uint64_t now,
                         bool *pending)
{
    bool any = false;
    struct alive_cache alive = {.n = 0};
    for (unsigned i = 0; i < gp_board_slots_used(&d->b); i++) {
        struct gp_board_slot *s = &d->b.f->slots[i];
        uint64_t word = atomic_load(&s->owner), claimed_ns = 0;
        if (claims && claims[i].word != word)
            claims[i] = (struct claim_watch){word, now};
        if (!word || !sb_foreign(s))
            continue;
        if (claims && !GP_SLOT_PUBLISHED(word))
            claimed_ns = now - claims[i].since;
        bool dead = GP_SLOT_PUBLISHED(word)
                        ? !live_owner_alive(&alive, &d->b, s, GP_SLOT_OWNER(word))
                        : gp_board_claimer_gone(&d->b, s, claimed_ns);
        if (!dead && !GP_SLOT_PUBLISHED(word) && pending)
            *pending = true;
        if (!dead || gp_board_lock(&d->b) != 0)
            continue;
        bool freed = atomic_load(&s->owner) == word;
        if (freed) {
            gc_forget(&d->peers, atomic_load(&s->incarnation), sizeof d->b.f->gates);
            gp_board_free(&d->b, s);
        }
        gp_board_unlock(&d->b);
        if (freed) /* logged outside the lock: a stalled stderr must not hold other processes */
            gp_log(GP_LOG_INFO, "reclaimed the slot of process %u on %s (it is gone)",
                   GP_SLOT_OWNER(word), d->b.path);
        any |= freed;
    }
    return any;
}

/* ---- stalled queues ---- */

/*
 * A queue of another process that stays active while nothing of it is submitted or completed for
 * GPUPRIO_WATCHDOG_MS holds every queue below it on the device back for as long: its process was
 * stopped (SIGSTOP, a debugger) or hangs, and so does its watcher, which would make it idle. The
 * listener of a process that has queues held back watches the active slots of others for that,
 * and marks such a queue stalled (XQ_GATE_STALLED): decisions take it for idle until it moves
 * again and its owner clears the mark (xq_admission.c). This is the watchdog across processes: the
 * host wait's own watchdog lets one call through per period only, and a gate closed on the
 * device has no watchdog at all. Like the host's, it cannot tell a hang from a single kernel that
 * runs longer.
 */
struct stall_watch {
    uint64_t owner, incarnation; /* whose queue the slot held when last seen */
    uint64_t moves;              /* its submitted and completed commands then */
    uint64_t since;              /* when they last changed */
};

static bool mark_stalled(struct device_board *d, struct stall_watch *seen, uint64_t now)
{
    bool any = false;
    for (unsigned i = 0; i < gp_board_slots_used(&d->b); i++) {
        struct gp_board_slot *s = &d->b.f->slots[i];
        struct stall_watch *w = &seen[i];
        uint64_t owner = atomic_load(&s->owner), incarnation = atomic_load(&s->incarnation);
        uint64_t moves = atomic_load(&s->st.submitted) + atomic_load(&s->st.completed);
        if (GP_SLOT_STATE(owner) != GP_SLOT_LIVE || !sb_foreign(s) || !atomic_load(&s->st.active) ||
            (atomic_load(&s->st.gate) & XQ_GATE_STALLED) || owner != w->owner ||
            incarnation != w->incarnation || moves != w->moves) {
            *w = (struct stall_watch){owner, incarnation, moves, now};
            continue;
        }
        if (now - w->since < watchdog_ns)
            continue;
        atomic_fetch_or(&s->st.gate, XQ_GATE_STALLED);
        w->since = now;
        any = true;
        gp_log(GP_LOG_INFO,
               "queue %#llx of process %u on %s was active with nothing submitted or completed "
               "for %llu ms: it holds nobody back until it moves again",
               (unsigned long long)s->stream, GP_SLOT_OWNER(owner), d->b.path,
               (unsigned long long)(watchdog_ns / 1000000));
    }
    return any;
}

/* A free slot of d's board; when there is none, the slots of owners that are gone are reclaimed
 * first (the listener does so only every liveness period, and a crash storm can fill a board
 * with them in less). NULL when the board is full of live owners. */
static struct gp_board_slot *claim_slot(struct device_board *d)
{
    static _Atomic bool refused_said;
    struct gp_board_slot *s = gp_board_claim(&d->b);
    if (!s && reclaim_dead(d, NULL, 0, NULL)) {
        s = gp_board_claim(&d->b);
        atomic_store(&d->redecide, true); /* what the dead held back is decided on again */
        gp_board_notify(&d->b);
    }
    if (s && atomic_load(&s->liveness_lock) == GP_LIVENESS_PID &&
        !atomic_exchange(&refused_said, true))
        gp_log(GP_LOG_WARN,
               "the liveness lock of a slot on %s was refused (another process holds a lock on "
               "it; any user who can read the board can): the slot is judged by this process's "
               "pid instead, which processes in other pid namespaces cannot do "
               "(docs/board.md, \"Processes that die\")",
               d->b.path);
    return s;
}

/* Mirrored gates (devgate.h): copies the board's words of our lines into the private copies our
 * streams' gates wait on. On every wake of the listener: another process that changes one of
 * them wakes it (scheduler.c), and a copy that crossed a later change is put right by the copy
 * that change brings. */
static void mirror_own(struct device_board *d)
{
    if (!d->gates.mirror)
        return;
    for (unsigned w = 0; w < GP_BOARD_SLOTS / 64; w++)
        for (uint64_t bits = atomic_load(&d->mirrored[w]); bits; bits &= bits - 1)
            dg_mirror(&d->gates, &d->b.f->gates[w * 64 + (unsigned)__builtin_ctzll(bits)]);
}

/* Whether slot i of d's board is one we keep until the process ends (leave_one). */
static bool kept(const struct device_board *d, size_t i)
{
    return d->kept[i / 64] >> (i % 64) & 1;
}

static void *listener_main(void *arg)
{
    struct device_board *d = arg;
    int device = (int)(d - boards);
    prctl(PR_SET_NAME, (unsigned long)"gpuprio-board", 0, 0, 0);
    xq_sched_thread_role("a board listener");
    uint32_t seen = atomic_load(&d->b.f->h.seq);
    uint64_t next_check = 0, held_since = 0;
    struct stall_watch *watch = calloc(GP_BOARD_SLOTS, sizeof *watch);   /* NULL: not watched */
    struct claim_watch *claims = calloc(GP_BOARD_SLOTS, sizeof *claims); /* NULL: pid only */
    bool watching_others = false; /* another user's queue is taken for stalled: look often */
    bool claim_pending = false;   /* a claimed slot may be a dead claimer's: look again soon */
    while (!atomic_load(&stopping)) {
        /* Dozing is said before looking: a queue of ours held after the look finds it said
         * (sb_thread_held) and wakes us, one held before it is seen by the look. Said after, a
         * hold between the two was lost, and a dead holder then held us for the long period. */
        atomic_store(&d->dozing, true);
        bool suspended, held = up.device_held(device, &suspended), poked;
        bool often = held || watching_others;
        if (held)
            atomic_store(&d->dozing, false);
        uint64_t period = up.share_turn(device) ? SB_SHARE_LOOK_NS
                          : often               ? LIVENESS_HELD_NS
                          : claim_pending       ? GP_BOARD_CLAIM_MAX_NS
                                                : LIVENESS_IDLE_NS;
        uint32_t now_seq = tn_wait(&d->tenants, &d->b, seen, period, &poked);
        atomic_store(&d->dozing, false);
        mirror_own(d); /* first: what another process's decision changed reaches the device */
        if (atomic_load(&stopping))
            break;
        bool decide = atomic_exchange(&d->redecide, false);
        if (now_seq != seen) {
            seen = now_seq;
            xq_wake_waiters();
        }
        /* Another user's board moved, or a new one may have appeared (a poke, or the directory
         * changed): listed again, which reads every board again too. Not skipped when a summary
         * moved as well: the newcomer would wait for the next look. */
        decide |= poked ? tn_refresh(&d->tenants, false) : tn_summaries_moved(&d->tenants);
        uint64_t now = gp_now_ns();
        held = up.device_held(device, &suspended);
        if ((held || watching_others) && next_check > now + LIVENESS_HELD_NS)
            next_check = now; /* held since the last check was planned: look at once */
        if (now >= next_check) {
            decide |= tn_look(&d->tenants, now, watchdog_ns, &watching_others);
            claim_pending = false;
            decide |= reclaim_dead(d, claims, now, &claim_pending);
            next_check = now + (held || watching_others ? LIVENESS_HELD_NS
                                : claim_pending         ? GP_BOARD_CLAIM_MAX_NS
                                                        : LIVENESS_IDLE_NS);
            if (held && watch)
                decide |= mark_stalled(d, watch, now);
            /* The decision that suspends us may be stale: a process stopped between a queue of
             * its going idle and its deciding leaves it in our gate, and nobody may decide again
             * (everyone below it suspended by it, each one's own watchdog resetting the others').
             * Suspended for longer than the watchdog, we decide again on every look. */
            held_since = !suspended ? 0 : held_since ? held_since : now;
            decide |= held_since && now - held_since >= watchdog_ns;
        }
        up.changed(device, decide);
    }
    free(watch);
    free(claims);
    return NULL;
}

/* ---- the process's record ---- */

/* Stores the device's unused and unslotted counts into the record until what is stored is the
 * latest counts (see the top of the file). */
static void publish_unused(struct device_board *d)
{
    atomic_fetch_add(&d->publishers, 1); /* the record is not freed under us: free_own_slots */
    struct gp_board_slot *r = atomic_load(&d->record);
    uint32_t n, m;
    do {
        n = atomic_load(&d->unused);
        m = atomic_load(&d->unslotted);
        if (r) {
            atomic_store(&r->unused_queues, n);
            atomic_store(&r->unslotted_queues, m);
        }
    } while (r && (atomic_load(&d->unused) != n || atomic_load(&d->unslotted) != m));
    atomic_fetch_sub(&d->publishers, 1);
}

/* Raises *kept to at least value. */
static void keep_max(_Atomic uint64_t *kept, uint64_t value)
{
    uint64_t seen = atomic_load(kept);
    while (seen < value && !atomic_compare_exchange_weak(kept, &seen, value))
        ;
}

/* Stores what is kept of a count into the record's word until it is the latest (as
 * publish_unused). */
static void store_latest64(_Atomic uint64_t *word, _Atomic uint64_t *kept)
{
    uint64_t v;
    do {
        v = atomic_load(kept);
        atomic_store(word, v);
    } while (atomic_load(kept) != v);
}

static void store_latest32(_Atomic uint32_t *word, _Atomic uint64_t *kept)
{
    uint64_t v;
    do {
        v = atomic_load(kept);
        atomic_store(word, (uint32_t)v);
    } while (atomic_load(kept) != v);
}

/* Stores the device's GEMM counts into the record, if it has one. */
static void publish_gemm(struct device_board *d)
{
    atomic_fetch_add(&d->publishers, 1); /* the record is not freed under us: free_own_slots */
    struct gp_board_slot *r = atomic_load(&d->record);
    if (r) {
        store_latest64(&r->gemm.sliced, &d->gemm_sliced);
        store_latest64(&r->gemm.slices, &d->gemm_slices);
        for (int i = 0; i < GP_RECORD_GEMM_WHOLE_COUNT; i++)
            store_latest32(&r->gemm.whole[i], &d->gemm_whole[i]);
    }
    atomic_fetch_sub(&d->publishers, 1);
}

/* The board's reasons (board.h's GP_RECORD_GEMM_WHOLE) among the plan's, by the names they share:
 * the reasons a user must know of; the others are not shown. The two lists name the same reasons:
 * each of the board's is one of the plan's (by name) marked shown, and as many are marked. */
static const struct {
    enum gemm_whole_reason plan;
    enum gp_record_gemm_whole board;
} shown_reasons[] = {
#define SHOWN_REASON(name, label, what) {GEMM_WHOLE_##name, GP_RECORD_GEMM_##name},
    GP_RECORD_GEMM_WHOLE(SHOWN_REASON)
#undef SHOWN_REASON
};
#define BOARD_REASON_SHOWN(name, label, what) &&GEMM_WHOLE_SHOWN_##name
#define PLAN_REASON_SHOWN(name, what, shown) +(shown)
_Static_assert(1 GP_RECORD_GEMM_WHOLE(BOARD_REASON_SHOWN) &&
                   0 GEMM_WHOLE_REASONS(PLAN_REASON_SHOWN) == GP_RECORD_GEMM_WHOLE_COUNT &&
                   GEMM_TALLY_DEVICES == SB_MAX_DEVICES,
               "gemm_plan.h's shown reasons are board.h's GP_RECORD_GEMM_WHOLE, and every device "
               "counted has a board");
#undef BOARD_REASON_SHOWN
#undef PLAN_REASON_SHOWN

void sb_record_gemm(int device, const struct gemm_counts *counts)
{
    if (device < 0 || device >= SB_MAX_DEVICES)
        return;
    struct device_board *d = &boards[device];
    keep_max(&d->gemm_sliced, counts->sliced);
    keep_max(&d->gemm_slices, counts->slices);
    for (size_t i = 0; i < sizeof shown_reasons / sizeof *shown_reasons; i++)
        keep_max(&d->gemm_whole[shown_reasons[i].board], counts->whole[shown_reasons[i].plan]);
    publish_gemm(d);
}

/* Puts the record on d's board, for as long as the process uses it; with boards_mu held. */
static void claim_record(struct device_board *d, int device)
{
    struct gp_board_slot *r = claim_slot(d);
    if (!r) {
        if (!d->warned_record)
            gp_log(GP_LOG_WARN,
                   "the board %s is full (%u slots): gpuprio top does not count this process's "
                   "unused queues on device %d, and gpuprio set reaches only those that ran",
                   d->b.path, GP_BOARD_SLOTS, device);
        d->warned_record = true;
        return;
    }
    r->device = device;
    r->mps = d->mps.client < 0 ? GP_MPS_UNKNOWN : d->mps.client ? GP_MPS_CLIENT : GP_MPS_NOT_CLIENT;
    r->mps_share = (uint8_t)(d->mps.share > 100 ? 0 : d->mps.share);
    r->cu_usable = (uint16_t)(d->mps.sms > UINT16_MAX ? UINT16_MAX : d->mps.sms);
    atomic_store(&r->st.priority, GP_RECORD_NO_PRIORITY);
    atomic_store(&d->record_request_seen, 0);
    gp_board_publish_record(&d->b, r);
    atomic_store(&d->record, r);
    publish_unused(d);
    publish_gemm(d);
}

/* A queue's unused_state (xqueue.h). Each step is taken once, and a queue that joins before its
 * creator counted it is never counted. */
enum { UNUSED_NEW, UNUSED_COUNTED, UNUSED_DONE };

static struct device_board *counted(const struct xqueue *q)
{
    return q->device >= 0 && q->device < SB_MAX_DEVICES ? &boards[q->device] : NULL;
}

void sb_queue_created(struct xqueue *q)
{
    struct device_board *d = counted(q);
    uint8_t expected = UNUSED_NEW;
    if (!d || !atomic_compare_exchange_strong(&q->unused_state, &expected, UNUSED_COUNTED))
        return;
    atomic_fetch_add(&d->unused, 1);
    publish_unused(d);
}

/* q is no longer unused (it joined, or is gone); uncounted if it was counted. */
static void uncount(struct xqueue *q)
{
    struct device_board *d = counted(q);
    if (!d || atomic_exchange(&q->unused_state, UNUSED_DONE) != UNUSED_COUNTED)
        return;
    atomic_fetch_sub(&d->unused, 1);
    publish_unused(d);
}

void sb_queue_joined(struct xqueue *q)
{
    uncount(q);
}

bool sb_record_request_pending(int device)
{
    struct device_board *d = usable(device);
    struct gp_board_slot *r = d ? atomic_load(&d->record) : NULL;
    return r && atomic_load(&r->request_seq) != atomic_load(&d->record_request_seen);
}

bool sb_record_request(int device, int *priority)
{
    struct device_board *d = usable(device);
    struct gp_board_slot *r = d ? atomic_load(&d->record) : NULL;
    uint32_t seq = r ? atomic_load(&r->request_seq) : 0;
    if (!r || seq == atomic_load(&d->record_request_seen))
        return false;
    atomic_store(&d->record_request_seen, seq);
    *priority = atomic_load(&r->request);
    return (seq & GP_REQUEST_PROCESS) != 0;
}

void sb_record_applied(int device, int priority)
{
    struct device_board *d = usable(device);
    struct gp_board_slot *r = d ? atomic_load(&d->record) : NULL;
    if (r)
        atomic_store(&r->st.priority, priority);
}

/* ---- joining and leaving ---- */

/*
 * The last process to leave a board removes its file (gp_board_remove_unused). One that opened
 * the file just before may have claimed its record in it after the removal: whether the file is
 * still there is asked under the lock, which the remover held from its look at the slots to the
 * unlink, once the record is claimed (from then on, the record keeps the file). Without a record
 * (a full board) there is nothing to ask: such a board is not removed while it is full.
 */
static bool still_there(struct device_board *d)
{
    if (!atomic_load(&d->record) || gp_board_lock(&d->b) != 0)
        return true;
    bool linked = gp_board_linked(&d->b);
    gp_board_unlock(&d->b);
    return linked;
}

static void drop_record(struct device_board *d)
{
    struct gp_board_slot *r = atomic_exchange(&d->record, NULL);
    while (atomic_load(&d->publishers))
        sched_yield();
    if (r)
        gp_board_free(&d->b, r);
}

/* At exit, after our slots were freed: removes the board if nobody else uses it (dead owners'
 * slots reclaimed first). The slots kept at exit, ours or another exiting process's (leave_one),
 * go with the file: nobody can open it any more, so nobody can claim their lines. */
static void remove_if_last(struct device_board *d)
{
    reclaim_dead(d, NULL, 0, NULL);
    if (gp_board_lock(&d->b) != 0)
        return;
    for (unsigned i = 0; i < gp_board_slots_used(&d->b); i++) {
        struct gp_board_slot *s = &d->b.f->slots[i];
        bool left = GP_SLOT_STATE(atomic_load(&s->owner)) == GP_SLOT_LIVE &&
                    (atomic_load(&s->st.gate) & XQ_GATE_LEFT);
        if (atomic_load(&s->owner) && !left && (sb_foreign(s) || !kept(d, i))) {
            gp_board_unlock(&d->b);
            return;
        }
    }
    if (gp_board_linked(&d->b) && unlink(d->b.path) == 0)
        gp_log(GP_LOG_DEBUG, "removed the board %s: this process was the last to use it",
               d->b.path);
    gp_board_unlock(&d->b);
}

static void leave_all(void);

static void start_listener(struct device_board *d)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    d->listening = pthread_create(&d->listener, NULL, listener_main, d) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!d->listening)
        gp_log(GP_LOG_WARN,
               "cannot start a thread for the board %s: threads held by other "
               "processes' work wake only by the watchdog",
               d->b.path);
    if (!exit_hook)
        exit_hook = atexit(leave_all) == 0;
}

/*
 * Level 2 on device's board if GPUPRIO_LEVEL allows and the device can: said once, at info, with
 * what one gate may hold: GPUPRIO_GATE_US, or where it is unset 100 us, and 300 us in an MPS
 * client. Without MPS the work behind an open gate runs ahead of an urgent request (the device
 * time-slices processes), so the bound is what the request waits. Under MPS it runs beside the
 * request at a lower hardware priority (creation.c), which cost the request about as little at
 * 300 us as at 100 (docs/benchmarks.md, fourteenth run: the same P99 on three loads), while every
 * gate costs the stream about 2 us on the GPU, so the load keeps 1-2% more of its throughput.
 */
static void warn_level_1(int device, int rc);

/* Registers d's gate lines with the runtime (gates_prepare): the board's own, or where they are
 * mirrored, the private copy that stands in for them. */
static int register_gates(struct device_board *d, int device, uintptr_t *device_base)
{
    struct dg_line *lines = d->gates.mirror ? d->gates.mirror : d->gates.base;
    return device_ops.gates_prepare(device, lines, sizeof d->b.f->gates, device_base);
}

/*
 * The runtime refused to register the board's lines (the board file is on a filesystem other than
 * tmpfs and hugetlbfs, whose pages Linux will not pin for long, or for a reason of its own): our
 * gates wait on a copy of them instead, which this process keeps up with the board's words
 * (devgate.h, "Mirrored gates"): a file of ours under /dev/shm, which our user's deciders write
 * too (gate_copy.h), or else anonymous memory. Lines of no queue of ours are open there. 0, or
 * the runtime refused the copy too (then none is kept).
 */
static int mirror_gates(struct device_board *d, int device, uintptr_t *device_base)
{
    size_t size = sizeof d->b.f->gates; /* whole pages, as the board's lines are */
    int fd = -1;
    struct dg_line *m = gc_create(gp_board_self()->incarnation, size, &fd);
    d->gates.mirror = m;
    if (m && register_gates(d, device, device_base) == 0) {
        d->copy_fd = fd + 1;
        return 0;
    }
    if (m) {
        munmap(m, size);
        close(fd);
    }
    m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -errno;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++)
        atomic_store(&m[i].word, DG_OPEN);
    d->gates.mirror = m;
    int rc = register_gates(d, device, device_base);
    if (rc != 0) {
        d->gates.mirror = NULL;
        munmap(m, size);
    }
    return rc;
}

void sb_write_peer_copy(int device, const struct dg_line *line)
{
    struct device_board *d = usable(device);
    if (!d)
        return;
    size_t i = (size_t)(line - d->b.f->gates);
    struct gp_board_slot *s = &d->b.f->slots[i];
    /* A pid of another pid namespace names another process here. */
    if (atomic_load(&s->pid_ns) != gp_board_self()->pid_ns)
        return;
    gc_write(&d->peers, (pid_t)GP_SLOT_OWNER(atomic_load(&s->owner)), atomic_load(&s->incarnation),
             atomic_load(&((struct dg_line *)line)->copy_fd), line, i, sizeof d->b.f->gates);
}

static void prepare_gates(struct device_board *d, int device)
{
    d->gates.base = d->b.f->gates;
    d->gates.mirror = NULL;
    atomic_store(&d->gates.ready, false);
    atomic_store(&d->gates.device_base, 0);
    if (gp_opt_uint(GP_OPT_LEVEL) < 2)
        return;
    /* A client waiting at a closed gate holds its hardware queue; where MPS clients share them,
     * that could hold another client of equal or higher priority (docs/mps.md). */
    uintptr_t device_base = 0;
    int rc = d->mps.client == 1 && d->mps.shared_queues ? -EXDEV
             : device_ops.gates_prepare                 ? register_gates(d, device, &device_base)
                                                        : -ENOTSUP;
    if (rc != 0 && rc != -EXDEV && rc != -ENOTSUP)
        rc = mirror_gates(d, device, &device_base);
    if (rc != 0) {
        warn_level_1(device, rc);
        return;
    }
    atomic_store(&d->gates.device_base, device_base);
    atomic_store(&d->gates.ready, true);
    uint64_t us = gp_opt_uint(GP_OPT_GATE_US);
    bool mps_default = !us && d->mps.client == 1;
    d->gate_ns = 1000 * (us ? us : mps_default ? 300 : 100);
    char mirrored[PATH_MAX + 320] = "";
    if (d->gates.mirror) {
        char fs[32] = "unknown";
        bool registrable;
        gp_board_dir_fs(gp_board_dir(), fs, sizeof fs, &registrable);
        snprintf(mirrored, sizeof mirrored,
                 ", mirrored: the runtime refused to register the board's gate lines (%s is on "
                 "%s), so this process's gates wait on a private copy that it keeps up with the "
                 "board, and another process's decision reaches them once this process's board "
                 "listener wakes",
                 gp_board_dir(), fs);
    }
    gp_log(GP_LOG_INFO,
           "device %d: Level 2 (lower priorities are held by gates on the device, one per %llu us "
           "of predicted GPU time%s)%s",
           device, (unsigned long long)(d->gate_ns / 1000),
           mps_default ? ", an MPS client's default" : "", mirrored);
}

/*
 * Level 2 was asked for (GPUPRIO_LEVEL unset or 2) and the device cannot have it: said once per
 * process and device, at the default level, since it costs what gates are for: a higher priority
 * then waits for whatever lower-priority work is already queued on the device (up to the
 * in-flight window), not for one gate's worth. Each case names its way out; GPUPRIO_LEVEL=1 asks
 * for Level 1 and so silences it. The board directory's filesystem is no reason: where the
 * runtime refuses the board's lines, it was asked to register a private copy of them, anonymous
 * memory (mirror_gates), and refused that too.
 */
static void warn_level_1(int device, int rc)
{
    const char *why =
        rc == -EXDEV ? "an MPS client on a GPU before Volta shares hardware work queues with the "
                       "other clients, and a closed gate could hold theirs"
        : rc == -ENOTSUP ? "it cannot wait on a value in host memory"
                         : "the runtime refused to register the gates (the board's gate lines, "
                           "and a private copy of them)";
    const char *fix = rc == -EXDEV     ? "run without MPS, or on a GPU from Volta on"
                      : rc == -ENOTSUP ? "a newer driver, where the device supports it"
                                       : "see docs/troubleshooting.md";
    gp_log(GP_LOG_WARN,
           "device %d: Level 1 only: %s; without gates on the device, a higher priority waits "
           "for the lower priorities' work already queued there. To fix: %s; GPUPRIO_LEVEL=1 "
           "silences this",
           device, why, fix);
}

/* Whether the process is an MPS client on device: said once, at info, board or not. */
static void learn_mps(struct device_board *d, int device)
{
    d->mps = (struct xq_mps){.client = -1};
    if (!device_ops.mps || device_ops.mps(device, &d->mps) != 0 || d->mps.client != 1)
        return;
    char limit[96] = "";
    if (d->mps.share)
        snprintf(limit, sizeof limit, "; MPS limits this process to %u%% of the device: %u SMs",
                 d->mps.share, d->mps.sms);
    gp_log(GP_LOG_INFO,
           "device %d: this process is an MPS client: stream priorities compare across "
           "processes%s",
           device, limit);
}

bool sb_gates_usable(int device)
{
    struct device_board *d = usable(device);
    return d && dg_ready(&d->gates);
}

uint64_t sb_gate_ns(int device)
{
    struct device_board *d = usable(device);
    return d && dg_ready(&d->gates) ? d->gate_ns : 0;
}

/* Boards whose gates a teardown unregistered and nobody registered again yet: the launch path's
 * one load while there are none. */
_Atomic unsigned sb_gates_unregistered;

void sb_gates_lost(void)
{
    for (int i = 0; i < SB_MAX_DEVICES; i++) {
        struct device_board *d = usable(i);
        if (!d || !atomic_exchange(&d->gates.ready, false))
            continue;
        atomic_store(&d->gates_lost, true);
        atomic_fetch_add(&sb_gates_unregistered, 1);
        /* Its gated queues are held on the host meanwhile, their lines pinned open. */
        atomic_store(&d->redecide, true);
        gp_board_notify(&d->b);
    }
}

void sb_gates_renew_now(int device)
{
    struct device_board *d = usable(device);
    if (!d || !atomic_load(&d->gates_lost))
        return;
    gp_mutex_lock(&boards_mu, GP_RANK_BOARDS);
    if (atomic_load(&d->gates_lost) && !atomic_load(&stopping)) {
        uintptr_t device_base = 0;
        int rc = register_gates(d, device, &device_base); /* the same lines, mirrored or not */
        atomic_store(&d->gates_lost, false);
        atomic_fetch_sub(&sb_gates_unregistered, 1);
        if (rc == 0) {
            atomic_store(&d->gates.device_base, device_base);
            atomic_store(&d->gates.ready, true);
            atomic_store(&d->redecide, true);
            gp_board_notify(&d->b);
            gp_log(GP_LOG_DEBUG, "device %d: the board's gates are registered again", device);
        } else {
            gp_log(GP_LOG_WARN,
                   "device %d: the runtime refused to register the gates again after a reset: "
                   "Level 1 only from now on",
                   device);
        }
    }
    gp_mutex_unlock(&boards_mu, GP_RANK_BOARDS);
}

/* Said once per process, at its first board, since it is the user's choice to make: a board
 * directory (GPUPRIO_BOARD_DIR) where another user could split the user's processes. The
 * administrator's shared one was checked with the file (gp_conf_file.c). Under boards_mu. */
static void warn_exposed_dir(void)
{
    static bool checked;
    if (checked || gp_board_shared())
        return;
    checked = true;
    char what[400];
    if (gp_board_dir_exposure(gp_board_dir(), what, sizeof what) != 0 || !what[0])
        return;
    gp_log(GP_LOG_WARN,
           "GPUPRIO_BOARD_DIR=%s is unsafe: %s, and this user's processes would then stop "
           "scheduling together. Safe is an absolute path to a directory owned by this user or "
           "root, not writable by group or others unless sticky (chmod +t), such as /dev/shm or "
           "one of mode 0700",
           gp_board_dir(), what);
}

void sb_join(int device)
{
    if (!device_ops.key || device < 0 || device >= SB_MAX_DEVICES)
        return;
    struct device_board *d = &boards[device];
    gp_mutex_lock(&boards_mu, GP_RANK_BOARDS);
    if (d->tried || atomic_load(&stopping))
        goto out;
    d->tried = true;
    learn_mps(d, device);
    if (!enabled)
        goto out;
    char key[GP_BOARD_KEY_MAX];
    const char *why = NULL;
    if (device_ops.key(device, key, sizeof key) != 0) {
        gp_log(GP_LOG_DEBUG, "device %d has no identity: it is scheduled within the process only",
               device);
        goto out;
    }
    warn_exposed_dir();
    for (int tries = 1;; tries++) {
        if (gp_board_open(key, &d->b, &why) != 0) {
            gp_log(GP_LOG_WARN,
                   "the board %s %s; device %d is scheduled within this process only "
                   "(GPUPRIO_BOARD=off does that without this warning)",
                   d->b.path, why, device);
            goto out;
        }
        claim_record(d, device);
        bool first = gp_board_first(&d->b);
        if (tries == 3 || (still_there(d) && first))
            break;
        drop_record(d);
        if (!first)
            remove_if_last(d); /* an alternate made at the same moment as another, which won */
        gp_board_close(&d->b);
    }
    if (d->b.squatter >= 0) {
        char usual[sizeof d->b.path];
        gp_board_path(key, usual, sizeof usual);
        gp_log(GP_LOG_WARN,
               "%s, this user's board for device %d, is a file of user %lld, who made it first: "
               "this user's processes use %s instead, and still schedule with the other users; "
               "the administrator should remove %s",
               usual, device, (long long)d->b.squatter, d->b.path, usual);
    }
    prepare_gates(d, device);
    snprintf(d->tenants.key, sizeof d->tenants.key, "%s", key);
    tn_refresh(&d->tenants, true); /* the others' listeners list the directory again */
    atomic_store(&d->ok, true);
    start_listener(d);
    /* Mirrored gates follow other processes' decisions only through the listener: without it,
     * Level 1 for good (sb_gates_lost passes over a region that is not ready, so no teardown
     * has it registered again). */
    if (d->gates.mirror && !d->listening && atomic_exchange(&d->gates.ready, false))
        gp_log(GP_LOG_WARN,
               "device %d: Level 1 only: its gates are mirrored (the board directory's files "
               "cannot be registered with the runtime), and without the board's thread other "
               "processes' decisions would never reach them",
               device);
out:
    gp_mutex_unlock(&boards_mu, GP_RANK_BOARDS);
}

void sb_thread_held(int device)
{
    struct device_board *d = usable(device);
    /* Another process holding ours back does not wake us (board.md): the listener may be in its
     * long sleep. Once per such sleep, the sequence word is bumped so that it looks again. */
    if (d && atomic_exchange(&d->dozing, false))
        gp_board_notify(&d->b);
}

struct gp_board_slot *sb_slot_of(const struct xqueue *q)
{
    const struct xq_state *st = xq_st(q);
    if (st == &q->own)
        return NULL;
    return (struct gp_board_slot *)((char *)st - offsetof(struct gp_board_slot, st));
}

void sb_queue_longest(struct xqueue *q, uint64_t ns)
{
    struct gp_board_slot *s = sb_slot_of(q);
    if (s)
        atomic_store_explicit(&s->longest_us, gp_slot_longest_us(ns), memory_order_relaxed);
}

uint64_t sb_identity(const struct xqueue *q)
{
    struct device_board *d = usable(q->device);
    struct gp_board_slot *s = sb_slot_of(q);
    return d && s ? GP_BOARD_QUEUE_IDENTITY(geteuid(), s - d->b.f->slots) : (uint64_t)(uintptr_t)q;
}

bool sb_process_comm(int device, uint32_t pid, uint32_t pid_ns, char comm[16])
{
    struct device_board *d = usable(device);
    if (!d)
        return false;
    for (unsigned i = 0, n = gp_board_slots_used(&d->b); i < n; i++) {
        struct gp_board_slot *s = &d->b.f->slots[i];
        uint64_t owner = atomic_load(&s->owner);
        if (GP_SLOT_STATE(owner) == GP_SLOT_PROCESS && GP_SLOT_OWNER(owner) == pid &&
            atomic_load(&s->pid_ns) == pid_ns) {
            memcpy(comm, s->comm, 16);
            return atomic_load(&s->owner) == owner; /* still that process's record */
        }
    }
    return false;
}

void sb_attach(struct xqueue *q)
{
    struct device_board *d = usable(q->device);
    if (!d || sb_slot_of(q))
        return;
    struct gp_board_slot *s = claim_slot(d);
    if (!s) {
        if (!d->warned_full)
            gp_log(GP_LOG_WARN,
                   "the board %s is full (%u queues): new queues of this process on device %d "
                   "are scheduled within the process only (gpuprio top and metrics count them "
                   "as without a slot)",
                   d->b.path, GP_BOARD_SLOTS, q->device);
        d->warned_full = true;
        /* Counted in the record until it is released: it never gets a slot later. */
        q->unslotted = true;
        atomic_fetch_add(&d->unslotted, 1);
        publish_unused(d);
        return;
    }
    s->stream = q->key.handle;
    s->thread = q->key.tid;
    s->device = q->device;
    s->flags = q->flags;
    s->cu_usable = q->cus.usable;
    s->cu_total = q->cus.total;
    s->cu_mask = q->cus.mask;
    atomic_store(&q->request_seen, 0);
    atomic_store(&s->st.priority, atomic_load(&q->own.priority));
    atomic_store(&s->st.active, atomic_load(&q->own.active));
    atomic_store(&s->st.gate, atomic_load(&q->own.gate));
    atomic_store(&q->dgate_placed, 0);
    atomic_store(&q->dgate_batch_ns, 0);
    struct dg_line *line = gp_board_gate(&d->b, s);
    if (d->gates.mirror) {
        /* Before the slot is published: every decider that sees it wakes us when it changes the
         * line (scheduler.c), and the listener copies it from then on. */
        size_t i = (size_t)(s - d->b.f->slots);
        atomic_store(&line->copy_fd, (uint32_t)d->copy_fd);
        atomic_store(&line->mirrored, 1);
        atomic_fetch_or(&d->mirrored[i / 64], UINT64_C(1) << (i % 64));
        dg_mirror(&d->gates, line);
    }
    q->dgate_region = &d->gates;
    atomic_store(&q->dgate, line);
    gp_board_publish(&d->b, s);
    atomic_store_explicit(&q->st, &s->st, memory_order_release);
}

/* Moves q's state back into the process and frees its slot. */
static void detach(struct xqueue *q, struct device_board *d)
{
    struct gp_board_slot *s = sb_slot_of(q);
    if (!s)
        return;
    atomic_store(&q->own.gate, atomic_load(&s->st.gate) & ~(XQ_GATE_DECISION | XQ_GATE_DEVICE));
    atomic_store(&q->own.priority, atomic_load(&s->st.priority));
    atomic_store_explicit(&q->st, &q->own, memory_order_release);
    struct dg_line *line = atomic_exchange(&q->dgate, NULL);
    size_t i = (size_t)(s - d->b.f->slots);
    atomic_fetch_and(&d->mirrored[i / 64], ~(UINT64_C(1) << (i % 64)));
    gp_board_free(&d->b, s);
    if (line)
        dg_mirror_release(&d->gates, line);
}

void sb_released(struct xqueue *q)
{
    uncount(q);
    if (q->unslotted && counted(q)) {
        q->unslotted = false;
        atomic_fetch_sub(&counted(q)->unslotted, 1);
        publish_unused(counted(q));
    }
    struct device_board *d = usable(q->device);
    /* Once the process is leaving, its slots are leave_all's. */
    if (!d || !sb_slot_of(q) || atomic_load(&stopping))
        return;
    detach(q, d);
    /* It may have been the queue that held others back: the listener decides again. */
    atomic_store(&d->redecide, true);
    gp_board_notify(&d->b);
}

struct gp_board *sb_lock(int device)
{
    struct device_board *d = usable(device);
    if (!d || gp_board_lock(&d->b) != 0) {
        if (d && gp_board_given_up(&d->b) && !d->warned_given_up) {
            d->warned_given_up = true;
            gp_log(GP_LOG_WARN,
                   "the board %s stayed locked by another live process for too long (stopped "
                   "while it held the lock?); on device %d this process decides for its own "
                   "queues only until the lock is free again (looked at every second)",
                   d->b.path, device);
        }
        return NULL;
    }
    if (d->warned_given_up) {
        d->warned_given_up = false;
        atomic_store(&d->say_usable, true);
    }
    return &d->b;
}

void sb_foreach_tenant_queue(
    int device, void (*fn)(const struct sched_queue *q, struct xq_state *st, void *arg), void *arg)
{
    struct device_board *d = usable(device);
    if (d)
        tn_foreach_queue(&d->tenants, fn, arg);
}

struct gp_board *sb_given_up(int device)
{
    struct device_board *d = usable(device);
    return d && gp_board_given_up(&d->b) ? &d->b : NULL;
}

void sb_unlock(int device, bool changed, const uint64_t *summary)
{
    struct device_board *d = &boards[device];
    bool summary_moved = summary && gp_board_set_summary(&d->b, *summary);
    gp_board_unlock(&d->b);
    if (changed)
        gp_board_notify(&d->b);
    if (summary_moved)
        gp_board_summary_wake(&d->b);
    if (atomic_exchange(&d->say_usable, false)) {
        /* What every process decided meanwhile saw only its own side: all decide again. */
        atomic_store(&d->redecide, true);
        gp_board_notify(&d->b);
        gp_log(GP_LOG_WARN,
               "the board %s is free again; device %d is scheduled across processes again",
               d->b.path, device);
    }
}

/*
 * At exit, for each of our queues with a slot (admission lets every call through from now on):
 * its gate line is pinned open for good, as the process's last work must run to completion
 * unhindered. A slot whose queue has commands in flight, which may still wait at gates on that
 * line, is kept until the process ends, idle and at the lowest priority so that it holds nobody
 * back: given back, another queue could claim its line and close it again, and the process's
 * last work would wait for that queue's decisions. The other processes reclaim it once this one
 * is gone (its liveness lock goes with it). The other slots are given back.
 */
static void leave_one(struct xqueue *q, void *arg)
{
    (void)arg;
    struct device_board *d = usable(q->device);
    struct gp_board_slot *s = sb_slot_of(q);
    struct dg_line *line = atomic_load(&q->dgate);
    if (!d || !s)
        return;
    if (line) {
        dg_pin(line);
        dg_mirror(&d->gates, line); /* the listener, which would, is stopped */
    }
    if (!line ||
        (!XQ_GATE_IN_FLIGHT(atomic_load(&s->st.gate)) && !atomic_load(&q->gate_unbacked))) {
        detach(q, d);
        return;
    }
    size_t i = (size_t)(s - d->b.f->slots);
    d->kept[i / 64] |= UINT64_C(1) << (i % 64);
    atomic_store(&s->st.active, 0);
    atomic_store(&s->st.priority, GPUPRIO_PRIORITY_MIN);
    atomic_fetch_and(&s->st.gate, ~(XQ_GATE_DEVICE | XQ_GATE_STALLED));
    atomic_fetch_or(&s->st.gate, XQ_GATE_LEFT);
}

/* Frees what is still ours on every board but the slots kept (leave_one): those of streams
 * destroyed with work in flight are released only once the watcher saw it finish, and the
 * watcher has stopped. */
static void free_own_slots(void)
{
    /* No more counts into the records: queues still come and go on the application's threads,
     * and a count stored into a freed slot would be someone else's. A thread that read the
     * record before it was taken away is waited for (it only stores a word or two). */
    for (int i = 0; i < SB_MAX_DEVICES; i++) {
        atomic_store(&boards[i].record, NULL);
        while (atomic_load(&boards[i].publishers))
            sched_yield();
    }
    for (int i = 0; i < SB_MAX_DEVICES; i++) {
        struct device_board *d = usable(i);
        for (unsigned j = 0; d && j < gp_board_slots_used(&d->b); j++) {
            struct gp_board_slot *s = &d->b.f->slots[j];
            if (atomic_load(&s->owner) && !sb_foreign(s) && !kept(d, j))
                gp_board_free(&d->b, s);
        }
    }
}

/*
 * At exit: stop the listeners, pin our gates open and give every slot back but those whose
 * queues' work may still wait at a gate (leave_one), and decide for the processes that stay
 * (this one may have been holding them back). No runtime call is made.
 */
static void leave_all(void)
{
    atomic_store(&stopping, true);
    for (int i = 0; i < SB_MAX_DEVICES; i++)
        if (atomic_load(&boards[i].ok))
            gp_board_notify(&boards[i].b);
    for (int i = 0; i < SB_MAX_DEVICES; i++)
        if (boards[i].listening) {
            pthread_join(boards[i].listener, NULL);
            boards[i].listening = false;
        }
    xq_shutdown(); /* pass-through from here on, so our queues need no gates */
    xq_sched_lock();
    if (up.leaving)
        up.leaving();
    xq_foreach_joined(leave_one, NULL);
    free_own_slots();
    xq_sched_unlock();
    for (int i = 0; i < SB_MAX_DEVICES; i++)
        if (atomic_load(&boards[i].ok)) {
            up.changed(i, true);
            remove_if_last(&boards[i]);
        }
}

void sb_reset(void)
{
    pthread_mutex_init(&boards_mu, NULL);
    for (int i = 0; i < SB_MAX_DEVICES; i++) {
        struct device_board *d = &boards[i];
        if (atomic_load(&d->ok)) {
            gp_board_close(&d->b);
            tn_close(&d->tenants);
        }
        if (d->gates.mirror) /* the parent's, registered with the parent's runtime */
            munmap(d->gates.mirror, sizeof d->b.f->gates);
        if (d->copy_fd)
            close(d->copy_fd - 1);
        gc_reset(&d->peers, sizeof d->b.f->gates);
        memset(d, 0, sizeof *d);
    }
    atomic_store(&sb_gates_unregistered, 0);
    atomic_store(&stopping, false);
    gp_board_self_reset();
}
