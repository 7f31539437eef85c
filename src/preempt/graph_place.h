/*
 * graph_place.h - where wait nodes go inside a graph (docs/design.md, "Gates inside graphs"),
 * whatever the runtime: the graph's nodes in an order where each follows its dependencies, the
 * predicted time of each kernel node, the kernel nodes that get a wait node before them, and the
 * walk that puts them there (graph_place_add_waits). A runtime's half (cuda_graph_gate.c,
 * hip_graph_gate.c) gives the walk its node calls (struct graph_place_calls); nothing here calls a
 * runtime, so the rules and the walk are tested on their own (tests/unit/graph_place_test.c).
 *
 * Nodes are the runtime's handles, taken as integers (uintptr_t), distinct, and known by their
 * index in the list the runtime gave.
 */
#ifndef GPUPRIO_GRAPH_PLACE_H
#define GPUPRIO_GRAPH_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The n nodes' indices in an order where every node follows its dependencies (Kahn's), into
 * order[n], from the graph's edges (from[i] to to[i], edges of them), and how many dependencies
 * each node has, into deps[n] (by index; an edge listed twice counts twice). 0; -ENOMEM; -EINVAL
 * where a handle is listed twice or an edge's end is not one of the nodes; -ELOOP where the edges
 * make a cycle (a node depending on itself too). O((nodes + edges) log nodes): graphs of tens of
 * thousands of nodes are placed at a launch.
 */
int graph_place_order(const uintptr_t *nodes, size_t n, const uintptr_t *from, const uintptr_t *to,
                      size_t edges, size_t *order, size_t *deps);

/* A node that is not a kernel node: it weighs nothing and gets no wait node. */
#define GRAPH_PLACE_NOT_KERNEL UINT64_MAX

/*
 * The weight of each of n nodes, in place: on entry a kernel node's predicted time where one was
 * noted (a GEMM's slice), 0 where none was, GRAPH_PLACE_NOT_KERNEL for the other nodes; on return
 * the learned time less the noted ones (at least 0) shared equally by the kernel nodes not
 * counted as noted, in place of their 0. *kernels counts the kernel nodes, *noted those counted as
 * noted: a note that would take the noted sum to GRAPH_PLACE_NOT_KERNEL or past it keeps its
 * weight but is not counted (nor subtracted), so its node still takes a share's place.
 */
void graph_place_weigh(uint64_t *weight, size_t n, uint64_t learned_ns, size_t *kernels,
                       size_t *noted);

/*
 * Walking n nodes in order (weight[i] and deps[i] of the i-th in that order), whether a wait node
 * goes before each, into gate[n]: before a kernel node that has dependencies, when a kernel node
 * ran since the last wait node and that time plus the node's own would pass interval_ns. So no
 * stretch between two wait nodes is predicted longer than an interval but where a single node is,
 * and such a node has one before and after it (where it has dependencies). The number of wait
 * nodes.
 */
size_t graph_place_waits(const uint64_t *weight, const size_t *deps, size_t n, uint64_t interval_ns,
                         bool *gate);

/*
 * A runtime's node calls, for the walk: each HAL fills one, and each call gets the HAL's ctx (the
 * graph, and what a wait node needs) and returns 0 or a negative errno. Handles are the runtime's,
 * handle_size bytes each (at most a uintptr_t's), in arrays the walk allocates and the runtime
 * fills and reads directly.
 */
struct graph_place_calls {
    size_t handle_size;
    /* The graph's nodes into nodes, room for *n (NULL: none), and how many it has into *n. */
    int (*get_nodes)(void *ctx, void *nodes, size_t *n);
    /* Its edges, from[i] to to[i], likewise (both NULL: none). */
    int (*get_edges)(void *ctx, void *from, void *to, size_t *n);
    /* node's weight for graph_place_weigh: a kernel node's predicted time where one was noted,
     * else 0; GRAPH_PLACE_NOT_KERNEL for another node. */
    int (*weigh)(void *ctx, const void *node, uint64_t *weight);
    /* Optional (no ctx): given the graph's n nodes once ordered and weighed, or either failed. */
    void (*weighed)(const void *nodes, size_t n);
    /* A wait node depending on the n nodes of deps, into *wait. */
    int (*add_wait)(void *ctx, const void *deps, size_t n, void *wait);
    /* Adds the n edges from[i] to to[i], or (add false) removes them. */
    int (*change_edges)(void *ctx, bool add, const void *from, const void *to, size_t n);
};

/* The graph's nodes, malloc'd (*n of them), or NULL with *n 0 on a failure (or none). */
void *graph_place_nodes(const struct graph_place_calls *calls, void *ctx, size_t *n);

/*
 * The walk: reads the graph's nodes and edges, orders them (graph_place_order), weighs them
 * (calls->weigh, then graph_place_weigh with learned_ns, which counts *noted), chooses
 * (graph_place_waits with interval_ns) and, in that order, puts a wait node on the edges into
 * each kernel node chosen: the wait node takes the kernel's dependencies (add_wait), which leave
 * the kernel (change_edges), and the kernel depends on the wait node alone. The wait nodes,
 * malloc'd, into *waits (*gates of them). 0; -EIO where the graph has no nodes or could not be
 * read (its edge count changing between two reads too); -EINVAL where handle_size is 0 or more
 * than a uintptr_t's; -ENOMEM; graph_place_order's -EINVAL or
 * -ELOOP; -ENOENT where no wait node goes in; or a call's error, which stops the walk there, the
 * graph left as it is (a wait node whose edges did not move stays): the caller destroys it.
 */
int graph_place_add_waits(const struct graph_place_calls *calls, void *ctx, uint64_t learned_ns,
                          uint64_t interval_ns, void **waits, size_t *gates, size_t *noted);

/* The word a wait node waits on where its queue is not held by gates: always open (DG_OPEN), in a
 * page of its own so that registering it with a runtime pins nothing else. */
extern uint64_t graph_place_open_page[4096 / sizeof(uint64_t)];

#endif
