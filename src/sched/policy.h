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

struct sched_queue {
    int device;
    int priority; /* higher runs first */
    bool active;
    bool suspend;  /* out: admit nothing */
    bool throttle; /* out: admit at most the in-flight window */
    bool track;    /* out: follow its commands with completion markers */
};

enum sched_policy {
    SCHED_POLICY_HPF,         /* highest priority first (the default) */
    SCHED_POLICY_PASSTHROUGH, /* no scheduling: observe only */
};

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

/* Applies policy p to queues. */
void sched_policy_decide(enum sched_policy p, struct sched_queue *queues, size_t n);

#endif /* GPUPRIO_POLICY_H */
