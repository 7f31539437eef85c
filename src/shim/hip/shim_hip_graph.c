/*
 * shim_hip_graph.c - the HIP shim's graph wrappers (hip_api.def's GRAPH_* kinds): what is HIP's
 * of gates inside a lower priority's graph launches (GPUPRIO_GRAPH_GATE_US, on only where the
 * environment sets it; docs/design.md, "Gates inside graphs"). The core decides
 * (src/shim/core/graph.c) and the HAL builds (hip_graph_gate.c); here the runtime's types meet
 * the core's handles: the flags of each instantiation form, and the launch and upload functions,
 * called back through one cast.
 */
#include "shim_hip_graph.h"

#include <stdint.h>

#include "graph.h"

/* What the executable graphs' launches were, said once at exit (GPUPRIO_LOG=info): from this
 * file, so that the line comes after hipBLASLt's slices' (destructors run in the reverse of the
 * link order, and the core is linked after the shim). */
__attribute__((destructor)) static void say_counts(void)
{
    core_graph_say_counts();
}

/* ---- instantiation, destruction ---- */

/* The flags of an instantiation, from the third argument of its form. */
static unsigned long long params_flags(const hipGraphInstantiateParams *params)
{
    return params ? params->flags : 0;
}
static unsigned long long given_flags(unsigned long long flags)
{
    return flags;
}
static unsigned long long no_flags(hipGraphNode_t *error_node)
{
    (void)error_node;
    return 0;
}
#define GRAPH_INSTANTIATE_FLAGS(third)                                                             \
    _Generic((third), hipGraphInstantiateParams *: params_flags, unsigned long long: given_flags, \
             hipGraphNode_t *: no_flags)(third)

#define HIP_API(name, kind, stream, cost_key, params, args)                                        \
    GRAPH_INSTANTIATE_ENTRY(name, kind, params, args)
#include "hip_api.def"
#undef HIP_API

GRAPH_EXEC_DESTROY_FORM(hipGraphExecDestroy, hipGraphExec_t)

/* ---- launches ---- */

/* Every launch and upload form has the one type. */
static int forward(void (*real)(void), uintptr_t exec, uintptr_t stream)
{
    return ((hipError_t(*)(hipGraphExec_t, hipStream_t))real)((hipGraphExec_t)exec,
                                                              (hipStream_t)stream);
}

GRAPH_LAUNCH_FORM(hipGraphLaunch, hipGraphExec_t, hipStream_t, forward, false, false)
GRAPH_LAUNCH_FORM(hipGraphLaunch_spt, hipGraphExec_t, hipStream_t, forward, false, true)
GRAPH_LAUNCH_FORM(hipGraphUpload, hipGraphExec_t, hipStream_t, forward, true, false)
