/*
 * shim_cuda_graph.h - the CUDA shim's forwarding of graph instantiation, launch, change and
 * destruction (cuda_api.def's GRAPH_* kinds; kinds.def's GRAPH and GRAPH_CHANGE forwards), which
 * puts gates inside a lower priority's graph launches (shim_cuda_graph.c).
 */
#ifndef GPUPRIO_SHIM_CUDA_GRAPH_H
#define GPUPRIO_SHIM_CUDA_GRAPH_H

#include "cuda_compat.h"

#include "core.h"

/* An entry of kind GRAPH_EXEC_CHANGE is about to be forwarded for the executable graph exec. */
void graph_exec_changing(void *exec);

/* Each GRAPH-forwarded entry: the call (its queue and admission ticket), the driver's function,
 * then the caller's arguments. */
#define GRAPH_FORWARD(name, params_after_real)                                                     \
    CUresult graph_##name(const struct core_call *c, CUresult(*real) params_after_real,            \
                          GRAPH_PARAMS params_after_real);
#define GRAPH_PARAMS(...) __VA_ARGS__
GRAPH_FORWARD(cuGraphLaunch, (CUgraphExec hGraph, CUstream hStream))
GRAPH_FORWARD(cuGraphLaunch_ptsz, (CUgraphExec hGraph, CUstream hStream))
GRAPH_FORWARD(cuGraphUpload, (CUgraphExec hGraph, CUstream hStream))
GRAPH_FORWARD(cuGraphUpload_ptsz, (CUgraphExec hGraph, CUstream hStream))
GRAPH_FORWARD(cuGraphInstantiateWithParams, (CUgraphExec * phGraphExec, CUgraph hGraph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams))
GRAPH_FORWARD(cuGraphInstantiateWithParams_ptsz, (CUgraphExec * phGraphExec, CUgraph hGraph,
                                                  CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams))
GRAPH_FORWARD(cuGraphInstantiateWithFlags,
              (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags))
GRAPH_FORWARD(cuGraphInstantiate, (CUgraphExec * phGraphExec, CUgraph hGraph,
                                   CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize))
GRAPH_FORWARD(cuGraphInstantiate_v2, (CUgraphExec * phGraphExec, CUgraph hGraph,
                                      CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize))
GRAPH_FORWARD(cuGraphExecDestroy, (CUgraphExec hGraphExec))
#undef GRAPH_FORWARD

#endif /* GPUPRIO_SHIM_CUDA_GRAPH_H */
