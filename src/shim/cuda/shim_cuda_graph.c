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

/* The flags of an instantiation, from the third argument of its form (a form with another type
 * there is a compile error). */
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
#define INSTANTIATE_FLAGS(third)                                                                   \
    _Generic((third), CUDA_GRAPH_INSTANTIATE_PARAMS *: params_flags,                               \
             unsigned long long: given_flags, CUgraphNode *: no_flags)(third)

/* Every instantiate form's first two arguments are the executable graph's out-parameter and the
 * graph. */
#define INSTANTIATED(r, exec_out, graph, third, ...)                                               \
    do {                                                                                           \
        if ((r) == CUDA_SUCCESS && core_graph_on() && (exec_out))                                  \
            core_graph_instantiated((uintptr_t)(*(exec_out)), (uintptr_t)(graph),                  \
                                    INSTANTIATE_FLAGS(third));                                     \
    } while (0)
#define GRAPH_APPLY(macro, ...) macro(__VA_ARGS__)

/* graph_NAME of each entry of an instantiate kind, all alike (an instantiate kind missing here
 * leaves its entries' graph_NAME undefined: a link error). */
#define INSTANTIATE_FORM(name, params, args)                                                       \
    CUresult graph_##name(const struct core_call *c, CUresult(*real) params, CORE_ARGS params)     \
    {                                                                                              \
        (void)c;                                                                                   \
        CUresult r = real args;                                                                    \
        GRAPH_APPLY(INSTANTIATED, r, CORE_ARGS args, ~);                                           \
        return r;                                                                                  \
    }
#define INSTANTIATE_GRAPH_INSTANTIATE ~, INSTANTIATE_FORM
#define INSTANTIATE_GRAPH_INSTANTIATE_IF ~, INSTANTIATE_FORM
#define INSTANTIATE_GRAPH_INSTANTIATE_IF_PT ~, INSTANTIATE_FORM
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    GRAPH_PICK(INSTANTIATE_##kind)(name, params, args)
#include "cuda_api.def"
#undef CUDA_API

/* CUDA lets an executable graph be destroyed while launches of it run, and so its gated copy. */
CUresult graph_cuGraphExecDestroy(const struct core_call *c, CUresult (*real)(CUgraphExec),
                                  CUgraphExec hGraphExec)
{
    (void)c;
    CUresult r = real(hGraphExec);
    if (r == CUDA_SUCCESS)
        core_graph_exec_destroyed((uintptr_t)hGraphExec);
    return r;
}

/* ---- launches ---- */

/* Every launch and upload form has the one type. */
typedef CUresult (*launch_fn)(CUgraphExec, CUstream);

static int forward(void (*real)(void), uintptr_t exec, uintptr_t stream)
{
    return ((launch_fn)real)((CUgraphExec)exec, (CUstream)stream);
}

/* A launch (upload: an upload) of hGraph on hStream; ptsz: a _ptsz form. */
static CUresult launch(const struct core_call *c, launch_fn real, CUgraphExec hGraph,
                       CUstream hStream, bool upload, bool ptsz)
{
    return (CUresult)core_graph_launch(c, forward, (void (*)(void))real, (uintptr_t)hGraph,
                                       (uintptr_t)hStream, upload, ptsz);
}

CUresult graph_cuGraphLaunch(const struct core_call *c, CUresult (*real)(CUgraphExec, CUstream),
                             CUgraphExec hGraph, CUstream hStream)
{
    return launch(c, real, hGraph, hStream, false, false);
}

CUresult graph_cuGraphLaunch_ptsz(const struct core_call *c,
                                  CUresult (*real)(CUgraphExec, CUstream), CUgraphExec hGraph,
                                  CUstream hStream)
{
    return launch(c, real, hGraph, hStream, false, true);
}

CUresult graph_cuGraphUpload(const struct core_call *c, CUresult (*real)(CUgraphExec, CUstream),
                             CUgraphExec hGraph, CUstream hStream)
{
    return launch(c, real, hGraph, hStream, true, false);
}

CUresult graph_cuGraphUpload_ptsz(const struct core_call *c,
                                  CUresult (*real)(CUgraphExec, CUstream), CUgraphExec hGraph,
                                  CUstream hStream)
{
    return launch(c, real, hGraph, hStream, true, true);
}
