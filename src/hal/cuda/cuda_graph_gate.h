/*
 * cuda_graph_gate.h - gates inside CUDA graphs, as the driver builds them: CUDA's graph ops
 * (platform.h, struct gp_graph_ops), which src/shim/core/graph.c drives. A copy of an
 * application's graph is taken when it is instantiated, and from it a second executable graph
 * (the "gated copy") with wait-value nodes on the dependency edges before kernel nodes, about one
 * per interval of predicted GPU time (cuda_graph_gate.c says how it is shared among nodes), each
 * waiting, as a stream's gate does, until a gate word of host memory is open (docs/design.md,
 * "Gates inside graphs"). Which word each launch waits on is the core's choice: its queue's gate
 * line, or a word that is always open.
 *
 * Nothing here touches the application's graph or executable graph but to read the graph's nodes
 * and edges and clone it. Every driver call that fails leaves the application's objects as they
 * were; what gpuprio made is destroyed and the core leaves the graph whole.
 */
#ifndef GPUPRIO_CUDA_GRAPH_GATE_H
#define GPUPRIO_CUDA_GRAPH_GATE_H

#include "platform.h"

/*
 * CUDA's graph ops. Where the driver lacks batch memory operation nodes (CUDA 11.7) every graph
 * stays whole (NO_RUNTIME), with no graph call made. The handles are CUgraph, CUgraphExec,
 * CUcontext (the instantiating thread's current one) and CUstream; stream_id is cuStreamGetId
 * (CUDA 12.0), and stream_capturing says 1 for a capture active or invalidated, -EIO for the
 * legacy stream while another captures. The predicted times noted for a graph's nodes
 * (cuda_node_time.h) are carried into its copy, and used up by twin_build.
 */
extern const struct gp_graph_ops cudahal_graph_ops;

#endif /* GPUPRIO_CUDA_GRAPH_GATE_H */
