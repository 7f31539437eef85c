/*
 * hip_graph_gate.h - gates inside HIP graphs, as the runtime builds them (ROCm 6.4 and later):
 * HIP's graph ops (platform.h, struct gp_graph_ops), which src/shim/core/graph.c drives, as
 * cuda_graph_gate.h does for CUDA: a copy of an application's graph taken when it is
 * instantiated, and from it a gated copy with batch memory operation nodes that wait, as a
 * stream's gate does, until a gate word of host memory is open (docs/design.md, "Gates inside
 * graphs"). Off unless GPUPRIO_GRAPH_GATE_US is set in the environment: no AMD GPU has run them.
 *
 * Nothing here touches the application's graph or executable graph but to read the graph's nodes
 * and edges and clone it. Every call that fails leaves the application's objects as they were;
 * what gpuprio made is destroyed and the core leaves the graph whole.
 */
#ifndef GPUPRIO_HIP_GRAPH_GATE_H
#define GPUPRIO_HIP_GRAPH_GATE_H

#include "platform.h"

/*
 * HIP's graph ops. Where the runtime lacks batch memory operation nodes (before 6.4: Debian 12's
 * 5.2.3) every graph stays whole (NO_RUNTIME), with no graph call made. The handles are
 * hipGraph_t, hipGraphExec_t, hipStream_t, and as the context the instantiating thread's current
 * device plus one; stream_id is hipStreamGetId (7.1), and stream_capturing says 1 for a capture
 * active or invalidated, -EIO where the runtime cannot tell (the null stream while another
 * captures, or an error of the application's pending on a special stream).
 */
extern const struct gp_graph_ops hiphal_graph_ops;

#endif /* GPUPRIO_HIP_GRAPH_GATE_H */
