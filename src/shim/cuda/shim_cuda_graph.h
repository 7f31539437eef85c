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

/* GRAPH_PICK(probe): MACRO where probe is a macro defined as `~, MACRO`, else GRAPH_NONE, which
 * expands to nothing: over cuda_api.def, only the entries a probe names generate anything. */
#define GRAPH_PICK(...) GRAPH_PICK_(__VA_ARGS__, GRAPH_NONE, ~)
#define GRAPH_PICK_(probe, macro, ...) macro
#define GRAPH_NONE(...)
#define GRAPH_PASTE(a, b) GRAPH_PASTE_(a, b)
#define GRAPH_PASTE_(a, b) a##b

/* graph_NAME of each entry whose kind forwards as GRAPH (CORE_FORWARD_<kind> is the name
 * CORE_FORWARD_<forward>: core.h): the call (its queue and admission ticket), the driver's
 * function, then the caller's arguments. */
#define GRAPH_DECLARE_CORE_FORWARD_GRAPH ~, GRAPH_DECLARE
#define GRAPH_DECLARE(name, params)                                                                \
    CUresult graph_##name(const struct core_call *c, CUresult(*real) params, CORE_ARGS params);
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    GRAPH_PICK(GRAPH_PASTE(GRAPH_DECLARE_, CORE_FORWARD_##kind))(name, params)
#include "cuda_api.def"
#undef CUDA_API

#endif /* GPUPRIO_SHIM_CUDA_GRAPH_H */
