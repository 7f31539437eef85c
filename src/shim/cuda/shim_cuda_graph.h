/*
 * shim_cuda_graph.h - the CUDA shim's forwarding of graph instantiation, launch, change and
 * destruction (cuda_api.def's GRAPH_* kinds; kinds.def's GRAPH forward), which puts gates inside
 * a lower priority's graph launches (shim_cuda_graph.c, over src/shim/core/graph.c; the
 * GRAPH_CHANGE forward goes to the core directly: core.h). Its declarations are
 * generated from cuda_api.def by kind, so that no parameter list is written twice.
 */
#ifndef GPUPRIO_SHIM_CUDA_GRAPH_H
#define GPUPRIO_SHIM_CUDA_GRAPH_H

#include "cuda_compat.h"

#include "core.h"

#define GRAPH_RESULT CUresult
#define GRAPH_SUCCESS CUDA_SUCCESS
#include "graph_forms.h"

#define CUDA_API(name, kind, stream, cost_key, params, args) GRAPH_DECLARE_ENTRY(name, kind, params)
#include "cuda_api.def"
#undef CUDA_API

#endif /* GPUPRIO_SHIM_CUDA_GRAPH_H */
