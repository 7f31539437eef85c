/*
 * xq_watcher.h - the one thread per process that follows completion markers (xq_watcher.c).
 *
 * Admission hands it queues that have markers outstanding (xq_watch); it queries each queue's
 * oldest marker, and tells admission what was reached and when a queue's grace window may have
 * ended, through the calls admission gives it (struct xq_watcher_ops): it knows nothing of
 * admission itself, so the two modules do not call each other.
 */
#ifndef GPUPRIO_XQ_WATCHER_H
#define GPUPRIO_XQ_WATCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "xqueue.h"

struct xq_watcher_ops {
    /* n markers of q were reached, of commands charged cost_ns against its budget. */
    void (*completed)(struct xqueue *q, unsigned n, uint64_t cost_ns);
    /* q's longest recent command (xc_cost.h's struct xc_longest) moved noticeably: show ns. Called
     * while q still has commands in flight (not yet released). */
    void (*longest)(struct xqueue *q, uint64_t ns);
    /* Deactivates queues idle for the grace window; returns the nearest future time a queue's
     * grace ends (0 when none is pending). */
    uint64_t (*expire_idle)(uint64_t now);
    /* Whether a stream capture is in progress, and a count that changes whenever one begins or
     * ends: what was reached across a capture was not queried meanwhile and teaches nothing. */
    bool (*capturing)(void);
    uint64_t (*capture_epoch)(void);
    /* xq_marker_ops's stream_idle for q, or 1 once its stream is being destroyed; 0 while a
     * capture is in progress (xq_admission.h, "Sparse markers"). */
    int (*stream_idle)(struct xqueue *q);
    /* Registered with atexit when the thread starts, after the runtime's own exit handlers, so
     * it runs before them: ends admission and stops this thread while the runtime is whole. */
    void (*at_exit)(void);
};

struct xq_watcher_config {
    uint64_t poll_ns; /* the polling period while markers are outstanding */
    uint64_t slow_ns; /* report marker queries that take longer (0: none) */
};

/* Sets the watcher up (at configuration), or forgets the parent's (in the child of fork). */
void xq_watcher_configure(const struct xq_watcher_config *config,
                          const struct xq_marker_ops *markers, const struct xq_watcher_ops *ops);
void xq_watcher_reset(void);
/* q has new markers to follow (NULL: only look at idle queues again). Starts the thread on
 * first use. */
void xq_watch(struct xqueue *q);
/*
 * A device reset or a context's destruction (docs/design.md, "Resets and context destruction"):
 * xq_watcher_pause returns once no pass of the watcher is running, and none starts until as many
 * xq_watcher_resume calls: from before the runtime is asked to tear down until what died was
 * dropped, so that the watcher never queries a marker or a stream that the teardown destroyed. Any
 * thread, no gpuprio lock held.
 */
void xq_watcher_pause(void);
void xq_watcher_resume(void);
/*
 * While paused: every command in flight on each followed queue that pick chooses is taken as
 * reached, with no query; each of their markers is handed to forget (which must not call the
 * runtime on a marker that died), and admission hears of the commands as completed. No gpuprio
 * lock held.
 */
void xq_watcher_drop(bool (*pick)(const struct xqueue *q, void *arg),
                     void (*forget)(struct xqueue *q, void *marker, void *arg), void *arg);
/* Stops the thread and joins it. */
void xq_watcher_stop(void);

#endif /* GPUPRIO_XQ_WATCHER_H */
