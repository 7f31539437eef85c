/*
 * policy.h - scheduling policies: pure functions from the queues' state to decisions.
 *
 * A policy sees each queue's device, priority and whether it is active (work in flight, threads
 * waiting, or within the grace window after its last completion), and says which queues must be
 * suspended. It knows nothing of runtimes, threads or time, so it is unit-tested on its own
 * (tests/unit/policy_test.c), and the same function serves one process or a board shared by
 * many.
 */
#ifndef GPUPRIO_POLICY_H
#define GPUPRIO_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sched_queue {
    int device;
    int priority; /* higher runs first */
    bool active;
    /* GPUPRIO_POLICY=share only: */
    bool owed;      /* it is owed GPU time under its minimum share (its owner keeps the account) */
    uint64_t vtime; /* the time it ran over its weight, on one scale for all of its peers */
    uint64_t identity; /* the same in every process's view of it, unique on its device */
    bool running;      /* the last decision let it run (not suspended) */
    bool suspend;      /* out: admit nothing */
    bool throttle;     /* out: admit at most the in-flight window */
    bool track;        /* out: follow its commands with completion markers */
};

enum sched_policy {
    SCHED_POLICY_HPF,         /* highest priority first (the default) */
    SCHED_POLICY_PASSTHROUGH, /* no scheduling: observe only */
    SCHED_POLICY_SHARE,       /* hpf with minimum shares and weights between equal priorities */
};

/* share: how far (in vtime) one active queue may run ahead of its least-served equal peer
 * before it waits for it. */
#define SCHED_SHARE_QUANTUM_NS 10000000u

/* The policy's name as GPUPRIO_POLICY spells it. */
const char *sched_policy_name(enum sched_policy p);

/*
 * Highest priority first: per device, every queue of lower priority than the highest active
 * queue is suspended, active or not (an idle one would otherwise start work the moment it gets
 * some). Queues of equal priority never suspend each other; with nothing active, nothing is.
 * A queue is throttled to the in-flight window while any queue of higher priority exists on
 * its device: that bounds how much of it can start ahead of the other's next command. A queue
 * with nothing above it is not throttled. Queues are tracked (their commands followed by
 * completion markers, which is how activity is known) only on a device where priorities
 * differ, so a program whose streams share one priority runs exactly as without gpuprio.
 */
void sched_policy_hpf(struct sched_queue *queues, size_t n);

/*
 * hpf, then two exceptions (GPUPRIO_POLICY=share). While an active queue is owed GPU time under
 * its minimum share (its owner gives it turns of a few milliseconds), it runs and every active
 * queue above it on its device is suspended (and throttled): under hardware priorities nothing
 * below would start while something above has work queued. Otherwise the queues of the highest
 * active priority on a device take turns by weight: while two or more of them are active, each is
 * throttled and tracked, and one runs, the others are suspended: the one that ran already while
 * its vtime is at most SCHED_SHARE_QUANTUM_NS ahead of the least (so a turn lasts until its queue
 * is the quantum ahead of the next), else the least served (ties, and several that ran, go to the
 * greatest identity, so that every process decides alike). Every queue is tracked and throttled,
 * also alone on its device: what a queue does is known only so, and one that ran deep before
 * another came could not be made to wait its turn (at Level 2 its throttle is gates, which cost
 * nothing until they close).
 */
void sched_policy_share(struct sched_queue *queues, size_t n);

/* Applies policy p to queues. */
void sched_policy_decide(enum sched_policy p, struct sched_queue *queues, size_t n);

#endif /* GPUPRIO_POLICY_H */
