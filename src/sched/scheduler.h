/*
 * scheduler.h - in-process scheduling: priorities of queues, and the policy's decisions applied.
 *
 * The sched layer owns configuration (GPUPRIO_POLICY, the window, priorities), gives every new
 * queue its priority, and whenever a queue becomes active or idle, or a priority changes, runs
 * the policy (policy.h) over all queues and suspends or resumes them (xq_admission.h).
 */
#ifndef GPUPRIO_SCHEDULER_H
#define GPUPRIO_SCHEDULER_H

#include "xq_admission.h"
#include "gpuprio.h"
#include "policy.h"
#include "sched_board.h"
#include "xqueue.h"

#include <stddef.h>

/* Reads the GPUPRIO_* scheduling variables and sets the preempt layer up; from a constructor. */
void sched_configure(const struct xq_marker_ops *ops);
enum sched_policy sched_policy(void);
/* What the boards need of the platform: device identity and gates (sched_board.h). */
void sched_set_device_ops(const struct sb_device_ops *ops);

int sched_set_stream_priority(struct xqueue *q, int priority);
int sched_set_thread_priority(int priority);
int sched_thread_priority(int *priority);
/* Forgets the calling thread's priority: its queues and those it creates are as if it never had
 * one. */
int sched_clear_thread_priority(void);
/*
 * The calling thread is about to create a stream (before the runtime's call): the priority
 * gpuprio's own sources will give it (GPUPRIO_STREAM_PRIORITIES by creation order, the thread's,
 * the process's, `gpuprio set`), or -ENOENT when none does and the stream keeps its creation
 * priority. Takes the stream's place in GPUPRIO_STREAM_PRIORITIES, so that the queue registered
 * for it on this thread gets the same entry whatever other threads create meanwhile;
 * sched_stream_not_created gives the place back when the runtime's call failed.
 */
int sched_stream_creating(int *priority);
void sched_stream_not_created(void);
/* The highest priority the process was given so far by its environment, the API or `gpuprio
 * set` (streams' creation priorities aside), or normal when that is higher. */
int sched_highest_priority(void);
void sched_queue_stats(const struct xqueue *q, struct gpuprio_queue_stats *out);
/* Fills out[0..max) with every queue; returns their number. */
int sched_all_stats(struct gpuprio_queue_stats *out, size_t max);

/* In the child of fork. */
void sched_reset(void);

#endif /* GPUPRIO_SCHEDULER_H */
