/*
 * xqueue.h - the XQueue: gpuprio's unit of scheduling, one per application stream.
 *
 * Every stream the application can name has an XQueue: streams from any creator, the null
 * stream of each device, and the per-thread stream of each (thread, device). An XQueue holds
 * what the scheduler needs about its stream: identity, creation flags and priority, the
 * scheduling state (xq_admission.h) and counters. This module knows nothing about HIP or CUDA; the
 * shims map their handles onto keys.
 *
 * The null stream gets one XQueue per (device, submitting thread). The GPU runs it as one FIFO
 * anyway, and admission holds threads, so per-thread queues let threads of different priority
 * share the default stream, as PyTorch threads do unless told otherwise.
 */
#ifndef GPUPRIO_XQUEUE_H
#define GPUPRIO_XQUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devgate.h"
#include "xc_cost.h"

/*
 * What identifies a stream: the handle, plus the device for handles that mean one stream per
 * device (the null stream) and the thread for handles that mean one per thread.
 */
struct xq_key {
    uintptr_t handle;
    int device;   /* -1 when the handle alone identifies the stream */
    uint64_t tid; /* 0 unless the queue is per thread */
};

/* Where a queue's priority came from, weakest first; a stronger source is never overridden. */
enum xq_priority_source {
    XQ_PRIO_DEFAULT,
    XQ_PRIO_STREAM_CREATION, /* the runtime's stream priority, mapped onto gpuprio's scale */
    XQ_PRIO_ENV_PROCESS,     /* GPUPRIO_PRIORITY */
    XQ_PRIO_ENV_STREAM,      /* GPUPRIO_STREAM_PRIORITIES, by creation order */
    XQ_PRIO_THREAD,          /* gpuprio_thread_set_priority of the owning thread */
    XQ_PRIO_STREAM,          /* gpuprio_stream_set_priority */
};

/*
 * The compute units a stream's kernels may use (HIP's CU masks, docs/configuration.md "Hardware
 * levers"), as `gpuprio top` shows them: fixed when the stream is created.
 */
enum xq_cu_mask {
    XQ_CU_UNKNOWN = 0, /* the platform cannot say (CUDA) */
    XQ_CU_ALL,         /* every CU of the device */
    XQ_CU_MASKED,      /* fewer, by the application's mask or the process's (ROC_GLOBAL_CU_MASK) */
    XQ_CU_RESERVED,    /* fewer, by gpuprio (GPUPRIO_CU_RESERVE) */
    XQ_CU_UNMASKABLE,  /* a null or per-thread stream, which no mask can be given */
};
struct xq_cus {
    uint16_t usable, total; /* 0 when not known */
    uint8_t mask;           /* enum xq_cu_mask */
};

/* What NVIDIA's Multi-Process Service does with a device's work in this process (docs/mps.md),
 * as the platform reads it (platform.h's mps). */
struct xq_mps {
    int client;         /* 1: an MPS client, 0: not, -1: the runtime cannot say */
    bool shared_queues; /* its clients share hardware work queues (GPUs before Volta) */
    /* The share of the device MPS lets the client use (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), in
     * percent, and the SMs that is: 0 when it may use every SM (or the runtime cannot say). */
    unsigned share, sms;
};

/* A stream's properties, in the runtime's own terms, as the platform reads them back. */
struct xq_stream_props {
    int device;     /* the device the stream belongs to */
    unsigned flags; /* its creation flags (non-blocking...) */
    int priority;   /* its priority as created (HIP and CUDA alike: lower is more urgent) */
    struct xq_cus cus;
};

/* The gate word: in-flight commands (reserved at admission), and the scheduler's decision:
 * suspended (admit nothing), throttled (admit up to the in-flight window), tracked (follow
 * commands with markers; without any of the three bits a queue is not scheduled at all). */
#define XQ_GATE_SUSPENDED (UINT64_C(1) << 63)
#define XQ_GATE_THROTTLED (UINT64_C(1) << 62)
#define XQ_GATE_TRACKED (UINT64_C(1) << 61)
#define XQ_GATE_DECISION (XQ_GATE_SUSPENDED | XQ_GATE_THROTTLED | XQ_GATE_TRACKED)
/* Level 2 (devgate.h): the queue is held on the device by its gates, so it is not throttled on
 * the host. Set by its owner's scheduler only; other processes' decisions leave it alone. */
#define XQ_GATE_DEVICE (UINT64_C(1) << 60)
/* Another process saw the queue active with no command submitted or completed for
 * GPUPRIO_WATCHDOG_MS (its process stopped, or hung): decisions take it for idle, so that it holds
 * nobody back, until it moves again and its owner clears the bit (sched_board.c). */
#define XQ_GATE_STALLED (UINT64_C(1) << 59)
/* Its process exited and keeps the slot only for commands that may still wait at its gate, which
 * is pinned open (sched_board.c's leave_one): decisions leave it out, and it does not keep the
 * board's file from being removed (nobody can claim its line in a removed file). */
#define XQ_GATE_LEFT (UINT64_C(1) << 58)
#define XQ_GATE_IN_FLIGHT(g) ((uint32_t)(g))

/*
 * What scheduling needs to see of a queue, and what gpuprio_stats reports: in the process's own
 * memory, or in a board slot shared with other processes (so the layout is fixed: board.h).
 */
struct xq_state {
    _Atomic uint64_t gate;    /* in flight and the decision bits: see XQ_GATE_* */
    _Atomic int32_t priority; /* higher runs first; written under the scheduling lock */
    _Atomic uint32_t active;  /* has work, waiters, or finished within the grace window */
    _Atomic uint64_t submitted, completed, held_ns, suspensions;
};

/* A command in flight: what to learn its GPU time from when it is reached. Its marker was
 * recorded behind it; NULL: it is reached with the next marked command, or when its stream is
 * found idle (xq_admission.h, "Sparse markers"). */
struct xq_in_flight {
    void *marker;
    uint64_t cost_key;     /* xc_cost.h; 0 when it costs nothing */
    uint64_t submit_ns;    /* when it was handed to the runtime */
    uint32_t cost_ns;      /* charged at admission, in the queue's cost_in_flight_ns */
    uint32_t predicted_ns; /* predicted at admission (xq_admission.h's xq_ticket), or 0 */
    uint32_t suspensions;  /* the queue's suspensions when it was submitted */
};

struct xq_marker_ring {
    struct xq_in_flight *slots;
    size_t cap, head, count; /* oldest at head */
    size_t marked;           /* entries from head up to the newest with a marker (0: none) */
};

struct xqueue {
    struct xq_key key;
    int device;
    unsigned flags;
    int stream_priority; /* as given at creation, in the runtime's own terms */
    struct xq_cus cus;
    uint64_t owner_tid; /* the thread that created the stream, or the per-thread queue's */

    /* Scheduling state: the queue's own (own), or its slot's on the device's board (board.h),
     * where other processes' deciders set its gate too. Switched only under the scheduling
     * lock, when the queue joins or leaves a board. */
    struct xq_state *_Atomic st;
    struct xq_state own;
    enum xq_priority_source priority_source; /* under the scheduling lock */
    _Atomic int waiters;                     /* threads held in admission */
    /* The priority its sources below the owning thread's give it, and their strongest: what it
     * returns to when that thread clears its priority (under the scheduling lock). */
    int base_priority;
    enum xq_priority_source base_source;
    /* It has put work on its stream (admitted a command) since it was created: only such
     * queues take part in scheduling (a board slot, decisions, expiry). Set under the
     * scheduling lock; read without it on the launch path. */
    _Atomic bool joined;
    size_t joined_at; /* its index in the registry's list of joined queues (registry lock) */
    _Atomic uint64_t last_done_ns;
    _Atomic bool capturing; /* a stream capture begun on it has not ended */
    /* The board's last priority request applied; written by its device's listener under the
     * scheduling lock, read by that listener without it. */
    _Atomic uint32_t request_seen;
    /* Whether it is counted among its device's queues that never joined scheduling (sched):
     * 0 not yet, 1 counted (from its creation), 2 no longer (it joined, or is gone). */
    _Atomic uint8_t unused_state;
    /* It joined when its board had no free slot: counted in its device's queues without a slot
     * (sched_board.c's sb_attach) until it is released. Under the scheduling lock. */
    bool unslotted;

    /* Completion markers, oldest first (mu); only the watcher thread removes them. Submitting
     * threads record a marker and put it on the ring under submit_mu, which the watcher never
     * takes: the ring keeps the markers' order on the stream, and the runtime call that records
     * one holds no lock the watcher waits for. */
    pthread_mutex_t mu, submit_mu;
    struct xq_marker_ring markers;

    /* GPU time (xc_cost.h), beside the markers whose lines both threads touch anyway: the predicted
     * cost of the commands reserved while throttled and not yet seen reached, the queue's mean
     * cost per command (for commands without a learned key), and when the watcher last saw one
     * of its markers reached (watcher only). */
    _Atomic uint64_t cost_in_flight_ns;
    _Atomic uint64_t cost_mean_ns;
    /* GPUPRIO_POLICY=share (scheduler.c), under the scheduling lock: the time it ran at its
     * listener's looks, and its vtime, share_vbase + share_ran_ns / weight; whether it was active
     * at the last decision; its minimum share's account (time owed, negative when it ran ahead),
     * the time of the last look at it and its completed commands then, whether it was active
     * then and ran after that look's decision, and whether it is owed. */
    uint64_t share_ran_ns, share_vbase;
    bool share_was_active, share_owed, share_looked_active, share_looked_running;
    int64_t share_credit_ns;
    uint64_t share_look_ns, share_completed_seen;
    /* GPUPRIO_LOG=info (scheduler.c's say_switches), written under the scheduling lock: the
     * state whose suspensions were last said (its own, or its slot's, whose count starts
     * afresh), its count of suspensions then, and whether the last line said it suspended;
     * atomic, as a board's listener compares them with the state without the lock first. And a
     * count that one look left unsaid, its last suspension perhaps not set yet (lock only). */
    const struct xq_state *_Atomic said_st;
    _Atomic uint64_t said_suspensions;
    _Atomic bool said_suspended;
    uint64_t said_deferred;
    /* The oldest in-flight command: its charged cost, and since when it can have run (the later
     * of its submission and the previous one's completion seen); set under mu. */
    _Atomic uint64_t head_cost_ns, head_since_ns;
    uint64_t last_reached_ns;
    uint64_t capture_epoch_seen; /* xq_capture_epoch at the watcher's last look (watcher only) */
    struct xc_longest longest;   /* its longest recent command (watcher only) */

    /* Level 2 (devgate.h): its slot's gate line and the board's region, set with st when it
     * takes a slot (NULL without one); the number of the latest gate put on its stream, and the
     * predicted GPU time of the commands put on it since. */
    struct dg_line *_Atomic dgate;
    struct dg_region *dgate_region;
    _Atomic uint64_t dgate_placed;
    _Atomic uint64_t dgate_batch_ns;
    _Atomic uint64_t dgate_bound_ns; /* what one gate may hold: its device's (sb_gate_ns) */
    _Atomic bool dgate_off;          /* the runtime refused one of its gates: Level 1 for good */
    /* A gate of it may stand on the device with no counted command behind it (its command was
     * refused, or went untracked as a capture began, and no marker could follow it): it is not
     * released until a marker recorded after that gate is followed (set and cleared under
     * submit_mu), so that its line is never reset or claimed again while the device may still
     * wait there. */
    _Atomic bool gate_unbacked;
    /* The watcher's own: since when a retired queue that owes a marker has seen its line open
     * with its work before it all reached (0: not yet), and its suspensions then (settle_debt). */
    uint64_t debt_open_since_ns;
    uint32_t debt_suspensions;
    bool watched; /* on the watcher's list (watcher lock) */
    bool retired; /* its stream is gone; released once its work is done (mu, xq_release_if_done) */
    _Atomic bool releasing; /* retired and done with: taken by the one caller that releases it */
    /* Its stream is being destroyed (not queried meanwhile), or was (never queried again): under
     * admission's query lock (xq_stream_closing). */
    bool closing, closed;

    struct xqueue *next_free; /* on the registry's free list once its stream is gone */
};

/*
 * The scheduling lock. It protects what scheduling decides on and what it decides: priorities
 * and their sources, queues becoming active or idle, and decisions; admission's waits sleep on
 * it. Its rank and what may be taken under it: gp_lockrank.h.
 */
void xq_sched_lock(void);
void xq_sched_unlock(void);

/* GPUPRIO_LOG=debug with slow calls reported: the lock then notes who holds it (the thread's role,
 * "an application thread" unless it named one) and since when, so that a call that waited for
 * it can say behind what. Off, the lock notes nothing. */
void xq_sched_timing(bool on);
void xq_sched_thread_role(const char *role);
struct xq_lock_wait {
    uint64_t wait_ns;     /* how long it waited (0: the lock was free) */
    const char *holder;   /* who held it then (NULL: it was free) */
    uint64_t held_ns;     /* for how long the holder had held it when the wait began */
    uint64_t handover_ns; /* from the holder's letting go to this thread's having it */
    bool slept;           /* it waited longer than it spins, and slept */
};
/* xq_sched_lock for a thread that makes its queue active: it spins through a short hold rather
 * than sleep, as a sleeping thread wakes late. Says in *w what it waited for (the holder's role
 * and times only while slow calls are reported; the clock is read only when it had to wait). */
void xq_sched_lock_activating(struct xq_lock_wait *w);
/* Waits on cv with the scheduling lock held, until deadline_ns (gp_now_ns; 0: no deadline). */
void xq_sched_wait(pthread_cond_t *cv, uint64_t deadline_ns);

/* The platform's completion markers (hal/<platform>). */
struct xq_marker_ops {
    /* Records a marker behind the command just submitted to q's stream by the calling thread;
     * NULL when none can be recorded (the command then counts as reached). No gpuprio lock is
     * held: it calls the runtime. */
    void *(*record)(const struct xqueue *q);
    /* On the watcher thread: 1 reached, 0 not yet, negative when it never will be (lost). */
    int (*query)(void *marker);
    /* Gives a marker back for reuse: from the watcher once reached, or from the thread that
     * recorded it when it cannot be followed. */
    void (*release)(const struct xqueue *q, void *marker);
    /* Optional, on the watcher thread, for a stream the application created (its handle names
     * it on any thread): 1 when everything put on it so far has run, 0 not yet, negative when
     * it cannot tell. Without it, every command of a tracked queue gets a marker. */
    int (*stream_idle)(const struct xqueue *q);
    /* Optional: as record, behind a command the runtime refused (or one a capture may have
     * taken), so that a gate put before it gets a marker after it, without touching what the
     * calling thread's error state says of the refusal; NULL where the platform cannot (the
     * null and per-thread streams, whose handles name the calling thread's stream, or whose
     * marker would synchronize with other streams). */
    void *(*record_behind_refused)(const struct xqueue *q);
};

/* The oldest of q's in-flight commands changed (q->mu held): it can have run since the later of
 * now (it was just submitted, or its predecessor was just seen reached) and its submission. */
void xq_head_changed(struct xqueue *q, uint64_t now);
/* q's marker lock (q->mu), and its submitters' lock (q->submit_mu), at their ranks. */
void xq_lock_markers(struct xqueue *q);
void xq_unlock_markers(struct xqueue *q);
void xq_lock_submit(struct xqueue *q);
void xq_unlock_submit(struct xqueue *q);

/* The queue's scheduling state, wherever it lives. */
static inline struct xq_state *xq_st(const struct xqueue *q)
{
    return atomic_load_explicit(&((struct xqueue *)q)->st, memory_order_acquire);
}

/* The calling thread's XQueue for key (a null or per-thread stream's), created on first use (with
 * cu_mask, an enum xq_cu_mask) and forgotten when the thread exits (NULL only when out of
 * memory). */
struct xqueue *xq_get_thread_queue(const struct xq_key *key, uint8_t cu_mask);
/* The XQueue for key if it exists. */
struct xqueue *xq_find(const struct xq_key *key);
/* Registers a stream just created by thread owner_tid; replaces any XQueue left for a reused
 * handle. */
struct xqueue *xq_create(const struct xq_key *key, const struct xq_stream_props *props,
                         uint64_t owner_tid);
/* Forgets the stream. Its XQueue's memory stays valid (queues are never freed while the process
 * runs, so a racing thread never touches freed memory); it stays in scheduling (joined) until
 * its markers have all been reached and it went idle, then is reused (xq_release_if_done). */
void xq_destroy(const struct xq_key *key);
/* Calls fn for every live XQueue, under the registry's read lock (fn must not create or destroy
 * queues). */
void xq_foreach(void (*fn)(struct xqueue *q, void *arg), void *arg);
/* The same over the queues that joined scheduling only (xq_join): what decisions, expiry and the
 * boards' listeners look at, so their cost follows the queues that run, not those that exist. */
void xq_foreach_joined(void (*fn)(struct xqueue *q, void *arg), void *arg);
/* The same for a caller that holds the read lock itself (xq_read_lock), so that the queues it
 * saw stay registered, neither destroyed nor reused, until it unlocks. */
void xq_foreach_joined_locked(void (*fn)(struct xqueue *q, void *arg), void *arg);
void xq_read_lock(void);
void xq_read_unlock(void);
/* Puts q on the list of joined queues and sets q->joined (scheduling lock held). False when
 * memory ran out: q stays out of scheduling, as if it had never run. */
bool xq_join(struct xqueue *q);
/* For the watcher, once a queue has no markers left, and for expiry, once a queue went idle:
 * releases q (it leaves the joined list and goes back for reuse) if its stream is gone, its
 * markers all reached and it is idle; true when it did. No lock may be held. */
bool xq_release_if_done(struct xqueue *q);
/* Forgets every XQueue; for the child of fork only. */
void xq_reset(void);

/* Hooks for the layers above, set once at start-up. */
struct xq_hooks {
    /* A queue was created (its owner and stream priority are set): give it its priority. */
    void (*created)(struct xqueue *q);
    /* A destroyed stream's queue is done with: its work was all seen finished and it is idle.
     * It has left the joined list already; called with no lock held, from the thread that
     * destroyed the stream, the watcher, or a thread that exits. */
    void (*released)(struct xqueue *q);
};
void xq_set_hooks(const struct xq_hooks *hooks);

#endif /* GPUPRIO_XQUEUE_H */
