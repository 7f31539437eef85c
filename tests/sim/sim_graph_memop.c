/*
 * sim_graph_memop.c - batch memory operation nodes (hip_6.4): hipGraphAddBatchMemOpNode, its
 * node's get and set calls, and the executable graph's set call.
 *
 * The simulator without this file (libamdhip64.so.5 in soname5/, tests/sim/CMakeLists.txt)
 * stands in for ROCm 5.2.3, which has no such node: it exports none of these names. The node
 * keeps the parameters with the caller's paramArray pointer, as clr does, and each launch reads
 * the array (sim_graph_exec.c), so a change to it reaches the launches made after it.
 */
#include "sim_graph.h"

/*
 * The checks of clr's three calls (7.2; 6.4.3's Add checks none of them): one to 256 operations,
 * an array, no flags, and a context (hipCtxGetCurrent's), although nothing uses it. Then the
 * simulator's own: only 32- and 64-bit value waits and writes, each on an aligned address, a
 * wait's flags a condition of hipStreamWaitValue's, a write's none.
 */
static hipError_t check(const hipBatchMemOpNodeParams *p)
{
    if (!p || p->count < 1 || p->count > 256 || !p->paramArray || p->flags || !p->ctx)
        return hipErrorInvalidValue;
    for (unsigned i = 0; i < p->count; i++) {
        const hipStreamBatchMemOpParams *op = &p->paramArray[i];
        switch (op->operation) {
        case hipStreamMemOpWaitValue32:
        case hipStreamMemOpWaitValue64:
            if (!op->waitValue.address || op->waitValue.flags > hipStreamWaitValueNor ||
                (uintptr_t)op->waitValue.address %
                    (op->operation == hipStreamMemOpWaitValue64 ? 8 : 4))
                return hipErrorInvalidValue;
            break;
        case hipStreamMemOpWriteValue32:
        case hipStreamMemOpWriteValue64:
            if (!op->writeValue.address || op->writeValue.flags ||
                (uintptr_t)op->writeValue.address %
                    (op->operation == hipStreamMemOpWriteValue64 ? 8 : 4))
                return hipErrorInvalidValue;
            break;
        default:
            return hipErrorInvalidValue;
        }
    }
    return hipSuccess;
}

/* A batch memory operation node hipGraphAddBatchMemOpNode made (a captured value wait or write
 * is one too, without parameters to get or set). */
static bool batch_node(hipGraphNode_t node)
{
    return sim_gnode_valid(node) && node->type == SIM_NODE_BATCH_MEM_OP && !node->tmpl;
}

/* HIPSIM_GRAPH_MEMOP_FAILS=1: every call fails with hipErrorNotSupported. */
hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t *phGraphNode, hipGraph_t hGraph,
                                     const hipGraphNode_t *dependencies, size_t numDependencies,
                                     const hipBatchMemOpNodeParams *nodeParams)
{
    SIM_GRAPH_CALL(hipGraphAddBatchMemOpNode);
    sim_init();
    if (sim.cfg.graph_memop_fails)
        return sim_ret(hipErrorNotSupported);
    hipError_t err = check(nodeParams);
    if (err != hipSuccess || !phGraphNode || !hGraph || (numDependencies && !dependencies))
        return sim_ret(hipErrorInvalidValue);
    struct hipGraphNode proto = {.type = SIM_NODE_BATCH_MEM_OP, .batch = *nodeParams};
    struct hipGraphNode *n = NULL;
    sim_lock();
    err = sim_graph_add_node(hGraph, dependencies, numDependencies, &proto, &n);
    sim_unlock();
    if (err == hipSuccess)
        *phGraphNode = n;
    return sim_ret(err);
}

hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t hNode,
                                           hipBatchMemOpNodeParams *nodeParams_out)
{
    SIM_GRAPH_CALL(hipGraphBatchMemOpNodeGetParams);
    sim_init();
    if (!nodeParams_out)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    bool ok = batch_node(hNode);
    if (ok)
        *nodeParams_out = hNode->batch;
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}

/* Executable graphs instantiated before keep the parameters they were made with. */
hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t hNode,
                                           hipBatchMemOpNodeParams *nodeParams)
{
    SIM_GRAPH_CALL(hipGraphBatchMemOpNodeSetParams);
    sim_init();
    if (check(nodeParams) != hipSuccess)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    bool ok = batch_node(hNode);
    if (ok)
        hNode->batch = *nodeParams;
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}

/* Launches made before keep the operations they were made with; the later ones take these. */
hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                               const hipBatchMemOpNodeParams *nodeParams)
{
    SIM_GRAPH_CALL(hipGraphExecBatchMemOpNodeSetParams);
    sim_init();
    if (check(nodeParams) != hipSuccess)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    struct sim_xnode *x = sim_exec_node(hGraphExec, hNode);
    bool ok = x && sim_exec_set_batch(x, nodeParams) == 0;
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}
