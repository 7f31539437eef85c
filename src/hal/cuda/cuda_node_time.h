/*
 * cuda_node_time.h - the predicted GPU time of graph nodes that gpuprio put into a stream capture
 * itself (a GEMM's slices: cuda_gemm.c), so that the gated copy of the graph can place its wait
 * nodes by predicted time (cuda_graph_gate.c; docs/design.md, "Gates inside graphs").
 *
 * A small table keyed by node handle, bounded, shared by all threads; the oldest notes go first
 * when it is full. A handle is only an address, so a note must not outlive its node: notes move
 * to gpuprio's copy at instantiation and are used up when the gated copy is built or the copy
 * destroyed (cuda_graph_gate.c). One left on a graph destroyed uninstantiated, which a later
 * graph's node at the same address would read, can only misplace a wait node (a gate earlier or
 * later than its interval); it never changes what a graph computes, nor its order.
 */
#ifndef GPUPRIO_CUDA_NODE_TIME_H
#define GPUPRIO_CUDA_NODE_TIME_H

#include <stdint.h>

#include "cuda_compat.h"

/* Notes that node is predicted to take ns of GPU time (0: forgets it). */
void cudahal_node_time_note(CUgraphNode node, uint64_t ns);
/* node's predicted time, or 0 when none was noted (or it was evicted). */
uint64_t cudahal_node_time_of(CUgraphNode node);
/* Notes ns for the one node that stream's capture now ends with, where the driver says there is
 * exactly one (cuStreamGetCaptureInfo, v3 or v2); nothing where it cannot tell. */
void cudahal_node_time_note_leaf(CUstream stream, uint64_t ns);
/* Whether any note is kept (so that a caller may skip looking). */
int cudahal_node_time_any(void);
/* Every note forgotten and the table's lock made anew: in a forked child, where a thread of the
 * parent may have held it (the notes are of the parent's captures). */
void cudahal_node_time_forget_all(void);

#endif /* GPUPRIO_CUDA_NODE_TIME_H */
