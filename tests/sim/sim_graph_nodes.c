/*
 * sim_graph_nodes.c - the node-level graph API: adding nodes and edges, reading them back,
 * cloning.
 *
 * Each call checks its arguments as ROCm/clr's hip_graph.cpp does (the rules in
 * docs/simulator.md), where clr checks them; where clr would dereference a bad handle the
 * simulator answers hipErrorInvalidValue. Node types are answered in HIP 6.4's numbering
 * (sim_graph.h). Nodes are handles of their own in the registry, so a stale one is refused.
 */
#include "sim_graph.h"

#include <stdlib.h>

/* Adds proto as a node, after the common checks of the Add calls; proto's work is freed when the
 * node could not be added. Returns the result without recording it. */
static hipError_t add_node(hipGraphNode_t *pGraphNode, hipGraph_t graph, const hipGraphNode_t *deps,
                           size_t ndeps, struct hipGraphNode *proto)
{
    hipError_t err = hipErrorInvalidValue;
    struct hipGraphNode *n = NULL;
    if (pGraphNode && graph && (!ndeps || deps)) {
        sim_lock();
        err = sim_graph_add_node(graph, deps, ndeps, proto, &n);
        sim_unlock();
    }
    if (err != hipSuccess) {
        sim_cmd_unref(proto->tmpl);
        if (proto->child)
            sim_graph_free(proto->child);
        if (proto->type == SIM_NODE_MEM_ALLOC)
            free(proto->mem);
        return err;
    }
    *pGraphNode = n;
    return hipSuccess;
}

/* ---- adding nodes ---- */

hipError_t hipGraphAddKernelNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                 const hipGraphNode_t *pDependencies, size_t numDependencies,
                                 const hipKernelNodeParams *pNodeParams)
{
    SIM_GRAPH_CALL(hipGraphAddKernelNode);
    sim_init();
    if (!pNodeParams || !pNodeParams->func)
        return sim_ret(hipErrorInvalidValue);
    struct hipGraphNode proto = {.type = SIM_NODE_KERNEL};
    hipError_t built = sim_kernel_cmd(pNodeParams->func, pNodeParams->gridDim,
                                      pNodeParams->blockDim, pNodeParams->sharedMemBytes,
                                      pNodeParams->kernelParams, pNodeParams->extra, &proto.tmpl);
    if (built == hipSuccess)
        return sim_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &proto));
    /* A bad graph or dependency is said before a bad kernel, as clr checks them first. */
    hipError_t err = hipErrorInvalidValue;
    if (pGraphNode && graph && (!numDependencies || pDependencies)) {
        sim_lock();
        err = sim_graph_check_deps(graph, pDependencies, numDependencies);
        sim_unlock();
    }
    return sim_ret(err != hipSuccess ? err : built);
}

hipError_t hipGraphAddEmptyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                const hipGraphNode_t *pDependencies, size_t numDependencies)
{
    SIM_GRAPH_CALL(hipGraphAddEmptyNode);
    sim_init();
    struct hipGraphNode proto = {.type = SIM_NODE_EMPTY};
    return sim_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &proto));
}

/* As clr: the memory is allocated when the node is added (dptr is set then), a pinned allocation
 * on a device; it lives as long as the node. Launches do nothing for the node. */
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                   const hipGraphNode_t *pDependencies, size_t numDependencies,
                                   hipMemAllocNodeParams *pNodeParams)
{
    SIM_GRAPH_CALL(hipGraphAddMemAllocNode);
    sim_init();
    if (!pNodeParams)
        return sim_ret(hipErrorInvalidValue);
    const hipMemPoolProps *p = &pNodeParams->poolProps;
    if (!pNodeParams->bytesize || p->allocType != hipMemAllocationTypePinned ||
        p->location.type != hipMemLocationTypeDevice || p->location.id < 0 ||
        p->location.id >= sim.cfg.devices) {
        pNodeParams->dptr = NULL;
        return sim_ret(hipErrorInvalidValue);
    }
    struct hipGraphNode proto = {.type = SIM_NODE_MEM_ALLOC,
                                 .mem = calloc(1, pNodeParams->bytesize)};
    if (!proto.mem)
        return sim_ret(hipErrorOutOfMemory);
    hipError_t err = add_node(pGraphNode, graph, pDependencies, numDependencies, &proto);
    pNodeParams->dptr = err == hipSuccess ? (*pGraphNode)->mem : NULL;
    return sim_ret(err);
}

/* The pointer must be the memory of an allocation node of the same graph that has no free node
 * yet (clr looks in every graph; the simulator's rule is narrower). Launches do nothing for it. */
hipError_t hipGraphAddMemFreeNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                  const hipGraphNode_t *pDependencies, size_t numDependencies,
                                  void *dev_ptr)
{
    SIM_GRAPH_CALL(hipGraphAddMemFreeNode);
    sim_init();
    if (!dev_ptr || (pDependencies && !numDependencies))
        return sim_ret(hipErrorInvalidValue);
    bool allocated = false, freed = false;
    sim_lock();
    if (sim_handle_valid(graph, SIM_H_GRAPH))
        for (size_t i = 0; i < graph->count; i++) {
            allocated |=
                graph->nodes[i]->type == SIM_NODE_MEM_ALLOC && graph->nodes[i]->mem == dev_ptr;
            freed |= graph->nodes[i]->type == SIM_NODE_MEM_FREE && graph->nodes[i]->mem == dev_ptr;
        }
    sim_unlock();
    if (!allocated || freed)
        return sim_ret(hipErrorInvalidValue);
    struct hipGraphNode proto = {.type = SIM_NODE_MEM_FREE, .mem = dev_ptr};
    return sim_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &proto));
}

static bool has_mem_nodes(const struct ihipGraph *g)
{
    for (size_t i = 0; i < g->count; i++)
        if (g->nodes[i]->type == SIM_NODE_MEM_ALLOC || g->nodes[i]->type == SIM_NODE_MEM_FREE ||
            (g->nodes[i]->child && has_mem_nodes(g->nodes[i]->child)))
            return true;
    return false;
}

/* The node runs a copy of childGraph taken now, as clr's does. A child with memory nodes:
 * hipErrorNotSupported (CUDA's rule; such memory would belong to two graphs). */
hipError_t hipGraphAddChildGraphNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                     const hipGraphNode_t *pDependencies, size_t numDependencies,
                                     hipGraph_t childGraph)
{
    SIM_GRAPH_CALL(hipGraphAddChildGraphNode);
    sim_init();
    struct hipGraphNode proto = {.type = SIM_NODE_GRAPH};
    hipError_t err = hipErrorInvalidValue;
    sim_lock();
    if (sim_handle_valid(childGraph, SIM_H_GRAPH)) {
        err = hipErrorNotSupported;
        if (!has_mem_nodes(childGraph)) {
            proto.child = sim_graph_copy(childGraph);
            err = proto.child ? hipSuccess : hipErrorOutOfMemory;
        }
    }
    sim_unlock();
    if (err != hipSuccess)
        return sim_ret(err);
    return sim_ret(add_node(pGraphNode, graph, pDependencies, numDependencies, &proto));
}

/* ---- edges ---- */

static bool edge_exists(const struct hipGraphNode *from, const struct hipGraphNode *to)
{
    for (size_t i = 0; i < from->nout; i++)
        if (from->out[i] == to)
            return true;
    return false;
}

/* Whether from and to are distinct live nodes of g. */
static bool edge_nodes_ok(hipGraph_t g, hipGraphNode_t from, hipGraphNode_t to)
{
    return from != to && sim_gnode_valid(from) && sim_gnode_valid(to) && from->graph == g &&
           to->graph == g;
}

/* As clr: every pair is checked first; then an edge that exists already stops the call with
 * hipErrorInvalidValue, the pairs before it added. Cycles are refused only when the graph is
 * ordered (hipGraphGetNodes, instantiation). */
hipError_t hipGraphAddDependencies(hipGraph_t graph, const hipGraphNode_t *from,
                                   const hipGraphNode_t *to, size_t numDependencies)
{
    SIM_GRAPH_CALL(hipGraphAddDependencies);
    sim_init();
    if (!graph)
        return sim_ret(hipErrorInvalidValue);
    if (!numDependencies)
        return sim_ret(hipSuccess);
    if (!from || !to)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = sim_handle_valid(graph, SIM_H_GRAPH) ? hipSuccess : hipErrorInvalidValue;
    for (size_t i = 0; err == hipSuccess && i < numDependencies; i++)
        if (!edge_nodes_ok(graph, from[i], to[i]))
            err = hipErrorInvalidValue;
    for (size_t i = 0; err == hipSuccess && i < numDependencies; i++) {
        if (edge_exists(from[i], to[i]))
            err = hipErrorInvalidValue;
        else if (sim_graph_edge_add(from[i], to[i]) < 0)
            err = hipErrorOutOfMemory;
    }
    sim_unlock();
    return sim_ret(err);
}

/* As clr: pairs are removed in order; one that is not an edge stops the call with
 * hipErrorInvalidValue, the pairs before it removed. */
hipError_t hipGraphRemoveDependencies(hipGraph_t graph, const hipGraphNode_t *from,
                                      const hipGraphNode_t *to, size_t numDependencies)
{
    SIM_GRAPH_CALL(hipGraphRemoveDependencies);
    sim_init();
    if (!graph || (numDependencies && (!from || !to)))
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = sim_handle_valid(graph, SIM_H_GRAPH) ? hipSuccess : hipErrorInvalidValue;
    for (size_t i = 0; err == hipSuccess && i < numDependencies; i++)
        if (!edge_nodes_ok(graph, from[i], to[i]) || !sim_graph_edge_remove(from[i], to[i]))
            err = hipErrorInvalidValue;
    sim_unlock();
    return sim_ret(err);
}

/* ---- reading a graph ---- */

/*
 * As clr for the array calls: with no array, the count; with an array of *n entries, the first
 * *n when there are at least as many (*n unchanged), else all of them, NULL after them, and *n
 * set to the count.
 */
static void fill(hipGraphNode_t *a, hipGraphNode_t *b, size_t *n, struct hipGraphNode *const *va,
                 struct hipGraphNode *const *vb, size_t count)
{
    for (size_t i = 0; i < *n; i++) {
        a[i] = i < count ? va[i] : NULL;
        if (b)
            b[i] = i < count ? vb[i] : NULL;
    }
    if (*n > count)
        *n = count;
}

/* Nodes in the graph's topological order; a graph whose edges make a cycle: hipErrorInvalidValue.
 */
hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t *nodes, size_t *numNodes)
{
    SIM_GRAPH_CALL(hipGraphGetNodes);
    sim_init();
    if (!graph || !numNodes)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    struct hipGraphNode **order = NULL;
    if (!sim_handle_valid(graph, SIM_H_GRAPH))
        goto out;
    err = hipErrorOutOfMemory;
    order = malloc((graph->count ? graph->count : 1) * sizeof *order);
    if (!order)
        goto out;
    err = hipErrorInvalidValue;
    if (sim_graph_order(graph, order) < graph->count)
        goto out;
    err = hipSuccess;
    if (nodes)
        fill(nodes, NULL, numNodes, order, NULL, graph->count);
    else
        *numNodes = graph->count;
out:
    sim_unlock();
    free(order);
    return sim_ret(err);
}

/* Edges node by node in the order the nodes were added, each node's in the order they were. */
hipError_t hipGraphGetEdges(hipGraph_t graph, hipGraphNode_t *from, hipGraphNode_t *to,
                            size_t *numEdges)
{
    SIM_GRAPH_CALL(hipGraphGetEdges);
    sim_init();
    if (!graph || !numEdges || !from != !to)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    struct hipGraphNode **va = NULL, **vb = NULL;
    if (!sim_handle_valid(graph, SIM_H_GRAPH))
        goto out;
    size_t count = 0;
    for (size_t i = 0; i < graph->count; i++)
        count += graph->nodes[i]->nout;
    err = hipSuccess;
    if (!from) {
        *numEdges = count;
        goto out;
    }
    va = malloc((count ? count : 1) * sizeof *va);
    vb = malloc((count ? count : 1) * sizeof *vb);
    if (!va || !vb) {
        err = hipErrorOutOfMemory;
        goto out;
    }
    for (size_t i = 0, k = 0; i < graph->count; i++)
        for (size_t j = 0; j < graph->nodes[i]->nout; j++, k++) {
            va[k] = graph->nodes[i];
            vb[k] = graph->nodes[i]->out[j];
        }
    fill(from, to, numEdges, va, vb, count);
out:
    sim_unlock();
    free(va);
    free(vb);
    return sim_ret(err);
}

/* In HIP 6.4's numbering, whatever the headers say (sim_graph.h). */
hipError_t hipGraphNodeGetType(hipGraphNode_t node, hipGraphNodeType *pType)
{
    SIM_GRAPH_CALL(hipGraphNodeGetType);
    sim_init();
    if (!pType)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    bool ok = sim_gnode_valid(node);
    if (ok)
        *pType = (hipGraphNodeType)node->type;
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}

/* ---- clones ---- */

/* As clr: a graph with a memory allocation or free node is not cloned (hipErrorNotSupported).
 * HIPSIM_GRAPH_CLONE_FAILS=1: every clone fails with hipErrorOutOfMemory. */
hipError_t hipGraphClone(hipGraph_t *pGraphClone, hipGraph_t originalGraph)
{
    SIM_GRAPH_CALL(hipGraphClone);
    sim_init();
    if (!pGraphClone || !originalGraph)
        return sim_ret(hipErrorInvalidValue);
    if (sim.cfg.graph_clone_fails)
        return sim_ret(hipErrorOutOfMemory);
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    if (!sim_handle_valid(originalGraph, SIM_H_GRAPH))
        goto out;
    err = hipErrorNotSupported;
    for (size_t i = 0; i < originalGraph->count; i++)
        if (originalGraph->nodes[i]->type == SIM_NODE_MEM_ALLOC ||
            originalGraph->nodes[i]->type == SIM_NODE_MEM_FREE)
            goto out;
    err = hipErrorOutOfMemory;
    struct ihipGraph *c = sim_graph_copy(originalGraph);
    if (!c)
        goto out;
    if (sim_handle_add(c, SIM_H_GRAPH) < 0) {
        sim_graph_free(c);
        goto out;
    }
    c->clone = true;
    *pGraphClone = c;
    err = hipSuccess;
out:
    sim_unlock();
    return sim_ret(err);
}

/* As clr: the node of clonedGraph (which hipGraphClone made) copied from originalNode, found by
 * the id a node's copies share; none, or a graph that is not a clone: hipErrorInvalidValue. */
hipError_t hipGraphNodeFindInClone(hipGraphNode_t *pNode, hipGraphNode_t originalNode,
                                   hipGraph_t clonedGraph)
{
    SIM_GRAPH_CALL(hipGraphNodeFindInClone);
    sim_init();
    if (!pNode || !originalNode || !clonedGraph)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    if (sim_handle_valid(clonedGraph, SIM_H_GRAPH) && clonedGraph->clone &&
        sim_gnode_valid(originalNode))
        for (size_t i = 0; i < clonedGraph->count && err != hipSuccess; i++)
            if (clonedGraph->nodes[i]->id == originalNode->id) {
                *pNode = clonedGraph->nodes[i];
                err = hipSuccess;
            }
    sim_unlock();
    return sim_ret(err);
}
