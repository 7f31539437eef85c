/*
 * sched_board.h - this process's part in the boards (board.h): joining each device's board,
 * with the process's record on it, putting queues' scheduling state into slots, counting the
 * queues that never joined scheduling into the record, one listener thread per board that wakes
 * held threads when another process changed their gates, applies priority requests and reclaims
 * dead processes' slots, and leaving the boards at exit.
 *
 * The scheduler (scheduler.c) decides per device: over its own queues and, with the device's
 * board locked, every other process's live slot on it.
 */
#ifndef GPUPRIO_SCHED_BOARD_H
#define GPUPRIO_SCHED_BOARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xq_admission.h"
#include "board.h"
#include "gemm_tally.h"
#include "policy.h"

/* Devices with an index at or above this are scheduled within the process only. */
#define SB_MAX_DEVICES 64

/* What the boards' listener threads ask of the scheduler (scheduler.c), which sits above. */
struct sb_upcalls {
    /* Applies priority requests found in device's slots; decides again if any (or if asked). */
    void (*changed)(int device, bool decide);
    /* Whether any of this process's queues on device is held back, or held by gates that another
     * process may close without a wake (so dead owners matter), and in *suspended whether one is
     * suspended (not only throttled). */
    bool (*device_held)(int device, bool *suspended);
    /* Whether a queue of this process on device may take turns with others (GPUPRIO_POLICY=share:
     * it is active): the listener then looks every SB_SHARE_LOOK_NS, which is how long turns
     * overrun. */
    bool (*share_turn)(int device);
    /* At exit, with the scheduling lock held, before this process's queues leave their slots
     * (whose counts go with them): say what is left to say of them (GPUPRIO_LOG=info). */
    void (*leaving)(void);
};
#define SB_SHARE_LOOK_NS 2000000ull

/* Reads GPUPRIO_BOARD; the scheduler's upcalls. From the library constructor. */
void sb_configure(const struct sb_upcalls *upcalls);
/* What the boards need of the platform (platform.h has the rules): a device's stable identity
 * (0, or negative when it has none; without it no board is used), and preparing a board's gate
 * lines for Level 2, or where the runtime refuses them a private copy of them (mirrored gates,
 * devgate.h) (optional: without it, or when both fail, the device stays on Level 1). */
struct sb_device_ops {
    int (*key)(int device, char *buf, size_t size);
    int (*gates_prepare)(int device, void *base, size_t size, uintptr_t *device_base);
    /* Optional: whether the process is an MPS client on device (platform.h's mps). */
    int (*mps)(int device, struct xq_mps *out);
};
void sb_set_device_ops(const struct sb_device_ops *ops);
/* A decision changed the word of another process's gate line on device's board (board locked),
 * which its owner mirrors: written into the owner's copy too where it can be (gate_copy.h), so
 * that the change reaches the owner's device without waiting for its listener. */
void sb_write_peer_copy(int device, const struct dg_line *line);
/* Whether queues of device may be held by gates (Level 2): GPUPRIO_LEVEL=2, a board, and the
 * device can wait on its gate lines. */
bool sb_gates_usable(int device);
/* Level 2: the predicted GPU time one gate of device may hold back (GPUPRIO_GATE_US, else 100 us,
 * or 300 us in an MPS client); 0 where gates are not usable. */
uint64_t sb_gate_ns(int device);

/* A device reset or a context's destruction (docs/design.md, "Resets and context destruction")
 * unregistered the boards' gate lines with the runtime: no gate is put with them from now on, and
 * their gated queues are decided again (held on the host). */
void sb_gates_lost(void);
/* Before a command on device is admitted, on the application's thread with no gpuprio lock held:
 * registers device's gate lines again if a teardown unregistered them (one load otherwise). */
extern _Atomic unsigned sb_gates_unregistered; /* boards whose lines await sb_gates_renew */
void sb_gates_renew_now(int device);
static inline void sb_gates_renew(int device)
{
    if (atomic_load_explicit(&sb_gates_unregistered, memory_order_relaxed))
        sb_gates_renew_now(device);
}

/* Joins device's board on first use (one warning if it cannot), and puts the process's record
 * on it; learns first whether the process is an MPS client there (with or without a board). Without
 * the scheduling lock: it may ask the runtime for the device's identity. */
void sb_join(int device);

/* The xq_hooks.created hook's part: q counts among its device's unused queues (those that never
 * joined scheduling, which hold no slot), published in the process's record on the board, until
 * it joins (sb_queue_joined) or is released (sb_released). Any thread, any lock held. */
void sb_queue_created(struct xqueue *q);
/* q joined scheduling (its slot, if any, was attached first): no longer unused. */
void sb_queue_joined(struct xqueue *q);
/* A process-wide priority request (gpuprio set PID PRIORITY) in the process's record on device's
 * board that was not seen yet: true, with its priority (not yet checked). Scheduling lock held. */
bool sb_record_request(int device, int *priority);
/* Whether sb_record_request would find one; takes no lock and consumes nothing. */
bool sb_record_request_pending(int device);
/* It was applied: the record shows the priority (gpuprio set waits to see it there). */
void sb_record_applied(int device, int priority);

/* The process's GEMM counts on device so far (gemm_tally.h's): kept, and shown in its record on
 * device's board (board.h's struct gp_record_gemm: the reasons left whole that a user must know
 * of), at once and whenever one is claimed. Counts only grow: of two calls at the same moment,
 * the greater of each count is kept. Any thread, any lock held; a few atomic operations. */
void sb_record_gemm(int device, const struct gemm_counts *counts);

/* Puts q's scheduling state into a slot on its device's board, if it has one; with the
 * scheduling lock held, before q is first decided on. */
void sb_attach(struct xqueue *q);
/* The xq_hooks.released hook: q's slot is freed and the board decided again soon; a queue that
 * never joined leaves its device's unused count. */
void sb_released(struct xqueue *q);
/* A thread of this process is about to be held on a queue of device, or a queue of device became
 * gated (Level 2), so that others may hold it on the device: from now on the device's listener
 * looks for dead processes (which may be what holds it) every LIVENESS_HELD_NS. */
void sb_thread_held(int device);
/* q's longest recent command took ns (xc_cost.h's struct xc_longest): shown in its slot, if it
 * has one (board.h's longest_us), with one relaxed store. The admission hook, on the watcher
 * thread while q has commands in flight (so it keeps its slot meanwhile). */
void sb_queue_longest(struct xqueue *q, uint64_t ns);
/* The slot q's state lives in, or NULL. */
struct gp_board_slot *sb_slot_of(const struct xqueue *q);
/* q's identity on its device (GP_BOARD_QUEUE_IDENTITY; a queue without a slot: its address,
 * seen by no other process). */
uint64_t sb_identity(const struct xqueue *q);
/* The command name of the process with pid in pid namespace pid_ns, from its record on device's
 * board, into comm (not terminated when 16 long); false when it has none there. */
bool sb_process_comm(int device, uint32_t pid, uint32_t pid_ns, char comm[16]);

/* The board of device, locked for a decision, or NULL (none, or given up on). */
struct gp_board *sb_lock(int device);
/* The board of device given up on (its lock held too long), to be read without the lock, or
 * NULL: a decision then still sees the other processes' queues for its own, and writes nothing
 * of theirs. */
struct gp_board *sb_given_up(int device);
/* Unlocks device's board after sb_lock; changed: another process's queue was let go further, so
 * its held threads must look again. summary: the board's (GP_BOARD_SUMMARY) as the decision saw
 * it, for other users on the shared directory (tenants.h); NULL where the board is not shared. */
void sb_unlock(int device, bool changed, const uint64_t *summary);
/* Calls fn for each queue of other users' boards of device that holds this user's back, with its
 * priority within its user's cap (tenants.h); with the scheduling lock held. */
void sb_foreach_tenant_queue(
    int device, void (*fn)(const struct sched_queue *q, struct xq_state *st, void *arg), void *arg);
/* Whether a live slot belongs to another process (or an earlier image of this one). */
bool sb_foreign(const struct gp_board_slot *s);
/* Whether device has a board this process uses. */
bool sb_has_board(int device);
/* Exit began: this process's queues have left the boards and take no part in decisions. */
bool sb_leaving(void);

/* Adds to *h what other processes' queues of device above priority and at it tell a suspended
 * queue's watchdog (xq_admission.h's struct xq_holders), on this user's board and other users'
 * (tenants.h). With the scheduling lock held. */
void sb_holders_elsewhere(int device, int priority, struct xq_holders *h);

/* In the child of fork: the parent's boards, slots and listeners are not this process's. */
void sb_reset(void);

#endif /* GPUPRIO_SCHED_BOARD_H */
