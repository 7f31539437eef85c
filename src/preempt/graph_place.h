/*
 * graph_place.h - where wait nodes go inside a graph (docs/design.md, "Gates inside graphs"),
 * whatever the runtime: the graph's nodes in an order where each follows its dependencies, the
 * predicted time of each kernel node, and the kernel nodes that get a wait node before them. A
 * runtime's half (cuda_graph_gate.c) reads the graph and makes the nodes; nothing here calls a
 * runtime, so the rules are tested on their own (tests/unit/graph_place_test.c).
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

#endif
