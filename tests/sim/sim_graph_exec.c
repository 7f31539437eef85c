/*
 * sim_graph_exec.c - executable graphs: instantiation, launches, and the changes an executable
 * graph takes after it was made.
 *
 * Instantiating records each node of the graph, in its topological order, with a copy of its
 * work, as clr clones the graph: what the executable graph's own calls change (set-params,
 * hipGraphExecUpdate, hipGraphNodeSetEnabled), leaving the graph and the launches already made
 * alone. A launch turns the records into commands on the launch stream, in that order: a child
 * graph's records in place of its node, nothing for a disabled node, and for a batch memory
 * operation node value waits and writes made from the caller's array as it reads at that moment
 * (clr keeps the pointer and reads it at submission). Like clr, nothing orders launches of one
 * executable graph on different streams but the streams themselves.
 *
 * A wait of a graph says when it holds (hipsimGraphWaitsHolding, hipsimGraphWaitsHeld, and with
 * HIPSIM_GRAPH_SAY=1 on stderr, as tests/cuda/fake_cuda.c words it), naming how many of the
 * launch's kernel nodes come before it: where in the graph a gate held.
 *
 * An executable graph belongs to the device current at its instantiation, as clr's does
 * (GraphExec::Init: instantiateDeviceId_, and the streams its parallel branches run on are made
 * there). clr splits a graph into lists (Graph::GetRunList, 6.4): the first runs on the launch
 * stream, the others on those streams of the instantiation device. So a graph with branches
 * launched on a stream of another device than the one it was instantiated on runs its other lists
 * there: the simulator runs their nodes on a stream of the instantiation device, still in the
 * graph's order (each after the node before it), which is where their kernels see they ran
 * (hipsimLaunch.device).
 */
#include "sim_graph.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../src/util/gp_grow.h"

struct sim_xgraph {
    struct sim_xnode *nodes; /* in the graph's topological order */
    size_t count;
};

struct sim_xnode {
    const struct hipGraphNode *origin; /* what the set-params calls name; compared, never read */
    enum sim_node_type type;
    size_t nin; /* hipGraphExecUpdate compares the number of dependencies */
    bool enabled;
    bool branch; /* not on clr's first list: runs on the instantiation device's stream */
    struct sim_cmd *tmpl;
    hipBatchMemOpNodeParams batch;
    struct sim_xgraph child;
};

struct hipGraphExec {
    struct sim_xgraph graph;
    int device;                    /* current at its instantiation */
    bool branches;                 /* a node is off clr's first list */
    struct ihipStream_t *parallel; /* made at the first launch that runs branches there */
};

static atomic_int execs_alive, waits_holding;
static _Atomic uint64_t waits_held;

/* ---- records ---- */

static void xgraph_free(struct sim_xgraph *x)
{
    for (size_t i = 0; i < x->count; i++) {
        sim_cmd_unref(x->nodes[i].tmpl);
        xgraph_free(&x->nodes[i].child);
    }
    free(x->nodes);
    x->nodes = NULL;
    x->count = 0;
}

/* Records g's nodes in x: hipErrorInvalidValue for a cycle, as clr's ordering fails. */
static hipError_t xgraph_build(struct sim_xgraph *x, const struct ihipGraph *g)
{
    *x = (struct sim_xgraph){0};
    if (!g->count)
        return hipSuccess;
    struct hipGraphNode **order = malloc(g->count * sizeof *order);
    x->nodes = calloc(g->count, sizeof *x->nodes);
    hipError_t err = order && x->nodes ? hipSuccess : hipErrorOutOfMemory;
    if (err == hipSuccess && sim_graph_order(g, order) < g->count)
        err = hipErrorInvalidValue;
    for (size_t i = 0; err == hipSuccess && i < g->count; i++) {
        const struct hipGraphNode *n = order[i];
        struct sim_xnode *r = &x->nodes[x->count++];
        *r = (struct sim_xnode){
            .origin = n, .type = n->type, .nin = n->nin, .enabled = true, .batch = n->batch};
        if (n->tmpl && !(r->tmpl = sim_cmd_clone(n->tmpl)))
            err = hipErrorOutOfMemory;
        if (err == hipSuccess && n->child)
            err = xgraph_build(&r->child, n->child);
    }
    free(order);
    if (err != hipSuccess)
        xgraph_free(x);
    return err;
}

/* Whether x has a node hipGraphAddBatchMemOpNode made (HIPSIM_GATED_LAUNCH_FAILS). */
static bool xgraph_has_batch(const struct sim_xgraph *x)
{
    for (size_t i = 0; i < x->count; i++)
        if ((x->nodes[i].type == SIM_NODE_BATCH_MEM_OP && !x->nodes[i].tmpl) ||
            xgraph_has_batch(&x->nodes[i].child))
            return true;
    return false;
}

/* clr's lists of g's nodes (Graph::GetRunList and GetRunListUtil, 6.4): a depth-first walk from
 * each node not yet visited, in the order the nodes were added, that goes on along a node's first
 * edge not yet visited; a list ends where the walk cannot go on, and is then added, or put in
 * front of the list that starts at the node it reached. Only which list a node is on matters
 * here: list 0 runs on the launch stream. */
struct run_lists {
    const struct ihipGraph *g;
    bool *visited;
    int *list;      /* by node index (scratch) */
    size_t *single; /* the list being made */
    size_t nsingle;
    size_t *first; /* each list's first node */
    int nlists;
};

static void run_list_walk(struct run_lists *r, size_t v)
{
    const struct hipGraphNode *n = r->g->nodes[v];
    r->visited[v] = true;
    r->single[r->nsingle++] = v;
    for (size_t j = 0; j < n->nout; j++) {
        size_t w = n->out[j]->scratch;
        if (!r->visited[w]) {
            run_list_walk(r, w);
            continue;
        }
        for (int l = 0; l < r->nlists && r->nsingle; l++)
            if (r->first[l] == w) {
                for (size_t k = 0; k < r->nsingle; k++)
                    r->list[r->single[k]] = l;
                r->first[l] = r->single[0];
                r->nsingle = 0;
            }
    }
    if (r->nsingle) {
        for (size_t k = 0; k < r->nsingle; k++)
            r->list[r->single[k]] = r->nlists;
        r->first[r->nlists++] = r->single[0];
        r->nsingle = 0;
    }
}

/* Marks x's nodes (g's, recorded) that are off clr's first list; says whether there are any.
 * Out of memory, none is. */
static bool mark_branches(const struct ihipGraph *g, struct sim_xgraph *x)
{
    size_t n = g->count;
    struct run_lists r = {.g = g,
                          .visited = calloc(n + 1, sizeof(bool)),
                          .list = calloc(n + 1, sizeof(int)),
                          .single = calloc(n + 1, sizeof(size_t)),
                          .first = calloc(n + 1, sizeof(size_t))};
    bool any = false;
    if (r.visited && r.list && r.single && r.first) {
        for (size_t i = 0; i < n; i++)
            g->nodes[i]->scratch = i;
        for (size_t i = 0; i < n; i++)
            if (!r.visited[i])
                run_list_walk(&r, i);
        for (size_t i = 0; i < x->count; i++) {
            x->nodes[i].branch = r.list[x->nodes[i].origin->scratch] != 0;
            any = any || x->nodes[i].branch;
        }
    }
    free(r.visited);
    free(r.list);
    free(r.single);
    free(r.first);
    return any;
}

struct sim_xnode *sim_exec_node(hipGraphExec_t exec, hipGraphNode_t node)
{
    if (!sim_handle_valid(exec, SIM_H_GRAPH_EXEC) || !sim_gnode_valid(node))
        return NULL;
    for (size_t i = 0; i < exec->graph.count; i++)
        if (exec->graph.nodes[i].origin == node)
            return &exec->graph.nodes[i];
    return NULL;
}

int sim_exec_set_batch(struct sim_xnode *x, const hipBatchMemOpNodeParams *params)
{
    if (x->type != SIM_NODE_BATCH_MEM_OP || x->tmpl)
        return -EINVAL;
    x->batch = *params;
    return 0;
}

/* ---- instantiation ---- */

/* Returns the result without recording it: callers pass it through sim_ret. */
static hipError_t instantiate(hipGraphExec_t *exec, hipGraph_t graph)
{
    sim_init();
    if (!exec)
        return hipErrorInvalidValue;
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    struct hipGraphExec *x = NULL;
    if (!sim_handle_valid(graph, SIM_H_GRAPH))
        goto out;
    err = hipErrorOutOfMemory;
    x = calloc(1, sizeof *x);
    if (!x)
        goto out;
    err = xgraph_build(&x->graph, graph);
    x->device = sim_current_device();
    if (err == hipSuccess)
        x->branches = mark_branches(graph, &x->graph);
    if (err == hipSuccess && sim_handle_add(x, SIM_H_GRAPH_EXEC) < 0) {
        xgraph_free(&x->graph);
        err = hipErrorOutOfMemory;
    }
    if (err != hipSuccess) {
        free(x);
        goto out;
    }
    *exec = x;
    atomic_fetch_add(&execs_alive, 1);
out:
    sim_unlock();
    return err;
}

hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                               hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize)
{
    SIM_GRAPH_CALL(hipGraphInstantiate);
    SIM_UNUSED(pErrorNode);
    if (pLogBuffer && bufferSize)
        pLogBuffer[0] = '\0';
    return sim_ret(instantiate(pGraphExec, graph));
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                                        unsigned long long flags)
{
    SIM_GRAPH_CALL(hipGraphInstantiateWithFlags);
    SIM_UNUSED(flags);
    return sim_ret(instantiate(pGraphExec, graph));
}

/*
 * Uploading has nothing to do in the simulator but check its arguments (and fail as a gated
 * launch does, HIPSIM_GATED_LAUNCH_FAILS). Returns the result without recording it.
 */
static hipError_t graph_upload(hipGraphExec_t exec, hipStream_t stream)
{
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_handle_valid(exec, SIM_H_GRAPH_EXEC)
                         ? sim_stream_resolve(stream, false, &s)
                         : hipErrorInvalidValue;
    if (err == hipSuccess && sim.cfg.gated_launch_fails && xgraph_has_batch(&exec->graph))
        err = hipErrorOutOfMemory;
    sim_unlock();
    return err;
}

/*
 * As ROCm/clr: flags must be 0 or exactly one of the four flags; hipGraphInstantiateFlagUpload
 * uploads the new graph on uploadStream (hipGraphUpload), whose error is the call's, with the
 * executable graph already handed out.
 */
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                                         hipGraphInstantiateParams *instantiateParams)
{
    SIM_GRAPH_CALL(hipGraphInstantiateWithParams);
    sim_init();
    if (!pGraphExec || !graph || !instantiateParams)
        return sim_ret(hipErrorInvalidValue);
    unsigned long long flags = instantiateParams->flags;
    if (flags != 0 && flags != hipGraphInstantiateFlagAutoFreeOnLaunch &&
        flags != hipGraphInstantiateFlagUpload && flags != hipGraphInstantiateFlagDeviceLaunch &&
        flags != hipGraphInstantiateFlagUseNodePriority) {
        instantiateParams->result_out = hipGraphInstantiateError;
        return sim_ret(hipErrorInvalidValue);
    }
    hipError_t err = instantiate(pGraphExec, graph);
    if (err != hipSuccess) {
        instantiateParams->result_out = hipGraphInstantiateError;
        return sim_ret(err);
    }
    instantiateParams->result_out = hipGraphInstantiateSuccess;
    instantiateParams->errNode_out = NULL;
    if (flags == hipGraphInstantiateFlagUpload)
        err = graph_upload(*pGraphExec, instantiateParams->uploadStream);
    return sim_ret(err);
}

/* Launches already made keep running: they are commands of their own. */
hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec)
{
    SIM_GRAPH_CALL(hipGraphExecDestroy);
    sim_init();
    sim_lock();
    bool ok = sim_handle_valid(graphExec, SIM_H_GRAPH_EXEC);
    if (ok) {
        sim_handle_remove(graphExec);
        xgraph_free(&graphExec->graph);
        if (graphExec->parallel) /* its launches' commands hold it until they are done */
            sim_stream_for_graph_drop(graphExec->parallel);
        free(graphExec);
        atomic_fetch_sub(&execs_alive, 1);
    }
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}

/* ---- launches ---- */

struct launch_cmd {
    struct sim_cmd *cmd;
    bool branch; /* of a node off clr's first list */
};

struct launch_cmds {
    struct launch_cmd *cmds;
    size_t count, cap;
    unsigned kernels; /* kernel nodes so far, enabled or not */
    bool branch;      /* the node being pushed is off clr's first list */
    hipError_t err;
};

static void push(struct launch_cmds *l, struct sim_cmd *c)
{
    if (!c) {
        l->err = hipErrorOutOfMemory;
        return;
    }
    struct launch_cmd *cmds = gp_grow(l->cmds, &l->cap, l->count, sizeof *cmds, 16);
    if (!cmds) {
        sim_cmd_unref(c);
        l->err = hipErrorOutOfMemory;
        return;
    }
    l->cmds = cmds;
    l->cmds[l->count++] = (struct launch_cmd){c, l->branch};
}

/* A batch memory operation node's value waits and writes, from its array as it is now: 64-bit ops
 * compare and write whole words, 32-bit ones their low halves; a wait's flags are its condition
 * (hipStreamWaitValueGte...), as for hipStreamWaitValue. */
static void push_ops(struct launch_cmds *l, const hipBatchMemOpNodeParams *p)
{
    for (unsigned i = 0; i < p->count && l->err == hipSuccess; i++) {
        const hipStreamBatchMemOpParams *op = &p->paramArray[i];
        bool wait = op->operation == hipStreamMemOpWaitValue32 ||
                    op->operation == hipStreamMemOpWaitValue64;
        bool wide = op->operation == hipStreamMemOpWaitValue64 ||
                    op->operation == hipStreamMemOpWriteValue64;
        if (!wait && op->operation != hipStreamMemOpWriteValue32 &&
            op->operation != hipStreamMemOpWriteValue64) {
            l->err = hipErrorInvalidValue; /* changed in the array since it was checked */
            return;
        }
        void *ptr = wait ? op->waitValue.address : op->writeValue.address;
        if (sim_memory_dead(ptr, wide ? 8 : 4)) {
            sim_stale_use("registered host memory at", ptr);
            l->err = hipErrorInvalidValue;
            return;
        }
        struct sim_cmd *c = sim_cmd_new(wait ? SIM_CMD_WAIT_VALUE : SIM_CMD_WRITE_VALUE);
        if (c) {
            c->u.value.ptr = ptr;
            c->u.value.width = wide ? 64 : 32;
            c->u.value.mask = wide ? ~UINT64_C(0) : UINT32_MAX;
            if (wait) {
                c->u.value.value = wide ? op->waitValue.value64 : op->waitValue.value;
                c->u.value.flags = op->waitValue.flags;
                c->u.value.graph = true;
                c->u.value.kernels_before = l->kernels;
            } else {
                c->u.value.value = wide ? op->writeValue.value64 : op->writeValue.value;
            }
        }
        push(l, c);
    }
}

/* top: x is the executable graph's own, whose nodes say which list they are on; a child graph's
 * nodes are on their node's. */
static void push_xgraph(struct launch_cmds *l, const struct sim_xgraph *x, bool top)
{
    for (size_t i = 0; i < x->count && l->err == hipSuccess; i++) {
        const struct sim_xnode *n = &x->nodes[i];
        if (top)
            l->branch = n->branch;
        if (n->type == SIM_NODE_GRAPH)
            push_xgraph(l, &n->child, false);
        else if (n->tmpl && n->enabled)
            push(l, sim_cmd_clone(n->tmpl));
        else if (!n->tmpl && n->type == SIM_NODE_BATCH_MEM_OP && n->enabled)
            push_ops(l, &n->batch);
        if (n->type == SIM_NODE_KERNEL)
            l->kernels++;
    }
}

static hipError_t graph_launch(hipGraphExec_t exec, hipStream_t stream, bool spt)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    struct launch_cmds l = {.err = hipErrorInvalidValue};
    if (!sim_handle_valid(exec, SIM_H_GRAPH_EXEC))
        goto out;
    l.err = sim_stream_resolve(stream, spt, &s);
    if (l.err == hipSuccess && sim.cfg.gated_launch_fails && xgraph_has_batch(&exec->graph))
        l.err = hipErrorOutOfMemory;
    if (l.err == hipSuccess)
        push_xgraph(&l, &exec->graph, true);
    /* clr's other lists run on the instantiation device's streams (not into a capture, which
     * records the launch). */
    struct ihipStream_t *parallel = NULL;
    if (l.err == hipSuccess && exec->branches && exec->device != s->device && !s->capture) {
        if (!exec->parallel)
            exec->parallel = sim_stream_for_graph(exec->device);
        parallel = exec->parallel;
        if (!parallel)
            l.err = hipErrorOutOfMemory;
    }
    /* Nothing is queued unless all of it can be. Each command after the one before it, on
     * whichever stream that went. */
    struct sim_cmd *prev = NULL;
    const struct ihipStream_t *prev_to = s;
    for (size_t i = 0; i < l.count; i++) {
        struct sim_cmd *c = l.cmds[i].cmd;
        struct ihipStream_t *to = parallel && l.cmds[i].branch ? parallel : s;
        if (c->kind == SIM_CMD_WAIT_VALUE && c->u.value.graph)
            c->u.value.kernels = l.kernels;
        if (l.err == hipSuccess && prev && prev_to != to && sim_cmd_add_dep(c, prev) < 0)
            l.err = hipErrorOutOfMemory;
        if (l.err != hipSuccess) {
            sim_cmd_unref(c);
            continue;
        }
        sim_cmd_ref(c);
        l.err = sim_submit(to, c);
        sim_cmd_unref(prev);
        prev = c;
        prev_to = to;
    }
    /* As clr ends a launch of several lists: the launch stream goes on once all of them did. */
    if (l.err == hipSuccess && prev && prev_to != s) {
        struct sim_cmd *join = sim_cmd_new(SIM_CMD_WAIT);
        if (!join || sim_cmd_add_dep(join, prev) < 0) {
            sim_cmd_unref(join);
            l.err = hipErrorOutOfMemory;
        } else {
            l.err = sim_submit(s, join);
        }
    }
    sim_cmd_unref(prev);
    free(l.cmds);
out:
    sim_unlock();
    return sim_ret(l.err);
}

hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream)
{
    SIM_GRAPH_CALL(hipGraphLaunch);
    return graph_launch(graphExec, stream, false);
}

hipError_t hipGraphLaunch_spt(hipGraphExec_t graphExec, hipStream_t stream)
{
    SIM_GRAPH_CALL(hipGraphLaunch_spt);
    return graph_launch(graphExec, stream, true);
}

hipError_t hipGraphUpload(hipGraphExec_t graphExec, hipStream_t stream)
{
    SIM_GRAPH_CALL(hipGraphUpload);
    sim_init();
    return sim_ret(graph_upload(graphExec, stream));
}

/* ---- changes to an executable graph: later launches only ---- */

/* As clr: the node must be one of the graph the executable graph was made from, still alive. */
hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                           const hipKernelNodeParams *pNodeParams)
{
    SIM_GRAPH_CALL(hipGraphExecKernelNodeSetParams);
    sim_init();
    if (!hGraphExec || !pNodeParams || !pNodeParams->func)
        return sim_ret(hipErrorInvalidValue);
    struct sim_cmd *c = NULL;
    hipError_t built = sim_kernel_cmd(pNodeParams->func, pNodeParams->gridDim,
                                      pNodeParams->blockDim, pNodeParams->sharedMemBytes,
                                      pNodeParams->kernelParams, pNodeParams->extra, &c);
    sim_lock();
    struct sim_xnode *x = sim_exec_node(hGraphExec, node);
    hipError_t err = !x || x->type != SIM_NODE_KERNEL ? hipErrorInvalidValue : built;
    if (err == hipSuccess) {
        sim_cmd_unref(x->tmpl);
        x->tmpl = c;
        c = NULL;
    }
    sim_unlock();
    sim_cmd_unref(c);
    return sim_ret(err);
}

/* hErrorNode_out's node and the reason for the first node that cannot take hGraph's place. */
static hipGraphExecUpdateResult update_check(const struct sim_xgraph *x,
                                             struct hipGraphNode **order, size_t ordered,
                                             size_t count, hipGraphNode_t *error_node)
{
    *error_node = NULL;
    if (ordered != count || count != x->count)
        return hipGraphExecUpdateErrorTopologyChanged;
    for (size_t i = 0; i < count; i++) {
        *error_node = order[i];
        if (order[i]->type != x->nodes[i].type)
            return hipGraphExecUpdateErrorNodeTypeChanged;
        if (order[i]->nin != x->nodes[i].nin)
            return hipGraphExecUpdateErrorTopologyChanged;
    }
    *error_node = NULL;
    return hipGraphExecUpdateSuccess;
}

/* Gives x's records the work of order's nodes (update_check passed); out of memory, nothing
 * changes. */
static hipError_t update_apply(struct sim_xgraph *x, struct hipGraphNode **order)
{
    size_t n = x->count ? x->count : 1;
    struct sim_cmd **tmpl = calloc(n, sizeof *tmpl);
    struct sim_xgraph *child = calloc(n, sizeof *child);
    hipError_t err = tmpl && child ? hipSuccess : hipErrorOutOfMemory;
    for (size_t i = 0; err == hipSuccess && i < x->count; i++) {
        if (order[i]->tmpl && !(tmpl[i] = sim_cmd_clone(order[i]->tmpl)))
            err = hipErrorOutOfMemory;
        if (err == hipSuccess && order[i]->child)
            err = xgraph_build(&child[i], order[i]->child);
    }
    for (size_t i = 0; tmpl && child && i < x->count; i++) {
        struct sim_xnode *r = &x->nodes[i];
        if (err != hipSuccess) {
            sim_cmd_unref(tmpl[i]);
            xgraph_free(&child[i]);
            continue;
        }
        sim_cmd_unref(r->tmpl);
        r->tmpl = tmpl[i];
        r->batch = order[i]->batch;
        xgraph_free(&r->child);
        r->child = child[i];
    }
    free(tmpl);
    free(child);
    return err;
}

/*
 * As clr: hGraph's nodes, in its topological order, take the parameters of the executable graph's
 * node for node, when they are as many, of the same types and with as many dependencies each
 * (else hipErrorGraphExecUpdateFailure and why). Unlike clr, which stops half way, nothing
 * changes unless everything can. Set-params calls still name the first graph's nodes.
 */
hipError_t hipGraphExecUpdate(hipGraphExec_t hGraphExec, hipGraph_t hGraph,
                              hipGraphNode_t *hErrorNode_out,
                              hipGraphExecUpdateResult *updateResult_out)
{
    SIM_GRAPH_CALL(hipGraphExecUpdate);
    sim_init();
    if (!hGraphExec || !hGraph || !hErrorNode_out || !updateResult_out)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    struct hipGraphNode **order = NULL;
    if (!sim_handle_valid(hGraphExec, SIM_H_GRAPH_EXEC) || !sim_handle_valid(hGraph, SIM_H_GRAPH))
        goto out;
    err = hipErrorOutOfMemory;
    order = malloc((hGraph->count ? hGraph->count : 1) * sizeof *order);
    if (!order)
        goto out;
    size_t ordered = sim_graph_order(hGraph, order);
    *updateResult_out =
        update_check(&hGraphExec->graph, order, ordered, hGraph->count, hErrorNode_out);
    err = *updateResult_out == hipGraphExecUpdateSuccess ? update_apply(&hGraphExec->graph, order)
                                                         : hipErrorGraphExecUpdateFailure;
out:
    sim_unlock();
    free(order);
    return sim_ret(err);
}

/* As clr: kernel, copy and memset nodes only. A disabled node does nothing in later launches. */
static hipError_t node_enabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned *get,
                               const unsigned *set)
{
    sim_init();
    sim_lock();
    struct sim_xnode *x = sim_exec_node(exec, node);
    hipError_t err = hipErrorInvalidValue;
    if (x &&
        (x->type == SIM_NODE_KERNEL || x->type == SIM_NODE_MEMCPY || x->type == SIM_NODE_MEMSET)) {
        if (get)
            *get = x->enabled;
        else
            x->enabled = *set != 0;
        err = hipSuccess;
    }
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipGraphNodeSetEnabled(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                  unsigned int isEnabled)
{
    SIM_GRAPH_CALL(hipGraphNodeSetEnabled);
    return node_enabled(hGraphExec, hNode, NULL, &isEnabled);
}

hipError_t hipGraphNodeGetEnabled(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                  unsigned int *isEnabled)
{
    SIM_GRAPH_CALL(hipGraphNodeGetEnabled);
    if (!isEnabled) {
        sim_init();
        return sim_ret(hipErrorInvalidValue);
    }
    return node_enabled(hGraphExec, hNode, isEnabled, NULL);
}

/* ---- graph waits that hold (called by the hardware queue's worker, without the lock) ---- */

/* When a graph wait starts to hold and when it opens, in CLOCK_REALTIME ms (the shell's `date
 * +%s%3N`), for tests that time it against what they do to other processes. */
static void say_wait(const char *what, const struct sim_cmd *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "hipsim: graph wait %s at %lld ms after %u of %u kernel nodes\n", what,
            (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, c->u.value.kernels_before,
            c->u.value.kernels);
}

void sim_graph_wait_holds(const struct sim_cmd *c)
{
    atomic_fetch_add(&waits_holding, 1);
    if (sim.cfg.graph_say)
        say_wait("holding", c);
}

void sim_graph_wait_opened(const struct sim_cmd *c, uint64_t held_ns)
{
    if (sim.cfg.graph_say)
        say_wait("opened", c);
    atomic_fetch_sub(&waits_holding, 1);
    atomic_fetch_add(&waits_held, 1);
    if (sim.cfg.graph_say)
        fprintf(stderr, "hipsim: graph wait held %llu ms after %u of %u kernel nodes\n",
                (unsigned long long)(held_ns / 1000000u), c->u.value.kernels_before,
                c->u.value.kernels);
}

/* ---- simulator API ---- */

int hipsimGraphExecsAlive(void)
{
    return atomic_load(&execs_alive);
}

int hipsimGraphWaitsHolding(void)
{
    return atomic_load(&waits_holding);
}

uint64_t hipsimGraphWaitsHeld(void)
{
    return atomic_load(&waits_held);
}
