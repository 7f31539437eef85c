/*
 * sim_graph.h - graphs and executable graphs, shared by the simulator's graph files:
 * sim_graph.c (capture, and the graph itself), sim_graph_nodes.c (the node-level API),
 * sim_graph_exec.c (instantiation and launches) and sim_graph_memop.c (batch memory operation
 * nodes, which the no-memop build leaves out).
 *
 * A graph is nodes and edges, kept as clr keeps them: each node lists the nodes that depend on it
 * in the order the edges were added, and the graph's topological order is Kahn's over those
 * lists, roots taken in the order the nodes were added (clr's Graph::TopologicalOrder), which
 * hipGraphGetNodes returns and a launch runs in. A node's work is a command template (kernels and
 * captured work), or parameters read when a launch is made (batch memory operations), or a graph
 * of its own (child graph nodes). Everything here is guarded by the simulator's lock.
 */
#ifndef HIPSIM_GRAPH_H
#define HIPSIM_GRAPH_H

#include "sim_internal.h"

/* hipBatchMemOpNodeParams and the other types newer than the 5.2.3 headers. */
#include "../../src/shim/hip/hip_compat_shim.h"

/* Node types in the numbering of HIP 6.4 and later (hipGraphNodeType there), which the simulator
 * answers whatever headers it was built with: 5.2.3's enum numbers from 1, but the simulator
 * stands in for libamdhip64.so.6 and .so.7. */
enum sim_node_type {
    SIM_NODE_KERNEL = 0,
    SIM_NODE_MEMCPY = 1,
    SIM_NODE_MEMSET = 2,
    SIM_NODE_HOST = 3,
    SIM_NODE_GRAPH = 4,
    SIM_NODE_EMPTY = 5,
    SIM_NODE_WAIT_EVENT = 6,
    SIM_NODE_EVENT_RECORD = 7,
    SIM_NODE_MEM_ALLOC = 10,
    SIM_NODE_MEM_FREE = 11,
    SIM_NODE_BATCH_MEM_OP = 14,
};

struct hipGraphNode {
    uint64_t id; /* shared with its copies in clones (hipGraphNodeFindInClone) */
    struct ihipGraph *graph;
    enum sim_node_type type;
    struct sim_cmd *tmpl; /* a kernel's or captured command's work, cloned at each launch */
    /* A batch memory operation node's, copied but keeping the caller's paramArray pointer, as
     * clr does: the array is read at each launch, so it must outlive them all. */
    hipBatchMemOpNodeParams batch;
    struct ihipGraph *child;   /* a child graph node's own copy of its graph */
    void *mem;                 /* a memory allocation node's memory; a free node's pointer */
    struct hipGraphNode **out; /* the nodes that depend on it, in the order the edges were added */
    size_t nout, cap_out;
    size_t nin;
    size_t scratch; /* a walk's own: in-degree left while ordering, else the node's index */
};

struct ihipGraph {
    struct hipGraphNode **nodes; /* in the order they were added */
    size_t count, cap;
    bool clone; /* made by hipGraphClone: what hipGraphNodeFindInClone searches */
};

/* The graph entry points, which hipsimGraphCalls counts one by one. */
#define SIM_GRAPH_CALLS(X)                                                                         \
    X(hipGraphCreate)                                                                              \
    X(hipGraphDestroy)                                                                             \
    X(hipGraphGetNodes)                                                                            \
    X(hipGraphGetEdges)                                                                            \
    X(hipGraphAddKernelNode)                                                                       \
    X(hipGraphAddEmptyNode)                                                                        \
    X(hipGraphAddMemAllocNode)                                                                     \
    X(hipGraphAddMemFreeNode)                                                                      \
    X(hipGraphAddChildGraphNode)                                                                   \
    X(hipGraphAddBatchMemOpNode)                                                                   \
    X(hipGraphBatchMemOpNodeGetParams)                                                             \
    X(hipGraphBatchMemOpNodeSetParams)                                                             \
    X(hipGraphAddDependencies)                                                                     \
    X(hipGraphRemoveDependencies)                                                                  \
    X(hipGraphNodeGetType)                                                                         \
    X(hipGraphClone)                                                                               \
    X(hipGraphNodeFindInClone)                                                                     \
    X(hipGraphInstantiate)                                                                         \
    X(hipGraphInstantiateWithFlags)                                                                \
    X(hipGraphInstantiateWithParams)                                                               \
    X(hipGraphLaunch)                                                                              \
    X(hipGraphLaunch_spt)                                                                          \
    X(hipGraphUpload)                                                                              \
    X(hipGraphExecDestroy)                                                                         \
    X(hipGraphExecKernelNodeSetParams)                                                             \
    X(hipGraphExecBatchMemOpNodeSetParams)                                                         \
    X(hipGraphExecUpdate)                                                                          \
    X(hipGraphNodeSetEnabled)                                                                      \
    X(hipGraphNodeGetEnabled)

enum sim_graph_call {
#define SIM_GRAPH_CALL_ENUM(name) SIM_GC_##name,
    SIM_GRAPH_CALLS(SIM_GRAPH_CALL_ENUM)
#undef SIM_GRAPH_CALL_ENUM
        SIM_GC_COUNT
};

/* Counts a call of the graph entry point name (any thread, no lock needed). */
void sim_graph_count(enum sim_graph_call call);
#define SIM_GRAPH_CALL(name) sim_graph_count(SIM_GC_##name)

/* ---- graphs (sim_graph.c); lock held ---- */

/* Whether graph is a live graph and deps distinct nodes of it, as clr checks the dependencies of
 * a new node (else hipErrorInvalidValue). */
hipError_t sim_graph_check_deps(hipGraph_t graph, const hipGraphNode_t *deps, size_t ndeps);
/*
 * Adds a node of proto's type and work to graph after the nodes deps names (checked as
 * sim_graph_check_deps does). On success the node owns proto's work and *out is the node; on
 * failure the caller keeps it.
 */
hipError_t sim_graph_add_node(hipGraph_t graph, const hipGraphNode_t *deps, size_t ndeps,
                              const struct hipGraphNode *proto, struct hipGraphNode **out);
/* Whether node is a live node (of any graph). */
bool sim_gnode_valid(hipGraphNode_t node);
/* Adds the edge from -> to (-ENOMEM), or removes it (false when there is none). */
int sim_graph_edge_add(struct hipGraphNode *from, struct hipGraphNode *to);
bool sim_graph_edge_remove(struct hipGraphNode *from, struct hipGraphNode *to);
/* Writes g's topological order to order (g->count entries); returns how many nodes it placed,
 * fewer than g->count when the edges make a cycle. */
size_t sim_graph_order(const struct ihipGraph *g, struct hipGraphNode **order);
/* A copy of g with the same node ids, edges and work, its nodes registered; NULL: out of memory. */
struct ihipGraph *sim_graph_copy(const struct ihipGraph *g);
/* Frees g, its nodes (their handles die) and their work. */
void sim_graph_free(struct ihipGraph *g);

/* ---- executable graphs (sim_graph_exec.c); lock held ---- */

struct sim_xnode;
/* exec's record of node (a node of the graph it was instantiated from), or NULL when exec is not
 * a live executable graph or has no such node. */
struct sim_xnode *sim_exec_node(hipGraphExec_t exec, hipGraphNode_t node);
/* Sets a record's batch memory operation parameters (a record of another type: -EINVAL). */
int sim_exec_set_batch(struct sim_xnode *x, const hipBatchMemOpNodeParams *params);

#endif /* HIPSIM_GRAPH_H */
