/*
 * hip_graph_gate.c - the HIP runtime's side of gates inside graphs (ROCm 6.4 and later): reading
 * a graph's nodes, copying it, and building and steering its gated copy (docs/design.md, "Gates
 * inside graphs"; the decisions are the core's, src/shim/core/graph.c).
 *
 * A wait node is a batch memory operation node (hip_6.4) of one hipStreamMemOpWaitValue64 with
 * hipStreamWaitValueGte for the value 1, the condition of a stream's gate (hip_gate.c), put on the
 * edges into a kernel node by graph_place.h's walk, over this file's node calls. HIP has no edge
 * data and captures no GEMM slices into graphs, so every kernel node weighs the same.
 *
 * What differs from CUDA, from the runtime's source (ROCm/clr; no AMD GPU has checked it):
 *   - The node type enum is numbered from 0 in 6.4 and 7.2 but from 1 in 5.2.3, whose headers
 *     gpuprio may be built with: the values are this file's own. A runtime that exports the batch
 *     memory operation functions is 6.4 or later, so nothing is read of a runtime without them.
 *   - The runtime keeps the node's `paramArray` by pointer and reads it at each launch: each
 *     target's one-operation array is made once and never freed (a few dozen: the board's lines
 *     and the open word).
 *   - 7.2 refuses a NULL `ctx`: it is the instantiating device's current context.
 *   - An executable graph's parallel streams are made on the device current at instantiation, so
 *     the gated copy is instantiated with the application's instantiation device current.
 *   - Every call sets the calling thread's last-command error, and a failure its sticky last
 *     error (hipGetLastError), which are the application's. So copying a graph, building the
 *     gated copy and destroying it run on a thread of gpuprio's own (hiphal_on_own_thread, in
 *     relaxed capture mode). A launch makes its calls on the application's thread before it is
 *     forwarded (the stream's id, the capture query, moving the wait nodes, the wait that orders
 *     a stream after the copy), only where no error of the application's is pending, a failure of
 *     theirs cleared; the launch's own result then replaces what they left. Where an error is
 *     pending they run on gpuprio's thread, or not at all on a stream handle that names the
 *     calling thread's stream. The copy's launch itself is made only where none is pending, and
 *     its failure cleared before the application's own is launched instead; the event recorded
 *     behind it, once it succeeded, is cleared after too where it fails (another device's stream).
 */
#include "hip_graph_gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gp_lockrank.h"
#include "graph_place.h"
#include "hip_bind.h"
#include "hip_compat.h"
#include "hip_device.h"

/* The value every wait node waits for: a gate word is 0 when closed and DG_OPEN or DG_PINNED (2^62
 * and up) otherwise (devgate.h). */
#define GRAPH_GATE_VALUE 1

/* hipGraphNodeType as 6.4 and later number it (hip_runtime_api.h; 5.2.3 numbers from 1). */
enum node_type {
    NODE_KERNEL = 0,
    NODE_MEMCPY = 1,
    NODE_MEMSET = 2,
    NODE_HOST = 3,
    NODE_GRAPH = 4,
    NODE_EMPTY = 5,
    NODE_WAIT_EVENT = 6,
    NODE_EVENT_RECORD = 7,
    NODE_EXT_SEMAS_SIGNAL = 8,
    NODE_EXT_SEMAS_WAIT = 9,
    NODE_MEM_ALLOC = 10,
    NODE_MEM_FREE = 11,
    NODE_MEMCPY_FROM_SYMBOL = 12,
    NODE_MEMCPY_TO_SYMBOL = 13,
    NODE_BATCH_MEM_OP = 14,
};
#if GP_HIP_AT_LEAST(6, 4)
_Static_assert((int)hipGraphNodeTypeKernel == NODE_KERNEL &&
                   (int)hipGraphNodeTypeGraph == NODE_GRAPH &&
                   (int)hipGraphNodeTypeMemAlloc == NODE_MEM_ALLOC &&
                   (int)hipGraphNodeTypeMemFree == NODE_MEM_FREE &&
                   (int)hipGraphNodeTypeBatchMemOp == NODE_BATCH_MEM_OP,
               "hipGraphNodeType's numbering");
#endif

static struct {
    hipError_t (*get_nodes)(hipGraph_t, hipGraphNode_t *, size_t *);
    hipError_t (*get_edges)(hipGraph_t, hipGraphNode_t *, hipGraphNode_t *, size_t *);
    hipError_t (*node_type)(hipGraphNode_t, hipGraphNodeType *);
    hipError_t (*clone)(hipGraph_t *, hipGraph_t);
    hipError_t (*destroy)(hipGraph_t);
    hipError_t (*add_memop)(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t,
                            const hipBatchMemOpNodeParams *);
    hipError_t (*add_deps)(hipGraph_t, const hipGraphNode_t *, const hipGraphNode_t *, size_t);
    hipError_t (*remove_deps)(hipGraph_t, const hipGraphNode_t *, const hipGraphNode_t *, size_t);
    hipError_t (*instantiate)(hipGraphExec_t *, hipGraph_t, unsigned long long);
    hipError_t (*exec_destroy)(hipGraphExec_t);
    hipError_t (*exec_memop_set)(hipGraphExec_t, hipGraphNode_t, const hipBatchMemOpNodeParams *);
    hipError_t (*host_register)(void *, size_t, unsigned int);
    hipError_t (*device_pointer)(void **, void *, unsigned int);
    hipError_t (*get_device)(int *);
    hipError_t (*set_device)(int);
    hipError_t (*ctx_current)(hipCtx_t *);
    hipError_t (*event_create)(hipEvent_t *, unsigned int);
    hipError_t (*event_record)(hipEvent_t, hipStream_t);
    hipError_t (*event_destroy)(hipEvent_t);
    hipError_t (*stream_wait_event)(hipStream_t, hipEvent_t, unsigned int);
    hipError_t (*stream_is_capturing)(hipStream_t, hipStreamCaptureStatus *);
    hipError_t (*peek)(void);
    hipError_t (*get_last)(void);
    hipError_t (*stream_id)(hipStream_t, unsigned long long *); /* optional: 7.1 */
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static bool rt_complete;

#define SYM(field, name) (*(void **)&rt.field = hiphal_sym(name)) != NULL

static void resolve(void)
{
    rt_complete =
        SYM(add_memop, "hipGraphAddBatchMemOpNode") &&
        SYM(exec_memop_set, "hipGraphExecBatchMemOpNodeSetParams") &&
        SYM(get_nodes, "hipGraphGetNodes") && SYM(get_edges, "hipGraphGetEdges") &&
        SYM(node_type, "hipGraphNodeGetType") && SYM(clone, "hipGraphClone") &&
        SYM(destroy, "hipGraphDestroy") && SYM(add_deps, "hipGraphAddDependencies") &&
        SYM(remove_deps, "hipGraphRemoveDependencies") &&
        SYM(instantiate, "hipGraphInstantiateWithFlags") &&
        SYM(exec_destroy, "hipGraphExecDestroy") && SYM(host_register, "hipHostRegister") &&
        SYM(device_pointer, "hipHostGetDevicePointer") && SYM(get_device, "hipGetDevice") &&
        SYM(set_device, "hipSetDevice") && SYM(ctx_current, "hipCtxGetCurrent") &&
        SYM(event_create, "hipEventCreateWithFlags") && SYM(event_record, "hipEventRecord") &&
        SYM(event_destroy, "hipEventDestroy") && SYM(stream_wait_event, "hipStreamWaitEvent") &&
        SYM(stream_is_capturing, "hipStreamIsCapturing") && SYM(peek, "hipPeekAtLastError") &&
        SYM(get_last, "hipGetLastError");
    *(void **)&rt.stream_id = hiphal_sym("hipStreamGetId");
}

static bool runtime_ready(void)
{
    pthread_once(&rt_once, resolve);
    return rt_complete;
}

/* A job run on a thread of gpuprio's own (hiphal_on_own_thread), whose error state is its own. */
static int elsewhere(void (*fn)(void *), void *arg)
{
    return hiphal_on_own_thread(fn, arg);
}

/* node's type in this file's numbering, or -1. */
static int type_of(hipGraphNode_t node)
{
    hipGraphNodeType type;
    return rt.node_type(node, &type) == hipSuccess ? (int)type : -1;
}

static hipBatchMemOpNodeParams wait_params(hipCtx_t ctx, hipStreamBatchMemOpParams *op)
{
    return (hipBatchMemOpNodeParams){.ctx = ctx, .count = 1, .paramArray = op, .flags = 0};
}

/* What the walk (graph_place_add_waits) calls on: a graph, and what its wait nodes wait on. */
struct walked {
    hipGraph_t graph;
    hipCtx_t ctx;
    hipStreamBatchMemOpParams *op;
};

static int get_nodes(void *w, void *nodes, size_t *n)
{
    return rt.get_nodes(((struct walked *)w)->graph, nodes, n) == hipSuccess ? 0 : -EIO;
}

static int get_edges(void *w, void *from, void *to, size_t *n)
{
    return rt.get_edges(((struct walked *)w)->graph, from, to, n) == hipSuccess ? 0 : -EIO;
}

/* No GEMM slices are noted in HIP graphs: every kernel node weighs the same. */
static int weigh(void *w, const void *node, uint64_t *weight)
{
    int type = type_of(*(const hipGraphNode_t *)node);
    (void)w;
    *weight = type == NODE_KERNEL ? 0 : GRAPH_PLACE_NOT_KERNEL;
    return type < 0 ? -EIO : 0;
}

static int add_wait(void *w, const void *deps, size_t n, void *wait)
{
    struct walked *g = w;
    hipBatchMemOpNodeParams p = wait_params(g->ctx, g->op);
    return rt.add_memop(wait, g->graph, deps, n, &p) == hipSuccess ? 0 : -EIO;
}

static int change_edges(void *w, bool add, const void *from, const void *to, size_t n)
{
    hipGraph_t graph = ((struct walked *)w)->graph;
    return (add ? rt.add_deps : rt.remove_deps)(graph, from, to, n) == hipSuccess ? 0 : -EIO;
}

static const struct graph_place_calls walk_calls = {
    .handle_size = sizeof(hipGraphNode_t),
    .get_nodes = get_nodes,
    .get_edges = get_edges,
    .weigh = weigh,
    .add_wait = add_wait,
    .change_edges = change_edges,
};

/* -1 when graph can be gated (then *kernels is its number of kernel nodes), else the reason it
 * stays whole. */
static int survey(hipGraph_t graph, size_t *kernels)
{
    *kernels = 0;
    size_t n;
    hipGraphNode_t *nodes = graph_place_nodes(&walk_calls, &(struct walked){.graph = graph}, &n);
    if (!nodes)
        return GP_GRAPH_WHOLE_FEW_KERNELS; /* empty, or unreadable: nothing to gate */
    int reason = -1;
    for (size_t i = 0; i < n && reason < 0; i++) {
        switch (type_of(nodes[i])) {
        case NODE_KERNEL:
            ++*kernels;
            break;
        case NODE_MEMCPY:
        case NODE_MEMSET:
        case NODE_HOST:
        case NODE_EMPTY:
        case NODE_WAIT_EVENT:
        case NODE_EVENT_RECORD:
        case NODE_EXT_SEMAS_SIGNAL:
        case NODE_EXT_SEMAS_WAIT:
        case NODE_MEMCPY_FROM_SYMBOL:
        case NODE_MEMCPY_TO_SYMBOL:
        case NODE_BATCH_MEM_OP:
            break;
        /* hipGraphClone refuses them. */
        case NODE_MEM_ALLOC:
        case NODE_MEM_FREE:
            reason = GP_GRAPH_WHOLE_MEM_NODES;
            break;
        case NODE_GRAPH:
            reason = GP_GRAPH_WHOLE_CHILD_GRAPH;
            break;
        case -1:
            reason = GP_GRAPH_WHOLE_FAILED;
            break;
        default:
            reason = GP_GRAPH_WHOLE_OTHER_NODES;
            break;
        }
    }
    free(nodes);
    if (reason < 0 && *kernels < 2)
        reason = GP_GRAPH_WHOLE_FEW_KERNELS;
    return reason;
}

/* The device the application instantiates on, plus one (0: none): the gated copy is instantiated
 * with it current. The application's instantiation just succeeded, and so does this call, which
 * leaves the thread's error state as that left it. */
static uintptr_t context(void)
{
    int device = -1;
    if (!runtime_ready() || rt.get_device(&device) != hipSuccess || device < 0)
        return 0;
    return (uintptr_t)device + 1;
}

struct copy_job {
    hipGraph_t graph, clone;
    size_t kernels;
    int reason;
};

static void copy_here(void *arg)
{
    struct copy_job *job = arg;
    job->reason = survey(job->graph, &job->kernels);
    if (job->reason < 0 && rt.clone(&job->clone, job->graph) != hipSuccess) {
        job->clone = NULL;
        job->reason = GP_GRAPH_WHOLE_FAILED;
    }
}

static int copy_graph(uintptr_t graph, unsigned long long flags, size_t *kernels, uintptr_t *clone)
{
    *clone = 0;
    *kernels = 0;
    if (!runtime_ready())
        return GP_GRAPH_WHOLE_NO_RUNTIME;
    if (flags & hipGraphInstantiateFlagDeviceLaunch)
        return GP_GRAPH_WHOLE_DEVICE_LAUNCH;
    struct copy_job job = {.graph = (hipGraph_t)graph, .reason = GP_GRAPH_WHOLE_FAILED};
    if (elsewhere(copy_here, &job) != 0)
        return GP_GRAPH_WHOLE_FAILED;
    *kernels = job.kernels;
    *clone = (uintptr_t)job.clone;
    return job.reason;
}

static void destroy_here(void *graph)
{
    rt.destroy((hipGraph_t)graph);
}

static void destroy(uintptr_t clone)
{
    if (clone && runtime_ready())
        elsewhere(destroy_here, (void *)clone);
}

/* The one-operation array each wait node's parameters point to, per target: the runtime keeps
 * the pointer and reads the array at every launch, so an array is never changed or freed. */
static struct target_ops {
    struct target_ops *next;
    uint64_t target;
    hipStreamBatchMemOpParams op;
} * targets;
static pthread_mutex_t targets_mu = PTHREAD_MUTEX_INITIALIZER;

/* In a forked child the lock is made anew (a thread of the parent may have held it); the arrays,
 * copied with the parent's memory, stay valid. */
static void targets_in_child(void)
{
    pthread_mutex_init(&targets_mu, NULL);
}

__attribute__((constructor)) static void remake_targets_lock_in_child(void)
{
    pthread_atfork(NULL, NULL, targets_in_child);
}

static hipStreamBatchMemOpParams *ops_for(uint64_t target)
{
    gp_mutex_lock(&targets_mu, GP_RANK_GRAPH_TARGETS);
    struct target_ops *t = targets;
    while (t && t->target != target)
        t = t->next;
    if (!t && (t = calloc(1, sizeof *t))) {
        t->target = target;
        t->op.waitValue.operation = hipStreamMemOpWaitValue64;
        t->op.waitValue.address = (hipDeviceptr_t)(uintptr_t)target;
        t->op.waitValue.value64 = GRAPH_GATE_VALUE;
        t->op.waitValue.flags = hipStreamWaitValueGte;
        t->next = targets;
        targets = t;
    }
    gp_mutex_unlock(&targets_mu, GP_RANK_GRAPH_TARGETS);
    return t ? &t->op : NULL;
}

/* The device address of the always-open word (graph_place_open_page), registered again each time
 * (on the thread that builds, with the device current): a reset of the device drops its
 * registrations. 0 when the runtime refuses. */
static uint64_t open_word(void)
{
    hipError_t r = rt.host_register(graph_place_open_page, sizeof graph_place_open_page,
                                    hipHostRegisterMapped | hipHostRegisterPortable);
    if (r != hipSuccess && r != hipErrorHostMemoryAlreadyRegistered)
        return 0;
    void *dev = NULL;
    if (rt.device_pointer(&dev, graph_place_open_page, 0) != hipSuccess)
        return 0;
    return (uint64_t)(uintptr_t)dev;
}

struct gp_graph_twin {
    hipGraph_t graph;
    hipGraphExec_t exec;
    int device;
    hipCtx_t ctx;
    hipEvent_t done; /* recorded behind each of its launches */
    bool recorded;   /* done stands behind its last launch */
    uint64_t target;
    size_t gates;
    hipGraphNode_t waits[];
};

struct build_job {
    hipGraph_t clone;
    int device;
    uint64_t interval_ns, learned_ns, target;
    unsigned long long flags;
    struct gp_graph_built *out;
    int rc;
};

/* twin_build's work, on gpuprio's thread with the instantiation's device current. */
static void build_here(void *arg)
{
    struct build_job *job = arg;
    hipGraph_t clone = job->clone;
    struct walked w = {.graph = clone, .op = ops_for(job->target)};
    size_t gates = 0, noted = 0;
    void *waits = NULL;
    struct gp_graph_twin *t = NULL;
    uint64_t open = 0;
    int rc = -EIO;
    if (!w.op || rt.set_device(job->device) != hipSuccess || rt.ctx_current(&w.ctx) != hipSuccess ||
        !w.ctx || !(open = open_word()))
        goto out;
    if ((rc = graph_place_add_waits(&walk_calls, &w, job->learned_ns, job->interval_ns, &waits,
                                    &gates, &noted)))
        goto out;
    rc = -ENOMEM;
    if (!(t = calloc(1, sizeof *t + gates * sizeof t->waits[0])))
        goto out;
    *t = (struct gp_graph_twin){
        .graph = clone, .device = job->device, .ctx = w.ctx, .target = job->target, .gates = gates};
    memcpy(t->waits, waits, gates * sizeof t->waits[0]);
    rc = -EIO;
    /* hipGraphInstantiateWithFlags takes these alone, and one at most (the application's call,
     * which the runtime accepted, had no more). */
    if (rt.instantiate(&t->exec, clone,
                       job->flags & (hipGraphInstantiateFlagAutoFreeOnLaunch |
                                     hipGraphInstantiateFlagUseNodePriority)) != hipSuccess)
        goto out;
    if (rt.event_create(&t->done, hipEventDisableTiming) != hipSuccess) {
        rt.exec_destroy(t->exec);
        goto out;
    }
    *job->out = (struct gp_graph_built){
        .twin = t, .exec = (uintptr_t)t->exec, .gates = t->gates, .open_word = open};
    t = NULL;
    clone = NULL;
    rc = 0;
out:
    free(waits);
    free(t);
    if (clone)
        rt.destroy(clone);
    job->rc = rc;
}

static int twin_build(uintptr_t clone, uintptr_t ctx, uint64_t interval_ns, uint64_t learned_ns,
                      uint64_t target, unsigned long long flags, struct gp_graph_built *out)
{
    *out = (struct gp_graph_built){0};
    if (!runtime_ready() || !clone || !ctx || interval_ns == 0) {
        destroy(clone);
        return -EINVAL;
    }
    struct build_job job = {.clone = (hipGraph_t)clone,
                            .device = (int)(ctx - 1),
                            .interval_ns = interval_ns,
                            .learned_ns = learned_ns,
                            .target = target,
                            .flags = flags,
                            .out = out,
                            .rc = -EIO};
    int rc = elsewhere(build_here, &job);
    if (rc) {
        destroy(clone);
        return rc;
    }
    return job.rc;
}

/* The handle to pass for a stream the core names: the legacy stream as 0, which means the same in
 * the calls made here (none is a per-thread form) and which every runtime takes. clr keeps the
 * handle an event was recorded on, and its hipStreamWaitEvent takes a hipStreamLegacy found there
 * for a stream object (ROCm/clr's last trees and rocm-systems'; ROCm 6.2's hipEventRecord already
 * does): twin_order's wait after a copy's launch on it would crash (hip.graph_legacy_changed). */
static hipStream_t as_called(uintptr_t stream)
{
    return hiphal_stream_object((hipStream_t)stream);
}

/* The null, legacy and per-thread handles name the calling thread's stream, another one on
 * gpuprio's thread. */
static bool special(uintptr_t stream)
{
    return stream == 0 || stream == (uintptr_t)hipStreamLegacy ||
           stream == (uintptr_t)hipStreamPerThread;
}

/* Runs fn (the job's result in *result) before a launch is forwarded: on the calling thread
 * where no error of the application's is pending (a failure of fn's is then cleared, and the
 * launch's own result replaces what it left), else on gpuprio's thread, unless fn acts on a
 * stream that names another there (-EAGAIN). 0 or -errno, and *result. */
static int here_or_elsewhere(void (*fn)(void *), void *job, const hipError_t *result,
                             bool thread_bound)
{
    if (rt.peek() == hipSuccess) {
        fn(job);
        if (*result != hipSuccess)
            rt.get_last();
        return 0;
    }
    return thread_bound ? -EAGAIN : elsewhere(fn, job);
}

struct target_job {
    struct gp_graph_twin *t;
    hipStreamBatchMemOpParams *op;
    hipError_t result;
};

static void target_here(void *arg)
{
    struct target_job *job = arg;
    hipBatchMemOpNodeParams p = wait_params(job->t->ctx, job->op);
    job->result = hipSuccess;
    for (size_t i = 0; i < job->t->gates && job->result == hipSuccess; i++)
        job->result = rt.exec_memop_set(job->t->exec, job->t->waits[i], &p);
}

/* Before the launch is forwarded, and only when the target changes. */
static int twin_target(struct gp_graph_twin *t, uint64_t target)
{
    if (t->target == target)
        return 0;
    struct target_job job = {t, ops_for(target), hipErrorUnknown};
    if (!job.op || here_or_elsewhere(target_here, &job, &job.result, false) != 0 ||
        job.result != hipSuccess) {
        t->target = 0; /* some nodes may have moved: set them all again next time */
        return -EIO;
    }
    t->target = target;
    return 0;
}

/* Right after the runtime accepted the copy's launch on stream, with no error of the
 * application's pending (copy_launchable). The record fails on another device's stream (the event
 * is the instantiation device's, and a launch may go to any device's stream): then its error is
 * cleared, and a call that succeeds makes the last command's result the launch's again. */
static void twin_launched(struct gp_graph_twin *t, uintptr_t stream)
{
    t->recorded = rt.event_record(t->done, as_called(stream)) == hipSuccess;
    if (!t->recorded) {
        int device;
        rt.get_last();
        rt.get_device(&device);
    }
}

struct order_job {
    uintptr_t stream;
    hipEvent_t done;
    hipError_t result;
};

static void order_here(void *arg)
{
    struct order_job *job = arg;
    job->result = rt.stream_wait_event(as_called(job->stream), job->done, 0);
}

static int twin_order(const struct gp_graph_twin *t, uintptr_t stream)
{
    if (!t->recorded)
        return -EIO;
    struct order_job job = {stream, t->done, hipErrorUnknown};
    int rc = here_or_elsewhere(order_here, &job, &job.result, special(stream));
    return rc ? rc : job.result == hipSuccess ? 0 : -EIO;
}

static void twin_destroy_here(void *arg)
{
    struct gp_graph_twin *t = arg;
    rt.event_destroy(t->done); /* a wait already made on it still holds */
    rt.exec_destroy(t->exec);  /* released: the runtime frees it once its launches are done */
    rt.destroy(t->graph);
}

static void twin_destroy(struct gp_graph_twin *t, bool dead)
{
    if (t && !dead)
        elsewhere(twin_destroy_here, t);
    free(t);
}

struct stream_job {
    uintptr_t stream;
    unsigned long long id;
    hipStreamCaptureStatus status;
    hipError_t result;
};

static void id_here(void *arg)
{
    struct stream_job *job = arg;
    job->result = rt.stream_id(as_called(job->stream), &job->id);
}

/* Asked at every launch, so only on the calling thread, when no error of the application's is
 * pending (else the id is not known, and streams compare by handle, as on 6.4). */
static int stream_id(uintptr_t stream, uint64_t *id)
{
    if (!runtime_ready() || !rt.stream_id)
        return -ENOTSUP;
    struct stream_job job = {.stream = stream, .result = hipErrorUnknown};
    if (rt.peek() != hipSuccess)
        return -EAGAIN;
    id_here(&job);
    if (job.result != hipSuccess) {
        rt.get_last();
        return -EIO;
    }
    *id = job.id;
    return 0;
}

static void capturing_here(void *arg)
{
    struct stream_job *job = arg;
    job->result = rt.stream_is_capturing(as_called(job->stream), &job->status);
}

static int stream_capturing(uintptr_t stream)
{
    if (!runtime_ready())
        return -EIO;
    struct stream_job job = {.stream = stream, .result = hipErrorUnknown};
    if (here_or_elsewhere(capturing_here, &job, &job.result, special(stream)) ||
        job.result != hipSuccess)
        return -EIO;
    return job.status != hipStreamCaptureStatusNone;
}

/* The copy's launch is made only where no error of the application's is pending: a failure of
 * it would replace that error, which nothing can put back. */
static bool copy_launchable(void)
{
    return rt.peek() == hipSuccess;
}

static void copy_failed(void)
{
    rt.get_last();
}

const struct gp_graph_ops hiphal_graph_ops = {
    .no_runtime = "the runtime lacks batch memory operation nodes (HIP 6.4)",
    .on_by_default = false,
    .context = context,
    .copy = copy_graph,
    .destroy = destroy,
    .twin_build = twin_build,
    .twin_target = twin_target,
    .twin_launched = twin_launched,
    .twin_order = twin_order,
    .twin_destroy = twin_destroy,
    .stream_id = stream_id,
    .stream_capturing = stream_capturing,
    .copy_launchable = copy_launchable,
    .copy_failed = copy_failed,
};
