/*
 * cuda_graph_gate.c - the driver's side of gates inside graphs (cuda_graph_gate.h): reading a
 * graph's nodes, copying it, and building and steering its gated copy.
 *
 * A wait node is a batch memory operation node of one CU_STREAM_MEM_OP_WAIT_VALUE_64 with
 * CU_STREAM_WAIT_VALUE_GEQ, the condition of a stream's gate (cuda_gate.c), for the value 1: a gate
 * word is 0 when closed and DG_OPEN or DG_PINNED (2^62 and up) otherwise (devgate.h), so a node
 * passes exactly when the stream's next gate would. 64 bits, not 32: the words' open values lie
 * above 2^32. The node goes on the edges into a kernel node (its dependencies become the wait
 * node's, and the kernel depends on the wait node alone), so it holds only what depends on that
 * kernel, and the rest of the graph's order is untouched. The driver's functions are taken under
 * their older names, whose signatures carry no edge data: a graph whose edges have some (a
 * programmatic dependent launch) makes them fail (CUDA_ERROR_LOSSY_QUERY), and it stays whole.
 *
 * Wait nodes are placed by predicted time: a kernel node that gpuprio put into the capture with
 * a predicted time (a GEMM's slice: cuda_node_time.h, carried into the copy taken at
 * instantiation by cuGraphNodeFindInClone) weighs that; the graph's learned time less those is
 * shared equally by its other kernel nodes. Walking the kernel nodes in topological order, a
 * wait node goes before one when a kernel ran since the last wait node and that time plus the
 * node's own would pass the interval: so no stretch between two wait nodes is predicted longer
 * than one interval but where a single node is, and such a node has one before and after it.
 * Without any noted node this is one wait node every interval's worth of kernel nodes, by count.
 */
#include "cuda_graph_gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_bind.h"
#include "cuda_node_time.h"
#include "devgate.h"

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

const char *cudahal_graph_whole_reason(enum cudahal_graph_whole r)
{
    static const char *const what[] = {
#define CUDAHAL_GRAPH_WHOLE_TEXT(name, text) text,
        CUDAHAL_GRAPH_WHOLE_REASONS(CUDAHAL_GRAPH_WHOLE_TEXT)
#undef CUDAHAL_GRAPH_WHOLE_TEXT
    };
    return r < CUDAHAL_GRAPH_WHOLE_COUNT ? what[r] : "?";
}

/* graph's nodes, malloc'd (*n of them), or NULL with *n 0 on a failure (or none). */
static CUgraphNode *nodes_of(CUgraph graph, size_t *n)
{
    *n = 0;
    size_t count = 0;
    if (drv.get_nodes(graph, NULL, &count) != CUDA_SUCCESS || count == 0)
        return NULL;
    CUgraphNode *nodes = calloc(count, sizeof *nodes);
    if (nodes && drv.get_nodes(graph, nodes, &count) == CUDA_SUCCESS) {
        *n = count;
        return nodes;
    }
    free(nodes);
    return NULL;
}

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

int cudahal_graph_survey(CUgraph graph, size_t *kernels)
{
    *kernels = 0;
    if (!driver_ready())
        return CUDAHAL_GRAPH_WHOLE_NO_DRIVER;
    size_t n;
    CUgraphNode *nodes = nodes_of(graph, &n);
    if (!nodes)
        return CUDAHAL_GRAPH_WHOLE_FEW_KERNELS; /* empty, or unreadable: nothing to gate */
    int reason = -1;
    for (size_t i = 0; i < n && reason < 0; i++) {
        CUgraphNodeType type;
        if (drv.node_type(nodes[i], &type) != CUDA_SUCCESS) {
            reason = CUDAHAL_GRAPH_WHOLE_FAILED;
            break;
        }
        switch (type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
            ++*kernels;
            if (device_updatable(nodes[i]))
                reason = CUDAHAL_GRAPH_WHOLE_DEVICE_UPDATABLE;
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
            reason = CUDAHAL_GRAPH_WHOLE_MEM_NODES;
            break;
        case CU_GRAPH_NODE_TYPE_CONDITIONAL:
            reason = CUDAHAL_GRAPH_WHOLE_CONDITIONAL;
            break;
        case CU_GRAPH_NODE_TYPE_GRAPH:
            reason = CUDAHAL_GRAPH_WHOLE_CHILD_GRAPH;
            break;
        default:
            reason = CUDAHAL_GRAPH_WHOLE_OTHER_NODES;
            break;
        }
    }
    free(nodes);
    if (reason < 0 && *kernels < 2)
        reason = CUDAHAL_GRAPH_WHOLE_FEW_KERNELS;
    return reason;
}

CUcontext cudahal_graph_context(void)
{
    CUcontext ctx = NULL;
    if (!driver_ready() || drv.ctx_current(&ctx) != CUDA_SUCCESS)
        return NULL;
    return ctx;
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
    CUgraphNode *nodes = nodes_of(graph, &n);
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

/* Forgets the notes on the n nodes of `nodes` (gpuprio's copy of a graph, before it goes). */
static void forget_notes(const CUgraphNode *nodes, size_t n)
{
    for (size_t i = 0; nodes && i < n && cudahal_node_time_any(); i++)
        cudahal_node_time_note(nodes[i], 0);
}

CUgraph cudahal_graph_clone(CUgraph graph)
{
    CUgraph clone = NULL;
    if (!driver_ready() || drv.clone(&clone, graph) != CUDA_SUCCESS)
        return NULL;
    carry_notes(graph, clone);
    return clone;
}

void cudahal_graph_destroy(CUgraph clone)
{
    if (!clone || !driver_ready())
        return;
    if (cudahal_node_time_any()) {
        size_t n;
        CUgraphNode *nodes = nodes_of(clone, &n);
        forget_notes(nodes, n);
        free(nodes);
    }
    drv.destroy(clone);
}

/* The always-open word: a page of its own, so that registering it pins nothing else. */
static _Alignas(4096) uint64_t open_page[4096 / sizeof(uint64_t)] = {DG_OPEN};

uint64_t cudahal_graph_open_word(void)
{
    if (!driver_ready())
        return 0;
    /* Registered again each time: a teardown of the context that registered it unregisters it. */
    CUresult r = drv.host_register((void *)open_page, sizeof open_page,
                                   CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        return 0;
    CUdeviceptr dev = 0;
    if (drv.device_pointer(&dev, (void *)open_page, 0) != CUDA_SUCCESS)
        return 0;
    return (uint64_t)dev;
}

struct cudahal_graph_twin {
    CUgraph graph;
    CUgraphExec exec;
    CUcontext ctx;
    CUevent done;  /* recorded behind each of its launches */
    bool recorded; /* done stands behind its last launch */
    uint64_t target;
    size_t gates, noted;
    CUgraphNode waits[];
};

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

/* A node and its place in the graph's list, sorted by node to find an edge's ends. */
struct node_at {
    CUgraphNode node;
    size_t at;
};

static int by_node(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct node_at *)a)->node,
              y = (uintptr_t)((const struct node_at *)b)->node;
    return (x > y) - (x < y);
}

/* node's place in the graph's list (sorted: n of them), or n. */
static size_t place_of(const struct node_at *sorted, size_t n, CUgraphNode node)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)sorted[mid].node < (uintptr_t)node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && sorted[lo].node == node ? sorted[lo].at : n;
}

/* The graph's nodes in an order where every node follows its dependencies (Kahn's), from its
 * edges; NULL on a failure or a cycle. O((nodes + edges) log nodes): graphs of tens of thousands
 * of nodes are built under their executable graph's lock, at a launch. */
static CUgraphNode *topological(CUgraph graph, size_t *n, CUgraphNode **from, CUgraphNode **to,
                                size_t *edges)
{
    CUgraphNode *nodes = nodes_of(graph, n), *order = NULL;
    size_t *pending = NULL, *queue = NULL, *first = NULL, *next = NULL, *placed = NULL;
    struct node_at *sorted = NULL;
    *from = *to = NULL;
    *edges = 0;
    if (!nodes)
        return NULL;
    size_t e = 0;
    if (drv.get_edges(graph, NULL, NULL, &e) != CUDA_SUCCESS)
        goto out;
    if (e) {
        *from = calloc(e, sizeof **from);
        *to = calloc(e, sizeof **to);
        if (!*from || !*to || drv.get_edges(graph, *from, *to, &e) != CUDA_SUCCESS)
            goto out;
    }
    *edges = e;
    pending = calloc(*n, sizeof *pending);
    queue = calloc(*n, sizeof *queue);
    order = calloc(*n, sizeof *order);
    sorted = calloc(*n, sizeof *sorted);
    first = calloc(*n + 1, sizeof *first); /* node j's out-edges: next[first[j]..first[j+1]) */
    next = calloc(e + 1, sizeof *next);
    placed = calloc(*n, sizeof *placed);
    if (!pending || !queue || !order || !sorted || !first || !next || !placed)
        goto fail;
    for (size_t j = 0; j < *n; j++)
        sorted[j] = (struct node_at){nodes[j], j};
    qsort(sorted, *n, sizeof *sorted, by_node);
    for (size_t i = 0; i < e; i++) {
        size_t a = place_of(sorted, *n, (*from)[i]), b = place_of(sorted, *n, (*to)[i]);
        if (a == *n || b == *n)
            goto fail;
        first[a + 1]++;
        pending[b]++;
    }
    for (size_t j = 0; j < *n; j++)
        first[j + 1] += first[j];
    for (size_t i = 0; i < e; i++) {
        size_t a = place_of(sorted, *n, (*from)[i]);
        next[first[a] + placed[a]++] = place_of(sorted, *n, (*to)[i]);
    }
    size_t head = 0, tail = 0;
    for (size_t j = 0; j < *n; j++)
        if (!pending[j])
            queue[tail++] = j;
    while (head < tail) {
        size_t j = queue[head++];
        order[head - 1] = nodes[j];
        for (size_t i = first[j]; i < first[j + 1]; i++)
            if (--pending[next[i]] == 0)
                queue[tail++] = next[i];
    }
    if (head == *n)
        goto out;
fail:
    free(order);
    order = NULL;
out:
    if (!order) {
        free(*from);
        free(*to);
        *from = *to = NULL;
    }
    free(pending);
    free(queue);
    free(sorted);
    free(first);
    free(next);
    free(placed);
    free(nodes);
    return order;
}

/* Puts a wait node on the edges into kernel: it takes the kernel's dependencies, and the kernel
 * depends on it alone. 0, or -EIO. */
static int gate_before(CUgraph graph, CUgraphNode kernel, const CUgraphNode *from,
                       const CUgraphNode *to, size_t edges, CUcontext ctx, uint64_t target,
                       CUgraphNode *wait)
{
    size_t deps = 0;
    for (size_t i = 0; i < edges; i++)
        deps += to[i] == kernel;
    if (!deps)
        return 0;
    CUgraphNode *dep = calloc(deps, sizeof *dep), *kernels = calloc(deps, sizeof *kernels);
    int rc = -ENOMEM;
    if (!dep || !kernels)
        goto out;
    for (size_t i = 0, j = 0; i < edges; i++)
        if (to[i] == kernel) {
            dep[j] = from[i];
            kernels[j++] = kernel;
        }
    CUDA_BATCH_MEM_OP_NODE_PARAMS p;
    CUstreamBatchMemOpParams op;
    wait_params(&p, &op, ctx, target);
    rc = -EIO;
    if (drv.add_memop(wait, graph, dep, deps, &p) != CUDA_SUCCESS)
        goto out;
    if (drv.remove_deps(graph, dep, kernels, deps) != CUDA_SUCCESS ||
        drv.add_deps(graph, wait, &kernel, 1) != CUDA_SUCCESS)
        goto out;
    rc = 0;
out:
    free(dep);
    free(kernels);
    return rc;
}

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

/* The weight of each node of order (n of them): its predicted time for a kernel node,
 * NOT_KERNEL for the others; *kernels and *noted count the kernel nodes, and those noted. 0, or
 * -EIO. */
#define NOT_KERNEL UINT64_MAX
static int weigh(const CUgraphNode *order, size_t n, uint64_t learned_ns, uint64_t *weight,
                 size_t *kernels, size_t *noted)
{
    uint64_t noted_ns = 0;
    *kernels = *noted = 0;
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType type;
        if (drv.node_type(order[i], &type) != CUDA_SUCCESS)
            return -EIO;
        weight[i] = type == CU_GRAPH_NODE_TYPE_KERNEL ? cudahal_node_time_of(order[i]) : NOT_KERNEL;
        if (weight[i] == NOT_KERNEL)
            continue;
        ++*kernels;
        if (weight[i] && weight[i] < NOT_KERNEL - noted_ns) {
            ++*noted;
            noted_ns += weight[i];
        }
    }
    uint64_t rest = learned_ns > noted_ns ? learned_ns - noted_ns : 0;
    uint64_t share = *kernels > *noted ? rest / (*kernels - *noted) : 0;
    for (size_t i = 0; i < n; i++)
        if (weight[i] == 0)
            weight[i] = share;
    return 0;
}

int cudahal_graph_twin_build(CUgraph clone, CUcontext ctx, uint64_t interval_ns,
                             uint64_t learned_ns, uint64_t target, unsigned long long flags,
                             struct cudahal_graph_twin **out)
{
    *out = NULL;
    if (!driver_ready() || !clone || interval_ns == 0) {
        cudahal_graph_destroy(clone);
        return -EINVAL;
    }
    size_t n, edges, kernels = 0, noted = 0;
    CUgraphNode *from, *to;
    CUgraphNode *order = topological(clone, &n, &from, &to, &edges);
    uint64_t *weight = NULL;
    struct cudahal_graph_twin *t = NULL;
    int rc = -EIO;
    if (!order)
        goto fail;
    rc = -ENOMEM;
    weight = calloc(n, sizeof *weight);
    if (!weight)
        goto fail;
    rc = weigh(order, n, learned_ns, weight, &kernels, &noted);
    forget_notes(order, n); /* read: the copy is never built on again */
    if (rc)
        goto fail;
    rc = -ENOMEM;
    t = calloc(1, sizeof *t + (kernels + 1) * sizeof t->waits[0]);
    if (!t)
        goto fail;
    *t = (struct cudahal_graph_twin){.graph = clone, .ctx = ctx, .target = target, .noted = noted};
    uint64_t since = 0; /* predicted time of the kernel nodes since the last wait node */
    size_t ran = 0;     /* and how many */
    for (size_t i = 0; i < n; i++) {
        if (weight[i] == NOT_KERNEL)
            continue;
        if (ran && (weight[i] >= interval_ns || since > interval_ns - weight[i])) {
            CUgraphNode wait = NULL;
            rc = gate_before(clone, order[i], from, to, edges, ctx, target, &wait);
            if (rc)
                goto fail;
            if (wait) {
                t->waits[t->gates++] = wait;
                since = 0;
                ran = 0;
            }
        }
        since = weight[i] < NOT_KERNEL - since ? since + weight[i] : NOT_KERNEL - 1;
        ran++;
    }
    rc = -ENOENT;
    if (!t->gates)
        goto fail;
    rc = -EIO;
    if (!instantiate_in(ctx, &t->exec, clone, flags))
        goto fail;
    if (!new_event(ctx, &t->done)) {
        drv.exec_destroy(t->exec);
        goto fail;
    }
    free(order);
    free(from);
    free(to);
    free(weight);
    *out = t;
    return 0;
fail:
    free(order);
    free(from);
    free(to);
    free(weight);
    free(t);
    cudahal_graph_destroy(clone);
    return rc;
}

CUgraphExec cudahal_graph_twin_exec(const struct cudahal_graph_twin *t)
{
    return t->exec;
}

size_t cudahal_graph_twin_gates(const struct cudahal_graph_twin *t)
{
    return t->gates;
}

size_t cudahal_graph_twin_noted(const struct cudahal_graph_twin *t)
{
    return t->noted;
}

int cudahal_graph_twin_target(struct cudahal_graph_twin *t, uint64_t target)
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

void cudahal_graph_twin_destroy(struct cudahal_graph_twin *t)
{
    if (!t)
        return;
    drv.event_destroy(t->done); /* a wait already made on it still holds */
    drv.exec_destroy(t->exec);
    drv.destroy(t->graph);
    free(t);
}

void cudahal_graph_twin_forget(struct cudahal_graph_twin *t)
{
    free(t);
}

void cudahal_graph_twin_launched(struct cudahal_graph_twin *t, CUstream stream)
{
    t->recorded = drv.event_record(t->done, stream) == CUDA_SUCCESS;
}

int cudahal_graph_twin_order(const struct cudahal_graph_twin *t, CUstream stream)
{
    if (!t->recorded)
        return -EIO;
    return drv.stream_wait_event(stream, t->done, 0) == CUDA_SUCCESS ? 0 : -EIO;
}

int cudahal_graph_stream_id(CUstream stream, uint64_t *id)
{
    unsigned long long got = 0;
    if (!driver_ready() || !drv.stream_id)
        return -ENOTSUP;
    if (drv.stream_id(stream, &got) != CUDA_SUCCESS)
        return -EIO;
    *id = got;
    return 0;
}

int cudahal_graph_stream_capturing(CUstream stream)
{
    CUstreamCaptureStatus status;
    if (!driver_ready() || drv.stream_is_capturing(stream, &status) != CUDA_SUCCESS)
        return -EIO;
    return status != CU_STREAM_CAPTURE_STATUS_NONE;
}
