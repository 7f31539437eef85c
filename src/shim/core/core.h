/*
 * core.h - the shim core: what the shims of all platforms share, written once against the
 * platform contract (platform.h).
 *
 * A library holds one platform's shim (src/shim/<platform>/shim_*.c) and one copy of the core.
 * The shim describes itself in core_shim (its platform and its table of entry points); the core
 * resolves the entry points, answers run-time lookups (dlsym and the runtime's proc-address
 * functions) with the same rules on every platform, maps stream handles onto XQueues with one
 * rule, registers streams, and guards the platform's completion markers. The wrapper skeleton
 * itself (observing, forwarding and tracking each call) is still each shim's.
 */
#ifndef GPUPRIO_CORE_H
#define GPUPRIO_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "platform.h"
#include "xqueue.h"

/* A shim as the core sees it: its platform, and the functions it intercepts. */
struct core_shim {
    const struct gp_platform *platform;
    size_t entries;             /* how many entry points it intercepts */
    const char *const *names;   /* each one's exported name */
    void *const *wrappers;      /* the shim's function of each name */
    void **real;                /* the runtime's of each, NULL where it lacks one (core_resolve) */
    void (*resolve_more)(void); /* optional: the shim's other lookups, once, after the table's */
};

/* The library's shim, defined by its platform's shim. */
extern const struct core_shim core_shim;

/* ---- entry points and lookups (entries.c) ---- */

/* For core_resolve only. */
extern pthread_once_t core_entries_once;
void core_entries_resolve(void);

/* Binds the runtime and looks every entry point up in it, once (none without a runtime): then
 * core_shim.real[] is final. Inline, as every wrapper calls it. */
static inline void core_resolve(void)
{
    pthread_once(&core_entries_once, core_entries_resolve);
}

/*
 * dlsym or dlvsym found sym (not NULL) for name on a real handle (not RTLD_DEFAULT or
 * RTLD_NEXT): the wrapper of name when name is an intercepted entry point and sym is the bound
 * runtime's own function of that name; sym otherwise. A name that is not intercepted binds
 * nothing and touches nothing: the application gets exactly what libc gave.
 */
void *core_lookup(const char *name, void *sym);

/*
 * A proc-address lookup of the runtime (hipGetProcAddress, cuGetProcAddress...) succeeded and
 * wrote a function pointer to *pfn: replaced by the wrapper when it is the runtime's own
 * function of an entry point. The runtime already chose the variant (legacy or per-thread
 * default stream, the version), so matching the pointer keeps the variants apart. Any other
 * pointer is left as it is (GPUPRIO_LOG=debug names one that looks like it should have matched).
 */
void core_hand_out(void **pfn);

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
