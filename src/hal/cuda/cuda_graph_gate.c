/*
 * cuda_graph_gate.c - the driver's side of gates inside graphs (cuda_graph_gate.h, CUDA's graph
 * ops; src/shim/core/graph.c decides): reading a graph's nodes, copying it, and building and
 * steering its gated copy.
 *
 * A wait node is a batch memory operation node of one CU_STREAM_MEM_OP_WAIT_VALUE_64 with
 * CU_STREAM_WAIT_VALUE_GEQ, the condition of a stream's gate (cuda_gate.c), for the value 1: a gate
 * word is 0 when closed and DG_OPEN or DG_PINNED (2^62 and up) otherwise (devgate.h), so a node
 * passes exactly when the stream's next gate would. 64 bits, not 32: the words' open values lie
 * above 2^32. The node goes on the edges into a kernel node (its dependencies become the wait
 * node's, and the kernel depends on the wait node alone), so it holds only what depends on that
 * kernel, and the rest of the graph's order is untouched (graph_place_add_waits, over this file's
 * node calls). The driver's functions are taken under their older names, whose signatures carry
 * no edge data: a graph whose edges have some (a programmatic dependent launch) makes them fail
 * (CUDA_ERROR_LOSSY_QUERY), and it stays whole.
 *
 * Wait nodes are placed by predicted time (graph_place.h has the rules): a kernel node that
 * gpuprio put into the capture with a predicted time (a GEMM's slice: cuda_node_time.h, carried
 * into the copy taken at instantiation by cuGraphNodeFindInClone) weighs that; the graph's
 * learned time less those is shared equally by its other kernel nodes. Without any noted node
 * this is one wait node every interval's worth of kernel nodes, by count.
 */
#include "cuda_graph_gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_bind.h"
#include "cuda_node_time.h"
#include "graph_place.h"

/* The value every wait node waits for (see above). */
#define GRAPH_GATE_VALUE 1

static struct {
    CUresult (*get_nodes)(CUgraph, CUgraphNode *, size_t *);
    CUresult (*get_edges)(CUgraph, CUgraphNode *, CUgraphNode *, size_t *);
    CUresult (*node_type)(CUgraphNode, CUgraphNodeType *);
    CUresult (*clone)(CUgraph *, CUgraph);
    CUresult (*destroy)(CUgraph);
    CUresult (*add_memop)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                          const CUDA_BATCH_MEM_OP_NODE_PARAMS *);
    CUresult (*add_deps)(CUgraph, const CUgraphNode *, const CUgraphNode *, size_t);
    CUresult (*remove_deps)(CUgraph, const CUgraphNode *, const CUgraphNode *, size_t);
    CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*exec_destroy)(CUgraphExec);
    CUresult (*exec_memop_set)(CUgraphExec, CUgraphNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS *);
    CUresult (*host_register)(void *, size_t, unsigned int);
    CUresult (*device_pointer)(CUdeviceptr *, void *, unsigned int);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*ctx_current)(CUcontext *);
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_destroy)(CUevent);
    CUresult (*stream_wait_event)(CUstream, CUevent, unsigned int);
    CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*find_in_clone)(CUgraphNode *, CUgraphNode, CUgraph); /* optional */
    CUresult (*stream_id)(CUstream, unsigned long long *);          /* optional: CUDA 12.0 */
    /* optional (CUDA 11.0; the attribute asked of it, 12.4) */
    CUresult (*kernel_attr)(CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue *);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static bool drv_complete;

#define SYM(field, name) (*(void **)&drv.field = cudahal_sym(name)) != NULL

static void resolve(void)
{
    drv_complete = SYM(get_nodes, "cuGraphGetNodes") && SYM(get_edges, "cuGraphGetEdges") &&
                   SYM(node_type, "cuGraphNodeGetType") && SYM(clone, "cuGraphClone") &&
                   SYM(destroy, "cuGraphDestroy") && SYM(add_memop, "cuGraphAddBatchMemOpNode") &&
                   SYM(add_deps, "cuGraphAddDependencies") &&
                   SYM(remove_deps, "cuGraphRemoveDependencies") &&
                   SYM(instantiate, "cuGraphInstantiateWithFlags") &&
                   SYM(exec_destroy, "cuGraphExecDestroy") &&
                   SYM(exec_memop_set, "cuGraphExecBatchMemOpNodeSetParams") &&
                   SYM(host_register, "cuMemHostRegister_v2") &&
                   SYM(device_pointer, "cuMemHostGetDevicePointer_v2") &&
                   SYM(ctx_push, "cuCtxPushCurrent_v2") && SYM(ctx_pop, "cuCtxPopCurrent_v2") &&
                   SYM(ctx_current, "cuCtxGetCurrent") && SYM(event_create, "cuEventCreate") &&
                   SYM(event_record, "cuEventRecord") && SYM(event_destroy, "cuEventDestroy_v2") &&
                   SYM(stream_wait_event, "cuStreamWaitEvent") &&
                   SYM(stream_is_capturing, "cuStreamIsCapturing");
    *(void **)&drv.find_in_clone = cudahal_sym("cuGraphNodeFindInClone");
    *(void **)&drv.stream_id = cudahal_sym("cuStreamGetId");
    *(void **)&drv.kernel_attr = cudahal_sym("cuGraphKernelNodeGetAttribute");
}

static bool driver_ready(void)
{
    pthread_once(&drv_once, resolve);
    return drv_complete;
}

static void wait_params(CUDA_BATCH_MEM_OP_NODE_PARAMS *p, CUstreamBatchMemOpParams *op,
                        CUcontext ctx, uint64_t target)
{
    *op = (CUstreamBatchMemOpParams){0};
    op->waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
    op->waitValue.address = (CUdeviceptr)target;
    op->waitValue.value64 = GRAPH_GATE_VALUE;
    op->waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
    *p = (CUDA_BATCH_MEM_OP_NODE_PARAMS){.ctx = ctx, .count = 1, .paramArray = op, .flags = 0};
}

/* Forgets the notes on the n nodes of `handles` (gpuprio's copy of a graph, before it goes, or once
 * the walk weighed them: the copy is never built on again). */
static void forget_notes(const void *handles, size_t n)
{
    const CUgraphNode *nodes = handles;
    for (size_t i = 0; nodes && i < n && cudahal_node_time_any(); i++)
        cudahal_node_time_note(nodes[i], 0);
}

/* What the walk (graph_place_add_waits) calls on: a graph, and what its wait nodes wait on. */
struct walked {
    CUgraph graph;
    CUcontext ctx;
    uint64_t target;
};

static int get_nodes(void *w, void *nodes, size_t *n)
{
    return drv.get_nodes(((struct walked *)w)->graph, nodes, n) == CUDA_SUCCESS ? 0 : -EIO;
}

static int get_edges(void *w, void *from, void *to, size_t *n)
{
    return drv.get_edges(((struct walked *)w)->graph, from, to, n) == CUDA_SUCCESS ? 0 : -EIO;
}

/* A kernel node weighs the time noted for it (a GEMM's slice), if any. */
static int weigh(void *w, const void *node, uint64_t *weight)
{
    CUgraphNode handle = *(const CUgraphNode *)node;
    CUgraphNodeType type;
    (void)w;
    if (drv.node_type(handle, &type) != CUDA_SUCCESS)
        return -EIO;
    *weight =
        type == CU_GRAPH_NODE_TYPE_KERNEL ? cudahal_node_time_of(handle) : GRAPH_PLACE_NOT_KERNEL;
    return 0;
}

static int add_wait(void *w, const void *deps, size_t n, void *wait)
{
    struct walked *g = w;
    CUDA_BATCH_MEM_OP_NODE_PARAMS p;
    CUstreamBatchMemOpParams op;
    wait_params(&p, &op, g->ctx, g->target);
    return drv.add_memop(wait, g->graph, deps, n, &p) == CUDA_SUCCESS ? 0 : -EIO;
}

static int change_edges(void *w, bool add, const void *from, const void *to, size_t n)
{
    CUgraph graph = ((struct walked *)w)->graph;
    return (add ? drv.add_deps : drv.remove_deps)(graph, from, to, n) == CUDA_SUCCESS ? 0 : -EIO;
}

static const struct graph_place_calls walk_calls = {
    .handle_size = sizeof(CUgraphNode),
    .get_nodes = get_nodes,
    .get_edges = get_edges,
    .weigh = weigh,
    .weighed = forget_notes,
    .add_wait = add_wait,
    .change_edges = change_edges,
};

/* Whether kernel node was made device-updatable (CUDA 12.4): its device-side update handle is
 * the application's executable graph's node, so updates made through it would never reach the
 * gated copy's. A driver without the attribute refuses the query: it has none. */
static bool device_updatable(CUgraphNode node)
{
    CUkernelNodeAttrValue value;
    memset(&value, 0, sizeof value);
    return drv.kernel_attr &&
           drv.kernel_attr(node, CU_KERNEL_NODE_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &value) ==
               CUDA_SUCCESS &&
           value.deviceUpdatableKernelNode.deviceUpdatable;
}

/* -1 when graph can be gated (then *kernels is its number of kernel nodes), else the reason it
 * stays whole. */
static int survey(CUgraph graph, size_t *kernels)
{
    *kernels = 0;
    if (!driver_ready())
        return GP_GRAPH_WHOLE_NO_RUNTIME;
    size_t n;
    CUgraphNode *nodes = graph_place_nodes(&walk_calls, &(struct walked){.graph = graph}, &n);
    if (!nodes)
        return GP_GRAPH_WHOLE_FEW_KERNELS; /* empty, or unreadable: nothing to gate */
    int reason = -1;
    for (size_t i = 0; i < n && reason < 0; i++) {
        CUgraphNodeType type;
        if (drv.node_type(nodes[i], &type) != CUDA_SUCCESS) {
            reason = GP_GRAPH_WHOLE_FAILED;
            break;
        }
        switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
            ++*kernels;
            if (device_updatable(nodes[i]))
                reason = GP_GRAPH_WHOLE_DEVICE_UPDATABLE;
            break;
        case CU_GRAPH_NODE_TYPE_MEMCPY:
        case CU_GRAPH_NODE_TYPE_MEMSET:
        case CU_GRAPH_NODE_TYPE_HOST:
        case CU_GRAPH_NODE_TYPE_EMPTY:
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
        case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
        case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
            break;
        /* Such graphs may have one executable graph at a time, and cannot be cloned. */
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        case CU_GRAPH_NODE_TYPE_MEM_FREE:
            reason = GP_GRAPH_WHOLE_MEM_NODES;
            break;
        case CU_GRAPH_NODE_TYPE_CONDITIONAL:
            reason = GP_GRAPH_WHOLE_CONDITIONAL;
            break;
        case CU_GRAPH_NODE_TYPE_GRAPH:
            reason = GP_GRAPH_WHOLE_CHILD_GRAPH;
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

static uintptr_t context(void)
{
    CUcontext ctx = NULL;
    if (!driver_ready() || drv.ctx_current(&ctx) != CUDA_SUCCESS)
        return 0;
    return (uintptr_t)ctx;
}

/* The predicted times noted for graph's nodes, moved to their copies in clone: the application
 * may destroy its graph once it is instantiated, and a note left on a node it destroyed would be
 * read for a later graph's node at the same address (an executable graph instantiated twice from
 * one graph is placed by count the second time). */
static void carry_notes(CUgraph graph, CUgraph clone)
{
    if (!cudahal_node_time_any())
        return;
    size_t n;
    CUgraphNode *nodes = graph_place_nodes(&walk_calls, &(struct walked){.graph = graph}, &n);
    for (size_t i = 0; nodes && i < n; i++) {
        uint64_t ns = cudahal_node_time_of(nodes[i]);
        CUgraphNode copy = NULL;
        if (!ns)
            continue;
        if (drv.find_in_clone && drv.find_in_clone(&copy, nodes[i], clone) == CUDA_SUCCESS)
            cudahal_node_time_note(copy, ns);
        cudahal_node_time_note(nodes[i], 0);
    }
    free(nodes);
}

/* A copy of graph, or NULL (a driver refusal); the predicted times noted for graph's nodes are
 * noted for their copies too. */
static CUgraph clone_of(CUgraph graph)
{
    CUgraph clone = NULL;
    if (!driver_ready() || drv.clone(&clone, graph) != CUDA_SUCCESS)
        return NULL;
    carry_notes(graph, clone);
    return clone;
}

/* None for a device launch, which cannot be redirected; else a clone where the survey passes. */
static int copy_graph(uintptr_t graph, unsigned long long flags, size_t *kernels, uintptr_t *clone)
{
    *clone = 0;
    *kernels = 0;
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
        return GP_GRAPH_WHOLE_DEVICE_LAUNCH;
    int reason = survey((CUgraph)graph, kernels);
    if (reason < 0 && !(*clone = (uintptr_t)clone_of((CUgraph)graph)))
        reason = GP_GRAPH_WHOLE_FAILED;
    return reason;
}

static void destroy(uintptr_t graph)
{
    CUgraph clone = (CUgraph)graph;
    if (!clone || !driver_ready())
        return;
    if (cudahal_node_time_any()) {
        size_t n;
        CUgraphNode *nodes = graph_place_nodes(&walk_calls, &(struct walked){.graph = clone}, &n);
        forget_notes(nodes, n);
        free(nodes);
    }
    drv.destroy(clone);
}

/* The device address of the always-open word (graph_place_open_page), registered in the current
 * context (again after a teardown): 0 when the driver refuses. */
static uint64_t open_word(void)
{
    if (!driver_ready())
        return 0;
    /* Registered again each time: a teardown of the context that registered it unregisters it. */
    CUresult r = drv.host_register(graph_place_open_page, sizeof graph_place_open_page,
                                   CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        return 0;
    CUdeviceptr dev = 0;
    if (drv.device_pointer(&dev, graph_place_open_page, 0) != CUDA_SUCCESS)
        return 0;
    return (uint64_t)dev;
}

struct gp_graph_twin {
    CUgraph graph;
    CUgraphExec exec;
    CUcontext ctx;
    CUevent done;  /* recorded behind each of its launches */
    bool recorded; /* done stands behind its last launch */
    uint64_t target;
    size_t gates, noted;
    CUgraphNode waits[];
};

/* Instantiates graph in context ctx (the application's executable graph's), whichever context
 * the launching thread has current (a thread may drive several devices). */
static bool instantiate_in(CUcontext ctx, CUgraphExec *exec, CUgraph graph,
                           unsigned long long flags)
{
    if (drv.ctx_push(ctx) != CUDA_SUCCESS)
        return false;
    bool ok = drv.instantiate(exec, graph, flags) == CUDA_SUCCESS;
    CUcontext popped;
    drv.ctx_pop(&popped);
    return ok;
}

/* An event without timing in context ctx (the gated copy's). */
static bool new_event(CUcontext ctx, CUevent *ev)
{
    if (drv.ctx_push(ctx) != CUDA_SUCCESS)
        return false;
    bool ok = drv.event_create(ev, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
    CUcontext popped;
    drv.ctx_pop(&popped);
    return ok;
}

/* The instantiation's flags the gated copy keeps: it is launched from the host (a graph
 * instantiated for device launch stays whole), and cuGraphInstantiateWithFlags takes no upload
 * (which needs a stream). */
#define KEPT_FLAGS                                                                                 \
    (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |                                             \
     CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static int twin_build(uintptr_t graph, uintptr_t instantiated_in, uint64_t interval_ns,
                      uint64_t learned_ns, uint64_t target, unsigned long long flags,
                      struct gp_graph_built *out)
{
    CUgraph clone = (CUgraph)graph;
    CUcontext ctx = (CUcontext)instantiated_in;
    *out = (struct gp_graph_built){0};
    if (!driver_ready() || !clone || interval_ns == 0) {
        destroy(graph);
        return -EINVAL;
    }
    struct walked w = {.graph = clone, .ctx = ctx, .target = target};
    size_t gates = 0, noted = 0;
    void *waits = NULL;
    struct gp_graph_twin *t = NULL;
    int rc = -EIO;
    uint64_t open = open_word();
    if (!open || (rc = graph_place_add_waits(&walk_calls, &w, learned_ns, interval_ns, &waits,
                                             &gates, &noted)))
        goto out;
    rc = -ENOMEM;
    if (!(t = calloc(1, sizeof *t + gates * sizeof t->waits[0])))
        goto out;
    *t = (struct gp_graph_twin){
        .graph = clone, .ctx = ctx, .target = target, .gates = gates, .noted = noted};
    memcpy(t->waits, waits, gates * sizeof t->waits[0]);
    rc = -EIO;
    if (!instantiate_in(ctx, &t->exec, clone, flags & KEPT_FLAGS))
        goto out;
    if (!new_event(ctx, &t->done)) {
        drv.exec_destroy(t->exec);
        goto out;
    }
    *out = (struct gp_graph_built){.twin = t,
                                   .exec = (uintptr_t)t->exec,
                                   .gates = t->gates,
                                   .noted = noted,
                                   .open_word = open};
    t = NULL;
    clone = NULL;
    rc = 0;
out:
    free(waits);
    free(t);
    destroy((uintptr_t)clone);
    return rc;
}

static int twin_target(struct gp_graph_twin *t, uint64_t target)
{
    if (t->target == target)
        return 0;
    CUDA_BATCH_MEM_OP_NODE_PARAMS p;
    CUstreamBatchMemOpParams op;
    wait_params(&p, &op, t->ctx, target);
    for (size_t i = 0; i < t->gates; i++)
        if (drv.exec_memop_set(t->exec, t->waits[i], &p) != CUDA_SUCCESS) {
            t->target = 0; /* some nodes may have moved: set them all again next time */
            return -EIO;
        }
    t->target = target;
    return 0;
}

static void twin_destroy(struct gp_graph_twin *t, bool dead)
{
    if (!t)
        return;
    if (!dead) {
        drv.event_destroy(t->done); /* a wait already made on it still holds */
        drv.exec_destroy(t->exec);
        drv.destroy(t->graph);
    }
    free(t);
}

/* Records its event on stream, behind the launch. */
static void twin_launched(struct gp_graph_twin *t, uintptr_t stream)
{
    t->recorded = drv.event_record(t->done, (CUstream)stream) == CUDA_SUCCESS;
}

/* stream waits for the event (-EIO: no launch recorded, or the driver refused). */
static int twin_order(const struct gp_graph_twin *t, uintptr_t stream)
{
    if (!t->recorded)
        return -EIO;
    return drv.stream_wait_event((CUstream)stream, t->done, 0) == CUDA_SUCCESS ? 0 : -EIO;
}

/* -ENOTSUP: a driver older than 12.0. */
static int stream_id(uintptr_t stream, uint64_t *id)
{
    unsigned long long got = 0;
    if (!driver_ready() || !drv.stream_id)
        return -ENOTSUP;
    if (drv.stream_id((CUstream)stream, &got) != CUDA_SUCCESS)
        return -EIO;
    *id = got;
    return 0;
}

static int stream_capturing(uintptr_t stream)
{
    CUstreamCaptureStatus status;
    if (!driver_ready() || drv.stream_is_capturing((CUstream)stream, &status) != CUDA_SUCCESS)
        return -EIO;
    return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

const struct gp_graph_ops cudahal_graph_ops = {
    .no_runtime = "the driver lacks batch memory operation nodes (CUDA 11.7)",
    .on_by_default = true,
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
};
