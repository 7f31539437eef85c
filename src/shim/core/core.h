/*
 * core.h - the shim core: what the shims of all platforms share, written once against the
 * platform contract (platform.h).
 *
 * A library holds one platform's shim (src/shim/<platform>/shim_*.c) and one copy of the core.
 * The shim describes itself in core_shim (its platform and its table of entry points); the core
 * resolves the entry points, answers run-time lookups (dlsym and the runtime's proc-address
 * functions) with the same rules on every platform, maps stream handles onto XQueues with one
 * rule, registers streams, guards the platform's completion markers, starts the library and
 * resets it in a forked child (lifecycle.c), and is the skeleton of every wrapper (observing,
 * forwarding and tracking each call, by its kind: kinds.def). A platform's shim is its list of
 * entry points, its types and its HAL.
 */
#ifndef GPUPRIO_CORE_H
#define GPUPRIO_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xq_admission.h"
#include "gp_bind.h"
#include "graph.h"
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
 * The stream a handle names in an entry point: a created stream's handle as it is, and for the
 * special handles (platform.h) the per-thread or the legacy handle, never the null handle, whose
 * meaning depends on the form. per_thread_default: the call is the per-thread-default-stream
 * form of its function (_spt, _ptsz, _ptds), where the null handle means the per-thread stream
 * (and the legacy handle too, where the platform says so).
 */
uintptr_t core_stream_named(uintptr_t handle, bool per_thread_default);
/*
 * The XQueue a stream handle means on the calling thread: a created stream's if it is known
 * (NULL if not); for the special handles, the calling thread's queue of the current device,
 * created on first use (NULL without a current device). per_thread_default as above.
 */
struct xqueue *core_queue_of(uintptr_t handle, bool per_thread_default);
/* The runtime created stream on the calling thread: its XQueue, with the stream's properties.
 * Inside the depth. */
void core_stream_created(uintptr_t stream);
/* The runtime destroyed stream: its XQueue is forgotten. */
void core_stream_destroyed(uintptr_t stream);

/* ---- streams being created (creation.c) ---- */

/*
 * What gpuprio knows about the stream the calling thread is creating, from before its creator is
 * forwarded to after (STREAM_CREATE calls): the priority its queue will get from gpuprio's own
 * sources (sched_stream_creating), for the shims' creators, which may create the stream with a
 * matching hardware priority or CU mask where the application did not choose one.
 */
struct core_creation {
    bool has_priority; /* gpuprio gives it one; else it keeps its creation priority */
    int priority;
    /* The shim created it other than the application asked (set by its creators): its queue
     * takes its creation priority as the application's, the default, not the one gpuprio chose,
     * which would outlive the source it came from (a thread's priority, since cleared). */
    bool adjusted;
    bool cu_reserved; /* the shim created it with the CU mask of GPUPRIO_CU_RESERVE */
};
extern _Thread_local struct core_creation core_creating;

void core_creation_begin(void);
void core_creation_end(bool ok);
/* The priority the stream will have on gpuprio's scale, when the application does not choose
 * one at creation: gpuprio's, or normal. */
int core_creation_priority(void);
/* The runtime's stream priority to create it with instead of the default: above normal the
 * greatest, below normal the least (and the creation counts as adjusted). False to leave it
 * alone: GPUPRIO_HW_PRIORITY=off, no gpuprio priority, normal, or no range from the runtime. */
bool core_hw_priority(int *out);

/* ---- the depth and the markers (guard.c) ---- */

/*
 * How deep the calling thread is inside the shim: a forwarded call, or the core's own use of
 * the runtime. While it is not 0, calls the runtime makes into its own (intercepted) exports go
 * straight through the wrappers.
 */
extern __attribute__((visibility("hidden"))) _Thread_local int core_depth;

/* The platform's completion markers as admission must call them (for sched_configure). */
const struct xq_marker_ops *core_markers(void);
/* The platform's gates_prepare, inside the depth (for the boards: sched_set_device_ops). */
int core_gates_prepare(int device, void *base, size_t size, uintptr_t *device_base);
/* The platform's mps, inside the depth (likewise; only where the platform has one). */
int core_mps(int device, struct xq_mps *out);
/* Puts gate `number` on q's stream (admission chose it: xq_ticket.gate), inside the depth. */
void core_put_gate(struct xqueue *q, uint64_t number);

/* ---- the wrapper skeleton (call.c) ---- */

enum core_kind {
#define CORE_KIND(name, stream, forward) CORE_KIND_##name,
#include "kinds.def"
#undef CORE_KIND
};

/* One intercepted call, from before it is forwarded to after. */
struct core_call {
    enum core_kind kind;
    void *stream; /* the entry's stream expression (kinds.def: a handle or a pointer) */
    struct xqueue *q;
    struct xq_ticket ticket;
};

/* Before forwarding the call of entry point `entry` (its index in core_shim's table) with cost
 * key `what` (xc_cost.h): finds its queue and admits its work, which may hold the thread. */
void core_call_begin(struct core_call *c, enum core_kind kind, void *stream, unsigned entry,
                     uint64_t what);
/* After forwarding, inside the depth; ok: the runtime reported success. */
void core_call_end(struct core_call *c, bool ok);

/* ---- device resets and context destruction (teardown.c) ---- */

/* Before forwarding a call of a teardown kind (kinds.def: DEVICE_RESET, CONTEXT_DESTROY,
 * CONTEXT_RELEASE) with its stream expression: notes what it will destroy, and pauses the
 * watcher. */
void core_teardown_begin(enum core_kind kind, void *arg);
/* After forwarding it, inside the depth (ok: it succeeded): drops what gpuprio held of what
 * died, retires the queues of the streams that died, and has the boards' gates registered
 * again on next use; resumes the watcher. */
void core_teardown_end(bool ok);

/*
 * How a wrapper of each kind forwards (CORE_WRAPPER_BODY's `forward`), as kinds.def's forward
 * column says: the runtime's function with the caller's arguments, or the shim's create_NAME,
 * which may create the stream with a hardware priority or CU mask (creation.c) and is called
 * only when the runtime has NAME. core_forward.h, generated from that column by
 * src/CMakeLists.txt, defines CORE_FORWARD_<kind> as one of these for every kind; a kind
 * without one is a compile error in every wrapper of it.
 */
#define CORE_FORWARD(kind, name, gp_real, args) CORE_FORWARD_##kind(name, gp_real, args)
#define CORE_FORWARD_AS_CALLED(name, gp_real, args) gp_real args
#define CORE_FORWARD_CREATOR(name, gp_real, args) create_##name args
/* GRAPH: the shim's graph_NAME gets the call (its queue and ticket) and the runtime's function
 * before the caller's arguments; GRAPH_CHANGE tells graph.c of the change first. */
#define CORE_ARGS(...) __VA_ARGS__
#define CORE_FORWARD_GRAPH(name, gp_real, args) graph_##name(&gp_call, gp_real, CORE_ARGS args)
#define CORE_FORWARD_GRAPH_CHANGE(name, gp_real, args)                                             \
    (core_graph_exec_changing(gp_call.stream), gp_real args)
#include "core_forward.h"

/*
 * The body of every generated wrapper: forward through gp_real (a function pointer, NULL when
 * the runtime lacks the function; then whatever another library of the process defines under
 * the name, or `unbound`), observing and tracking around it. `forward` is the expression that
 * forwards (normally `gp_real args`); the result equals `success` when the call succeeded.
 * Locals carry a gp_ prefix so that they cannot clash with the API lists' parameter names.
 */
#define CORE_WRAPPER_BODY(result_type, unbound, success, gp_real, name, kind, stream, entry, what, \
                          args, forward)                                                           \
    if (!gp_real) {                                                                                \
        *(void **)&gp_real = gp_unbound_fn(name, __builtin_return_address(0));                     \
        return gp_real ? gp_real args : unbound;                                                   \
    }                                                                                              \
    if (core_depth)                                                                                \
        return gp_real args;                                                                       \
    struct core_call gp_call;                                                                      \
    core_call_begin(&gp_call, CORE_KIND_##kind, (void *)(stream), entry, (uint64_t)(what));        \
    core_depth++;                                                                                  \
    result_type gp_result = forward;                                                               \
    core_call_end(&gp_call, gp_result == success);                                                 \
    core_depth--;                                                                                  \
    return gp_result;

#endif /* GPUPRIO_CORE_H */
