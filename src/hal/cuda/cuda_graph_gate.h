/*
 * cuda_graph_gate.h - gates inside CUDA graphs, as the driver builds them: a copy of an
 * application's graph taken when it is instantiated, and from it a second executable graph (the
 * "gated copy") with wait-value nodes on the dependency edges before kernel nodes, about one per
 * interval of predicted GPU time (cuda_graph_gate.c says how it is shared among nodes), each
 * waiting, as a stream's gate does, until a gate word of host memory is open (docs/design.md,
 * "Gates inside graphs"). Which word each launch waits on is the shim's choice
 * (src/shim/cuda/shim_cuda_graph.c): its queue's gate line, or a word that is always open.
 *
 * Nothing here touches the application's graph or executable graph but to read the graph's nodes
 * and edges and clone it. Every driver call that fails leaves the application's objects as they
 * were; what gpuprio made is destroyed and the caller leaves the graph whole.
 */
#ifndef GPUPRIO_CUDA_GRAPH_GATE_H
#define GPUPRIO_CUDA_GRAPH_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_compat.h"

/*
 * Why a graph launch went as the application's own executable graph, without gates inside:
 * X(name, what gpuprio says). The first group passes (the next launch may be gated); from
 * FEW_KERNELS on, the executable graph stays whole for good.
 */
#define CUDAHAL_GRAPH_WHOLE_REASONS(X)                                                             \
    X(NOT_GATED, "its stream was not held by gates")                                               \
    X(NOT_LEARNED, "its GPU time was not learned yet")                                             \
    X(SHORT, "its learned GPU time is within one gate interval")                                   \
    X(CAPTURING, "a stream capture was in progress")                                               \
    X(OTHER_STREAM, "it was launched on another stream than its previous launch")                  \
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
    X(NO_DRIVER, "the driver lacks batch memory operation nodes (CUDA 11.7)")                      \
    X(FAILED, "a driver call failed while gpuprio copied it or built its gated copy")

enum cudahal_graph_whole {
#define CUDAHAL_GRAPH_WHOLE_ENUM(name, what) CUDAHAL_GRAPH_WHOLE_##name,
    CUDAHAL_GRAPH_WHOLE_REASONS(CUDAHAL_GRAPH_WHOLE_ENUM)
#undef CUDAHAL_GRAPH_WHOLE_ENUM
        CUDAHAL_GRAPH_WHOLE_COUNT
};

/* What gpuprio says for reason r. */
const char *cudahal_graph_whole_reason(enum cudahal_graph_whole r);

/*
 * Reads graph's nodes: -1 when it can be gated (then *kernels is its number of kernel nodes),
 * else the reason it stays whole (FEW_KERNELS, MEM_NODES, CONDITIONAL, CHILD_GRAPH, OTHER_NODES,
 * DEVICE_UPDATABLE, NO_DRIVER, FAILED).
 */
int cudahal_graph_survey(CUgraph graph, size_t *kernels);
/* The calling thread's current context (where an executable graph is instantiated), or NULL. */
CUcontext cudahal_graph_context(void);
/* A copy of graph, or NULL (a driver refusal); the predicted times noted for graph's nodes
 * (cuda_node_time.h) are noted for their copies too. */
CUgraph cudahal_graph_clone(CUgraph graph);
/* Destroys a copy that cudahal_graph_clone made (NULL: nothing). */
void cudahal_graph_destroy(CUgraph clone);

/* The device address of a gate word that is always open, registered in the current context
 * (again after a teardown): 0 when the driver refuses. */
uint64_t cudahal_graph_open_word(void);

/* A gated copy: its executable graph, the graph it was made from, and its wait nodes. */
struct cudahal_graph_twin;

/*
 * Builds the gated copy of clone (a copy of the application's graph, which it then owns, whatever
 * the result), whose launches were learned to take learned_ns: wait nodes before kernel nodes
 * that have dependencies, about one every interval_ns of predicted time (cuda_graph_gate.c),
 * waiting on the word at device address `target`, instantiated in context ctx with `flags`. 0 and
 * *out, or -errno (the clone destroyed): -ENOENT where no wait node found a place. The notes of
 * predicted time (cuda_node_time.h) on clone's nodes are used up either way.
 */
int cudahal_graph_twin_build(CUgraph clone, CUcontext ctx, uint64_t interval_ns,
                             uint64_t learned_ns, uint64_t target, unsigned long long flags,
                             struct cudahal_graph_twin **out);
/* The gated copy's executable graph. */
CUgraphExec cudahal_graph_twin_exec(const struct cudahal_graph_twin *t);
/* How many wait nodes it holds. */
size_t cudahal_graph_twin_gates(const struct cudahal_graph_twin *t);
/* How many of its kernel nodes had a predicted time noted. */
size_t cudahal_graph_twin_noted(const struct cudahal_graph_twin *t);
/* Has its wait nodes wait on the word at device address target from its next launch on, where
 * they waited on another (launches already made are not affected): 0, or -EIO. */
int cudahal_graph_twin_target(struct cudahal_graph_twin *t, uint64_t target);
/* Destroys it (its executable graph may still run: the driver frees it once it is done). */
void cudahal_graph_twin_destroy(struct cudahal_graph_twin *t);
/* Frees its memory without a call into the driver, whose objects of it died with their context
 * (NULL: nothing). */
void cudahal_graph_twin_forget(struct cudahal_graph_twin *t);
/* After a launch of its executable graph on stream: records its event there, behind the launch
 * (a failure is remembered, and cudahal_graph_twin_order then refuses). */
void cudahal_graph_twin_launched(struct cudahal_graph_twin *t, CUstream stream);
/* Has stream wait, on the device, for its launches made so far (what its event stands behind),
 * before what the caller submits to stream next; nothing waits on the host. 0, or -EIO (no launch
 * recorded, or the driver refused). */
int cudahal_graph_twin_order(const struct cudahal_graph_twin *t, CUstream stream);
/* stream's id (cuStreamGetId, CUDA 12.0), which no other stream of the process's life has, unlike
 * its handle, an address that a stream created after its destruction may get: 0 and *id, or
 * -ENOTSUP (an older driver) or -EIO. */
int cudahal_graph_stream_id(CUstream stream, uint64_t *id);
/* Whether stream captures (1: active or invalidated) or not (0); -EIO where the driver cannot
 * tell (the legacy stream while another captures). */
int cudahal_graph_stream_capturing(CUstream stream);

#endif /* GPUPRIO_CUDA_GRAPH_GATE_H */
