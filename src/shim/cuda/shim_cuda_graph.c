/*
 * shim_cuda_graph.c - the CUDA shim's graph wrappers (cuda_api.def's GRAPH_* kinds): what is
 * CUDA's of gates inside a lower priority's graph launches (GPUPRIO_GRAPH_GATE_US; docs/design.md,
 * "Gates inside graphs"). The core decides (src/shim/core/graph.c) and the HAL builds
 * (cuda_graph_gate.c); here the driver's types meet the core's handles: the flags of each
 * instantiation form, and the launch and upload functions, called back through one cast.
 */
#include "shim_cuda_graph.h"

#include <stdint.h>

#include "graph.h"

/* What the executable graphs' launches were, said once at exit (GPUPRIO_LOG=info): from this
 * file, so that the line comes after cuBLASLt's slices' (destructors run in the reverse of the
 * link order, and the core is linked after the shim). */
__attribute__((destructor)) static void say_counts(void)
{
    core_graph_say_counts();
}

/* ---- instantiation, destruction ---- */

/* The flags of an instantiation, from the third argument of its form. */
static unsigned long long params_flags(const CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
    return params ? params->flags : 0;
}
static unsigned long long given_flags(unsigned long long flags)
{
    return flags;
}
static unsigned long long no_flags(CUgraphNode *error_node)
{
    (void)error_node;
    return 0;
}
#define GRAPH_INSTANTIATE_FLAGS(third)                                                             \
    _Generic((third), CUDA_GRAPH_INSTANTIATE_PARAMS *: params_flags,                               \
             unsigned long long: given_flags, CUgraphNode *: no_flags)(third)

#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    GRAPH_INSTANTIATE_ENTRY(name, kind, params, args)
#include "cuda_api.def"
#undef CUDA_API

GRAPH_EXEC_DESTROY_FORM(cuGraphExecDestroy, CUgraphExec)

/* ---- launches ---- */

/* Every launch and upload form has the one type. */
static int forward(void (*real)(void), uintptr_t exec, uintptr_t stream)
{
    return ((CUresult(*)(CUgraphExec, CUstream))real)((CUgraphExec)exec, (CUstream)stream);
}

GRAPH_LAUNCH_FORM(cuGraphLaunch, CUgraphExec, CUstream, forward, false, false)
GRAPH_LAUNCH_FORM(cuGraphLaunch_ptsz, CUgraphExec, CUstream, forward, false, true)
GRAPH_LAUNCH_FORM(cuGraphUpload, CUgraphExec, CUstream, forward, true, false)
GRAPH_LAUNCH_FORM(cuGraphUpload_ptsz, CUgraphExec, CUstream, forward, true, true)
