/*
 * platform.h - the platform contract: the one struct of operations a GPU platform (HIP, CUDA)
 * implements for the shim core.
 *
 * Every platform's shim does the same things around the application's calls: it finds the
 * runtime, answers run-time lookups with its wrappers, maps stream handles onto XQueues,
 * registers streams, and follows admitted commands with completion markers. The shim core
 * (src/shim/core) does these once, written against this struct; each platform implements the
 * struct once, in its HAL (src/hal/hip/hip_platform.c, src/hal/cuda/cuda_platform.c), the way
 * mimalloc declares the primitives of every OS in one prim.h and implements them once per OS.
 * The header lives with the core, its one consumer, so that the dependency points from the
 * platforms to the core and never back; nothing here names a type of HIP or CUDA (handles are
 * uintptr_t, results int).
 *
 * Rules for every operation, unless its comment says otherwise:
 *   - Threads: any thread may call it, concurrently; it needs no lock of the caller's.
 *   - Binding: bind() may load the runtime, so it is never called from a constructor; binding()
 *     and sym() bind first too. The core calls the other operations only once bind() returned
 *     0, so they may take the runtime as found.
 *   - The application's view: an operation called on the application's thread calls the runtime
 *     only in ways that leave what the application observes as it was (its current device or
 *     context, and HIP's per-thread last error: no call that can fail before the application's
 *     own call is forwarded). The core calls the operations that may reach the runtime's own
 *     exports (stream_props, markers) inside its depth, so that those calls go straight through.
 *   - Results: 0 or a negative errno value, unless the comment says otherwise.
 *
 * Gates (Level 2, src/preempt/devgate.h: a stream waiting on a value in host memory, which other
 * processes write) come after device identity; then what a device reset or a context's
 * destruction destroys (teardown.c), and sharing the device with other processes.
 */
#ifndef GPUPRIO_PLATFORM_H
#define GPUPRIO_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xq_admission.h"
#include "gp_bind.h"

/*
 * The handles that name no created stream. Queues are keyed by them (src/shim/core/streams.c
 * has the one rule for both platforms): the null and the legacy handle mean the legacy null
 * stream, one queue per (device, thread); the per-thread handle, and the null handle in a
 * per-thread-default-stream entry point (HIP's _spt, CUDA's _ptsz/_ptds), mean the calling
 * thread's per-thread stream, one queue per (thread, device); so does the legacy handle there
 * where the platform says so (per_thread_takes_legacy).
 */
struct gp_stream_handles {
    uintptr_t null;       /* 0 on every platform */
    uintptr_t legacy;     /* the legacy null stream by name (hipStreamLegacy, CU_STREAM_LEGACY) */
    uintptr_t per_thread; /* hipStreamPerThread, CU_STREAM_PER_THREAD */
    /* A per-thread-default-stream form takes the legacy handle for the per-thread stream too
     * (HIP: clr's PER_THREAD_DEFAULT_STREAM, since ROCm 6.3, the first clr that took
     * hipStreamLegacy at all; CUDA's CU_STREAM_LEGACY says legacy in every form). */
    bool per_thread_takes_legacy;
};

/*
 * What a device reset or a context's destruction destroys (teardown.c): the device's context, or
 * a context of any device (device -1), by the platform's handle (0 where the device says it all:
 * HIP). may_survive: the call may leave it alive (a primary context's release that is not the
 * last); teardown_done tells.
 */
enum gp_teardown_kind {
    GP_TEARDOWN_RESET,   /* a device's (primary) context: arg a device, or -1 for the current one */
    GP_TEARDOWN_DESTROY, /* a context: arg its handle */
    GP_TEARDOWN_RELEASE, /* a release of a device's primary context: arg the device */
};
struct gp_teardown {
    int device;
    uintptr_t context;
    bool may_survive;
};

/*
 * Gates inside graphs (graph.c; docs/design.md, "Gates inside graphs"): what the runtime does of
 * them. Each executable graph gated gets a copy of its graph at instantiation, and from it, once,
 * a gated copy: a second executable graph with wait nodes before kernel nodes, each waiting until
 * a 64-bit gate word in host memory (devgate.h) is at least 1. The core decides which executable
 * graph each launch goes to and which word its wait nodes wait on; these do what it decides.
 * Handles are the platform's as uintptr_t, results as the rules above; reasons are the list
 * below (enum gp_graph_whole). Called on the application's thread, inside the core's depth.
 *
 * Why a graph launch went as the application's own executable graph, without gates inside:
 * X(name, what gpuprio says). The first group passes (the next launch may be gated); from
 * FEW_KERNELS on, the executable graph stays whole for good. NO_RUNTIME's text is the platform's
 * (gp_graph_ops.no_runtime): the version that has what gpuprio needs.
 */
#define GP_GRAPH_WHOLE_REASONS(X)                                                                  \
    X(NOT_GATED, "its stream was not held by gates")                                               \
    X(NOT_LEARNED, "its GPU time was not learned yet")                                             \
    X(SHORT, "its learned GPU time is within one gate interval")                                   \
    X(CAPTURING, "a stream capture was in progress")                                               \
    X(OTHER_STREAM, "it was launched on another stream than its previous launch")                  \
    X(ERROR_PENDING, "an error of the application's was pending on its thread")                    \
    X(UNKNOWN, "gpuprio did not see it instantiated")                                              \
    X(FEW_KERNELS, "it has fewer than two kernel nodes")                                           \
    X(MEM_NODES, "it has memory allocation or free nodes")                                         \
    X(CONDITIONAL, "it has conditional nodes")                                                     \
    X(CHILD_GRAPH, "it has child graph nodes")                                                     \
    X(OTHER_NODES, "it has nodes of a type gpuprio does not know")                                 \
    X(DEVICE_LAUNCH, "it was instantiated for launches from the device")                           \
    X(DEVICE_UPDATABLE, "it has device-updatable kernel nodes")                                    \
    X(CHANGED, "the application changed its executable graph")                                     \
    X(NO_PLACE, "no kernel node of it follows another where a wait node could go")                 \
    X(NO_RUNTIME, NULL)                                                                            \
    X(FAILED, "a driver call failed while gpuprio copied it or built its gated copy")

enum gp_graph_whole {
#define GP_GRAPH_WHOLE_ENUM(name, what) GP_GRAPH_WHOLE_##name,
    GP_GRAPH_WHOLE_REASONS(GP_GRAPH_WHOLE_ENUM)
#undef GP_GRAPH_WHOLE_ENUM
        GP_GRAPH_WHOLE_COUNT
};

struct gp_graph_twin; /* a gated copy: the platform's own */
/* What building a gated copy made (twin_build). */
struct gp_graph_built {
    struct gp_graph_twin *twin;
    uintptr_t exec;     /* its executable graph, launched instead of the application's */
    size_t gates;       /* its wait nodes */
    size_t noted;       /* its kernel nodes with a predicted time noted */
    uint64_t open_word; /* a word always open (its device address), where it waits ungated */
};
struct gp_graph_ops {
    /* What gpuprio says of a runtime that lacks what the gated copy needs (NO_RUNTIME). */
    const char *no_runtime;
    /* Whether GPUPRIO_GRAPH_GATE_US's default applies; false: gates only where it is set. */
    bool on_by_default;
    /* Where the calling thread instantiates executable graphs (CUDA: its current context), asked
     * at each instantiation so that the gated copy is built there; 0 where it has none. */
    uintptr_t (*context)(void);
    /* At instantiation with flags: -1 and *kernels (its kernel nodes) and *clone (a copy of
     * graph, the caller's to destroy or hand to twin_build), or the reason the executable graph
     * stays whole (*clone 0; no copy is made then). */
    int (*copy)(uintptr_t graph, unsigned long long flags, size_t *kernels, uintptr_t *clone);
    /* Destroys a copy that copy made (0: nothing). */
    void (*destroy)(uintptr_t clone);
    /*
     * Builds the gated copy of clone (which it then owns, whatever the result), whose launches
     * were learned to take learned_ns: wait nodes about one every interval_ns of predicted time
     * (graph_place.h), waiting on the word at device address target, instantiated in ctx with
     * what it can keep of the instantiation's flags. 0 and *out, or -errno (the clone
     * destroyed): -ENOENT where no wait node found a place.
     */
    int (*twin_build)(uintptr_t clone, uintptr_t ctx, uint64_t interval_ns, uint64_t learned_ns,
                      uint64_t target, unsigned long long flags, struct gp_graph_built *out);
    /* Has t's wait nodes wait on the word at device address target from its next launch on
     * (launches already made are not affected): 0, or -EIO. */
    int (*twin_target)(struct gp_graph_twin *t, uint64_t target);
    /* After a launch of t's executable graph on stream succeeded: marks the point twin_order
     * waits for (a failure is remembered, and twin_order then refuses). */
    void (*twin_launched)(struct gp_graph_twin *t, uintptr_t stream);
    /* Has stream wait, on the device, for t's launches made so far, before what the caller
     * submits to stream next; nothing waits on the host. 0, or -EIO. */
    int (*twin_order)(const struct gp_graph_twin *t, uintptr_t stream);
    /* Destroys t (NULL: nothing); its executable graph may still run (the runtime frees it once
     * it is done). dead: its runtime objects died with their context, so only its memory is
     * freed, without a call into the runtime. */
    void (*twin_destroy)(struct gp_graph_twin *t, bool dead);
    /* Optional. stream's id, which no other stream of the process's life has (its handle may
     * be a destroyed stream's): 0 and *id, or negative where the runtime cannot say. Never
     * asked of the special handles. */
    int (*stream_id)(uintptr_t stream, uint64_t *id);
    /* Whether stream captures (1) or not (0); -EIO where the runtime cannot tell. */
    int (*stream_capturing)(uintptr_t stream);
    /* Optional (NULL: always). Whether the gated copy may be launched on the calling thread now:
     * false where a failure of its launch could not be undone (HIP: an error of the
     * application's is pending, which the failure would replace); the application's own
     * executable graph is launched instead. */
    bool (*copy_launchable)(void);
    /* Optional. After the gated copy's launch failed on the calling thread, before the
     * application's own is launched: forgets what the failure left (HIP: the thread's error). */
    void (*copy_failed)(void);
};

struct gp_platform {
    /* The platform's name, for messages ("HIP", "CUDA"). */
    const char *name;
    /* What the runtime's calls return when they succeeded (hipSuccess, CUDA_SUCCESS). */
    int success;

    /* ---- the application's runtime ---- */

    /*
     * Finds the application's runtime, once (gp_bind.c has the search order); later calls return
     * the first result. 0; -ENOENT: there is none (the shim stays inert); -EEXIST: two copies
     * are mapped; -ELOOP: the candidate is the shim itself. May dlopen the runtime by soname
     * when none is loaded, so the core calls it only when the application reached for the
     * runtime: an intercepted call, a lookup of an intercepted name, the public API.
     */
    int (*bind)(void);
    /* The binding (the runtime's handle and path), or NULL when bind() fails. From the public
     * API (gpuprio_runtime_path), on the application's thread. */
    const struct gp_binding *(*binding)(void);
    /* The bound runtime's own function name (libc's dlsym on its handle, never the shim's
     * override), or NULL: not bound, or the runtime lacks it. Binds first. Calls nothing in
     * the runtime. */
    void *(*sym)(const char *name);

    /* ---- devices and streams ---- */

    /*
     * The calling thread's current device (HIP: hipGetDevice; CUDA: the device of the current
     * context), or -ENODEV when it has none (CUDA: no current context, or the driver not
     * initialized). On the application's thread, before its call is forwarded: a negative
     * answer leaves the call unscheduled, and the call itself then fails in the runtime.
     */
    int (*current_device)(void);
    /* The special handles, as the application passes them. */
    struct gp_stream_handles streams;
    /* What the compute units of the streams the special handles name are (enum xq_cu_mask):
     * XQ_CU_UNMASKABLE where created streams can be masked and these cannot, else XQ_CU_UNKNOWN. */
    uint8_t special_cu_mask;
    /*
     * Fills *out with the properties of stream, a stream the runtime just created on the
     * calling thread. On the application's thread, inside the core's depth, right after the
     * creator succeeded (so the queries succeed too, and leave the same error state). Where the
     * runtime cannot say, the platform's best answer (CUDA before 12.8: the current context's
     * device, which the creators use; cus all 0 where it has no CU masks); never fails. The cus
     * are XQ_CU_ALL or XQ_CU_MASKED: the core knows whether the mask is gpuprio's.
     */
    void (*stream_props)(uintptr_t stream, struct xq_stream_props *out);
    /*
     * The runtime's stream priorities on the calling thread's current device: *least (the
     * least urgent, which the default is or is above) and *greatest (the most urgent, a lower
     * number). On the application's thread, before a stream creator is forwarded: a query that
     * cannot fail where the creator can succeed. 0, or -ENOTSUP when the runtime cannot say.
     */
    int (*priority_range)(int *least, int *greatest);

    /* ---- completion markers ---- */

    /*
     * The platform's markers, as xq_admission.h describes them: record on the application's thread
     * right after the runtime accepted a command on q's stream, query and release on the
     * watcher's thread. The core hands them to admission inside its depth, and keeps queries
     * away while a stream capture is in progress; the platform's own ops do neither.
     */
    struct xq_marker_ops markers;
    /* In the child of fork, single-threaded: forget the parent's markers (its events are not
     * the child's to use). Calls nothing in the runtime. */
    void (*markers_after_fork)(void);

    /* ---- device identity ---- */

    /*
     * Writes a key of device into buf (size bytes, terminated) that every process agrees on
     * (the PCI bus id: device indices differ between processes), for the board (board.h,
     * sched_set_device_key). From the sched layer, on the thread that first registers a queue
     * of the device, possibly the application's before its call is forwarded (HIP therefore
     * asks on a thread of its own). 0, or negative when the runtime cannot say (the device is
     * then scheduled within the process only).
     */
    int (*device_key)(int device, char *buf, size_t size);

    /* ---- gates (Level 2: src/preempt/devgate.h) ---- */

    /*
     * Prepares device for gates in [base, base + size), page-aligned memory: a board's gate
     * lines (a shared mapping of its file), or where the runtime refused those, the process's
     * private copy of them (anonymous memory: mirrored gates, devgate.h). Checks that the device
     * can wait on a 64-bit word of registered host memory,
     * registers the range with the runtime for every device of the process, and writes where
     * the device sees base into *device_base. 0; -ENOTSUP: the device or runtime cannot (Level 1
     * there); another negative value: the runtime refused (the boards then try the copy). Once
     * per board and region, with device_key's threads and rules (HIP prepares on a thread of its
     * own).
     */
    int (*gates_prepare)(int device, void *base, size_t size, uintptr_t *device_base);
    /*
     * Puts a gate on stream: its later work waits until the word the device sees at device_addr
     * is at least value (CUDA: in the wrap-around sense). On the application's thread, inside
     * the depth, right before the application's own call on that stream is forwarded, and only
     * after gates_prepare succeeded; it leaves the thread's error state as it found it, even
     * when it fails. 0; -EAGAIN: not put this time only (that error state could not be kept
     * otherwise), the batch behind it runs ungated; another negative: refused, the queue is held
     * on the host from then on.
     */
    int (*gate_wait)(uintptr_t stream, uintptr_t device_addr, uint64_t value);

    /* ---- device resets and context destruction (teardown.c; docs/design.md) ---- */

    /*
     * Optional (without it, teardowns go straight through). What the teardown call of kind with
     * its stream expression arg (kinds.def's DEVICE_RESET, CONTEXT_DESTROY, CONTEXT_RELEASE) is
     * about to destroy, into *t.
     * 0; negative: nothing the process could have used dies (no such context, or not active).
     * On the application's thread before forwarding, inside the depth; it leaves the thread's
     * current device or context as found.
     */
    int (*teardown_scope)(enum gp_teardown_kind kind, uintptr_t arg, struct gp_teardown *t);
    /* Whether the created stream dies with t (its device's, or its context is t's). Before
     * forwarding, while the stream is still valid: it may ask the runtime. */
    bool (*teardown_stream)(uintptr_t stream, int device, const struct gp_teardown *t);
    /* After forwarding (ok: the call succeeded): whether t's context was destroyed. When it was,
     * the pooled markers and the GEMM timings in flight of what died are forgotten without a call
     * into the runtime (their handles are dead, and may be reused by the next context). */
    bool (*teardown_done)(struct gp_teardown *t, bool ok);
    /* A marker taken off q's ring after t destroyed its context (or its device's): forgotten
     * without a call into the runtime if it died with t, given back to its pool if not. On the
     * application's thread, with the watcher paused. */
    void (*teardown_marker)(const struct xqueue *q, void *marker, const struct gp_teardown *t);

    /* ---- sharing the device with other processes' work (docs/mps.md) ---- */

    /*
     * Optional. From the library constructor, before the runtime is found: settles what the
     * runtime reads only when it starts (CUDA: a lower-priority MPS client's share of SMs).
     * Reads the environment and may change it; calls nothing in the runtime.
     */
    void (*before_runtime)(void);
    /*
     * Optional. Whether device's work runs beside other processes' in one context (CUDA's MPS),
     * so that stream priorities compare across processes, into *out. Once per device, with
     * device_key's threads and rules. 0, or -ENOTSUP when the runtime cannot say.
     */
    int (*mps)(int device, struct xq_mps *out);

    /* ---- gates inside graphs (graph.c) ---- */

    /* Optional (NULL: no graph is gated, and the shim's graph wrappers only forward). */
    const struct gp_graph_ops *graph;
};

#endif /* GPUPRIO_PLATFORM_H */
