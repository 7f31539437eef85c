/*
 * shim_hip_graph.h - the HIP shim's forwarding of graph instantiation, launch and destruction
 * (hip_api.def's GRAPH_* kinds; kinds.def's GRAPH forward), which puts gates inside a lower
 * priority's graph launches (shim_hip_graph.c, over src/shim/core/graph.c; the GRAPH_CHANGE
 * forward goes to the core directly: core.h). Its declarations are generated from hip_api.def by
 * kind, so that no parameter list is written twice.
 */
#ifndef GPUPRIO_SHIM_HIP_GRAPH_H
#define GPUPRIO_SHIM_HIP_GRAPH_H

#include "hip_compat_shim.h"

#include "core.h"

#define GRAPH_RESULT hipError_t
#define GRAPH_SUCCESS hipSuccess
#include "graph_forms.h"

#define HIP_API(name, kind, stream, cost_key, params, args) GRAPH_DECLARE_ENTRY(name, kind, params)
#include "hip_api.def"
#undef HIP_API

#endif /* GPUPRIO_SHIM_HIP_GRAPH_H */
