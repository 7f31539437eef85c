/*
 * xq_admission.h - Level-1 preemption: holding a thread before it puts work on a stream.
 *
 * Nothing is buffered (docs/design.md, "Transparency"): the shim calls xq_admit before it forwards
 * a call that puts work on a stream, and xq_submitted after. xq_admit returns once the queue may
 * submit: it is not suspended and, when throttled (a queue of higher priority exists on its
 * device), fewer than the window's commands are in flight. In flight
 * means admitted and not yet reached on the device, which completion markers tell: the shim
 * records one behind every admitted command (through the platform's xq_marker_ops) and one
 * watcher thread per process follows them (xq_watcher.c), frees the window, and wakes waiting
 * threads at once.
 *
 * The in-flight count and the suspended bit share one atomic word (the gate), so a queue
 * suspended by the scheduler admits nothing more from that instant, and the work that can
 * still start ahead of a higher-priority command is at most the window per queue. A throttled
 * queue also keeps the predicted GPU time still to run of its in-flight commands within a
 * budget (xc_cost.h; the oldest counts for what it has not run yet): a command is admitted when it
 * fits, when it costs nothing (an event record, a wait), or when nothing costly is in flight. The
 * budget is what bounds the higher-priority command's wait; the window is a ceiling for commands
 * too cheap to fill it.
 *
 * A queue is active while it has work in flight, threads waiting, or finished within the grace
 * window; becoming active or idle asks the scheduler (xq_admission_hooks) for new decisions.
 * Every wait has a progress watchdog that counts only the work the wait is for: a suspended
 * queue's thread waits for the queues that can suspend it to let it go, those of higher priority
 * on its device (and of its own under share while none above is active: peers_hold), in any
 * process, of any user; a
 * throttled one's for its own queue's commands in flight to be
 * reached. When none of that completed for the watchdog period, the call goes through and one
 * warning says which of the two it was. An application can make a stream wait for something its
 * own thread does later (wait-value, host function), and it must be delayed, never deadlocked,
 * however busy the device is with other work. Threads are
 * never held while any stream capture is in progress (capture is host-only: no markers go into
 * graphs), in re-entrant calls, or after exit began.
 *
 * Sparse markers: a queue held by gates on the device (Level 2: not throttled on the host) on a
 * stream the application created needs to know what it has in flight only roughly, so only the
 * command that opens a gate's batch, or is predicted to take a quarter of the gate bound or more,
 * gets a marker (a marker is most of a tracked launch's host cost, which matters only next to
 * short commands); reaching it reaches every unmarked command before it. The commands after a
 * burst's last marker are reached when the watcher, once nothing was submitted for two polls, finds
 * the stream idle (the platform's stream_idle). Stream queries never run while a capture may be in
 * progress, nor once the stream is being destroyed (a lock of their own orders them against
 * both); a destroyed stream's unmarked commands count as reached.
 *
 * Gates: no gate stands on the device without a counted command behind it. A gate whose command
 * the runtime refused, or that a capture beginning meanwhile left unfollowed, gets a marker behind
 * it where the platform can record one without touching the caller's error state; otherwise its
 * queue owes one and is not released until a later marker pays (docs/design.md, "A queue's gate,
 * from creation to exit").
 */
#ifndef GPUPRIO_XQ_ADMISSION_H
#define GPUPRIO_XQ_ADMISSION_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "xqueue.h"

struct xq_admission_config {
    bool enabled;         /* false: observe only (the passthrough policy) */
    unsigned window;      /* commands in flight per queue */
    uint64_t budget_ns;   /* predicted GPU time in flight per queue; 0: count commands only */
    uint64_t grace_ns;    /* how long a queue stays active after its last completion */
    uint64_t watchdog_ns; /* how long a wait may see no progress before it gives up */
    uint64_t poll_ns;     /* the watcher's polling period while markers are outstanding */
    uint64_t slow_ns;     /* report calls and marker queries that take longer (0: none) */
    /* Queues of one priority suspend each other (GPUPRIO_POLICY=share's turns): a suspended
     * queue's watchdog counts its peers' completions as progress too, not only higher ones', while
     * no queue above it on its device is active (only then can its suspension be a peer's turn). */
    bool peers_hold;
};

/* What may hold a suspended queue of one priority back, as its watchdog counts it: counts that
 * change whenever a queue above that priority completes work, and one at it, and whether a queue
 * above it is active as decisions see it (not stalled). Under share a queue at its priority
 * suspends it only for a turn, which it can take only while nothing above is active. */
struct xq_holders {
    uint64_t higher, peers;
    bool higher_active;
};

/* Adds to h, what holds back a suspended queue of priority, a queue of priority its: its
 * completed work, and whether it is active as decisions take it. */
void xq_holders_add(struct xq_holders *h, int its, int priority, uint64_t completed, bool active);

/* For xq_admission_hooks.activity_changed: queues of several devices changed. */
#define XQ_ALL_DEVICES INT_MIN

struct xq_admission_hooks {
    /* q admits its first command: it joins scheduling (the scheduler puts it on its device's
     * board). With the scheduling lock held, before q is first decided on. Optional. */
    void (*joining)(struct xqueue *q);
    /* A queue of device (or of several: XQ_ALL_DEVICES) became active or idle, with the
     * scheduling lock held: decide again for that device. */
    void (*activity_changed)(int device);
    /* Adds to *h what other processes' queues of device, whatever their user, tell a suspended
     * thread's watchdog of priority (struct xq_holders); with the scheduling lock held.
     * Optional. */
    void (*holders_elsewhere)(int device, int priority, struct xq_holders *h);
    /* A thread is about to be held on a queue of device (what holds it may be another
     * process's, which may die). Optional. */
    void (*held)(int device);
    /* q's longest recent command (xc_cost.h's struct xc_longest) moved noticeably: show ns (on its
     * board slot). On the watcher thread, while q has commands in flight. Optional. */
    void (*longest)(struct xqueue *q, uint64_t ns);
    /* The clock (gp_now_ns unless given): tests drive the budget's arithmetic with their own. */
    uint64_t (*now_ns)(void);
};

/* Set once, before the first admission. */
void xq_admission_configure(const struct xq_admission_config *config,
                            const struct xq_marker_ops *ops,
                            const struct xq_admission_hooks *hooks);

/* What xq_admit did, for xq_submitted. */
struct xq_ticket {
    struct xqueue *q;
    bool reserved;     /* a window slot was taken */
    uint64_t cost_key; /* xc_cost.h; 0 when the command costs nothing */
    uint64_t cost_ns;  /* charged against the budget at admission (0 unless throttled) */
    uint64_t gate;     /* Level 2: the gate to put on the stream before the command, or 0 */
    /* predicted at admission where it was (throttled, or held by gates: 0 elsewhere), what the
     * watcher shares a sparse marker's time out by (xc_cost.h) */
    uint64_t predicted_ns;
    /* Only when slow calls are reported (slow_ns): when admission began and ended, how long
     * of it went to making the queue active (the scheduling lock, the policy and the board),
     * and how long of that to reaching the scheduling lock (from when admission began) and to
     * deciding; what the lock was held by; the thread's context switches and page faults while
     * it activated the queue (the host's share of a slow activation). */
    uint64_t timed_from_ns, admitted_ns, activation_ns, lock_wait_ns, decide_ns;
    struct xq_lock_wait lock;
    long switches, faults;
};

/* Before forwarding a call that puts work on q's stream: entry point `entry` (the shim's own
 * index) with the cost key `what` of its API list (XC_NO_GPU_TIME: it occupies no engine,
 * costs nothing and teaches nothing). The two are combined (xc_cost.h) only when q is scheduled. */
void xq_admit(struct xqueue *q, struct xq_ticket *t, unsigned entry, uint64_t what);
/* xq_admit without the wait: false when the queue may not submit now (nothing was taken, and
 * *retry_at says when the command's cost will fit, or 0: at a completion or a decision). */
bool xq_try_admit(struct xqueue *q, struct xq_ticket *t, unsigned entry, uint64_t what,
                  uint64_t *retry_at);
/* The runtime refused a gate on q's stream: q is held on the host only from now on (Level 1), its
 * gate pinned open (devgate.h), and one warning says so ("the runtime refused a gate", which tests
 * look for). */
void xq_gate_failed(struct xqueue *q);
/* After forwarding: ok says whether the runtime accepted the command (then it is counted). */
void xq_submitted(struct xq_ticket *t, bool ok);

/* Waits until every command admitted on q has been seen reached; 0, or -ETIMEDOUT. */
int xq_drain(struct xqueue *q, uint64_t timeout_ns);

/* A stream capture begins (before the runtime's call: no stream query runs from then until
 * xq_capture_begun), began or not (after it), or ended somewhere in the process. */
void xq_capture_beginning(void);
void xq_capture_begun(bool begun);
void xq_capture_end(void);
/* q's stream is about to be destroyed (before the runtime's call): the watcher does not ask
 * about it until xq_stream_closed says how the call went. Destroyed, it never asks again, and
 * takes what q has in flight without a marker for reached (xq_admission.h's top, "Sparse markers");
 * not destroyed, it asks as before. q may be NULL (no queue: nothing to do). */
void xq_stream_closing(struct xqueue *q);
void xq_stream_closed(struct xqueue *q, bool destroyed);
/* Whether any stream capture is in progress: then the watcher leaves markers alone (under a
 * global capture mode, an event query on any thread may invalidate the capture). */
bool xq_capturing(void);
/* Changes whenever a capture begins or ends: what the watcher saw reached across a change was
 * not queried for a while, so it says nothing about what commands cost. */
uint64_t xq_capture_epoch(void);

/* How many queues are active now (what lets the watcher's expiry skip its pass when none is). */
int xq_active_queues(void);

/* Applies the scheduler's decision (XQ_GATE_DECISION bits) to q, with the scheduling lock
 * held; wakes its waiters. Returns the decision it replaced. */
uint64_t xq_set_decision(struct xqueue *q, uint64_t decision);
/* The same on a queue's state alone: another process's queue on a board (its owner wakes its
 * own threads; see board.h). With the board's lock held. Returns the decision it replaced. */
uint64_t xq_state_set_decision(struct xq_state *st, uint64_t decision);
/* Threads held in admission look at their gates again (another process changed them). */
void xq_wake_waiters(void);

/* Exit began: admit everything from now on, stop the watcher and join it. Idempotent. */
void xq_shutdown(void);
/* In the child of fork: forget the parent's threads, locks and markers. */
void xq_admission_reset(void);

#endif /* GPUPRIO_XQ_ADMISSION_H */
