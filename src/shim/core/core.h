/*
 * core.h - the shim core: what the shims of all platforms share, written once against the
 * platform contract (platform.h).
 *
 * A library holds one platform's shim (src/shim/<platform>/shim_*.c) and one copy of the core.
 * The shim describes itself in core_shim (its platform); the core maps stream handles onto
 * XQueues with one rule, registers streams, and guards the platform's completion markers. The
 * wrapper skeleton itself (observing, forwarding and tracking each call) is still each shim's.
 */
#ifndef GPUPRIO_CORE_H
#define GPUPRIO_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "platform.h"
#include "xqueue.h"

/* A shim as the core sees it: its platform. */
struct core_shim {
    const struct gp_platform *platform;
};

/* The library's shim, defined by its platform's shim. */
extern const struct core_shim core_shim;

/* ---- streams and queues (streams.c) ---- */

/*
 * The XQueue a stream handle means on the calling thread: a created stream's if it is known
 * (NULL if not); for the special handles (platform.h), the calling thread's queue of the
 * current device, created on first use (NULL without a current device). per_thread_default:
 * the call is the per-thread-default-stream form of its function (_spt, _ptsz, _ptds), where
 * the null handle means the per-thread stream.
 */
struct xqueue *core_queue_of(uintptr_t handle, bool per_thread_default);
/* The runtime created stream on the calling thread: its XQueue, with the stream's properties.
 * Inside the depth. */
void core_stream_created(uintptr_t stream);
/* The runtime destroyed stream: its XQueue is forgotten. */
void core_stream_destroyed(uintptr_t stream);

/* ---- the depth and the markers (guard.c) ---- */

/*
 * How deep the calling thread is inside the shim: a forwarded call, or the core's own use of
 * the runtime. While it is not 0, calls the runtime makes into its own (intercepted) exports go
 * straight through the wrappers.
 */
extern __attribute__((visibility("hidden"))) _Thread_local int core_depth;

/* The platform's completion markers as admission must call them (for sched_configure). */
const struct xq_marker_ops *core_markers(void);

#endif /* GPUPRIO_CORE_H */
