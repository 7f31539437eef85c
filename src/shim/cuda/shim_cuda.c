/*
 * shim_cuda.c - the exported CUDA driver entry points of libgpuprio-cuda.so.
 *
 * Every wrapper is generated from cuda_api.def and does the same three things as the HIP
 * shim's: observe (find the call's XQueue and admit it), forward the call to the application's
 * own driver on the calling thread with the caller's arguments, and track its effect (count
 * submitted work, register and forget streams). Nothing is deferred, copied or re-issued
 * (docs/design.md, "Transparency"). The one deliberate change is the hardware priority of streams
 * created by a thread or process that has a gpuprio priority (see "hardware priorities" below).
 *
 * The driver API has no per-thread "last error", so the shim's own driver calls (the current
 * context's device before forwarding, stream properties after a successful creation, markers)
 * cannot change what the application observes; they only must not change its current context,
 * and must not fail in a way that matters: a failing query before forwarding just leaves the
 * call unscheduled, and the application's own call then reports its own error. Calls the driver
 * makes into its own exports would come back through these wrappers; a thread-local depth sends
 * them straight through.
 *
 * Applications reach the driver three ways, all covered: linked symbols (exported here), dlsym on
 * a libcuda handle (dl_override.c), and cuGetProcAddress, which is how the CUDA runtime (and so
 * PyTorch) finds every driver function. The rules for the last two are the core's, the same for
 * every platform (src/shim/core/entries.c), as are the wrapper skeleton, which queue a stream
 * handle means, stream registration, the depth, the markers and the library's start, over CUDA's
 * implementation of the platform contract (src/hal/cuda/cuda_platform.c).
 */

#include "cuda_compat.h"

#include "core.h"
#include "cuda_bind.h"
#include "cuda_device.h"
#include "cuda_platform.h"
#include "shim_cuda_graph.h"
#include "xc_cost.h"
#include "gpuprio.h"

#define GP_EXPORT __attribute__((visibility("default")))

/* ---- the entry points ---- */

enum api_index {
#define CUDA_API(name, kind, stream, cost_key, params, args) API_##name,
#include "cuda_api.def"
#undef CUDA_API
    API_COUNT
};

static const char *const api_names[API_COUNT] = {
#define CUDA_API(name, kind, stream, cost_key, params, args) #name,
#include "cuda_api.def"
#undef CUDA_API
};

#define CUDA_API(name, kind, stream, cost_key, params, args) typedef CUresult(*pfn_##name) params;
#include "cuda_api.def"
#undef CUDA_API

static void *real[API_COUNT];
static void *real_fn(enum api_index i)
{
    core_resolve();
    return real[i];
}

/* ---- hardware priorities ----
 *
 * A stream the application creates without choosing a priority (cuStreamCreate, and the
 * creators with a priority argument when it is 0: the default, which is what PyTorch passes for
 * its ordinary streams) is created with the CUDA priority that matches the priority gpuprio
 * gives it (src/shim/core/creation.c), so the GPU itself prefers it at block granularity over
 * the process's other streams. The application sees the stream's real priority in
 * cuStreamGetPriority: this is the one observable change gpuprio makes on purpose
 * (docs/cuda-coverage.md); GPUPRIO_HW_PRIORITY=off leaves it out.
 */

/* The creators' forwarding, one per STREAM_CREATE entry of cuda_api.def (a new creator without
 * one is a compile error). Called only when the real function exists. */
static CUresult create_cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    pfn_cuStreamCreateWithPriority with_priority = real_fn(API_cuStreamCreateWithPriority);
    int hw;
    if (with_priority && core_hw_priority(&hw))
        return with_priority(phStream, Flags, hw);
    return ((pfn_cuStreamCreate)real_fn(API_cuStreamCreate))(phStream, Flags);
}

static CUresult create_cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                                  int priority)
{
    int hw;
    if (priority == 0 && core_hw_priority(&hw))
        priority = hw;
    return ((pfn_cuStreamCreateWithPriority)real_fn(API_cuStreamCreateWithPriority))(
        phStream, flags, priority);
}

static CUresult create_cuGreenCtxStreamCreate(CUstream *phStream, CUgreenCtx greenCtx,
                                              unsigned int flags, int priority)
{
    int hw;
    if (priority == 0 && core_hw_priority(&hw))
        priority = hw;
    return ((pfn_cuGreenCtxStreamCreate)real_fn(API_cuGreenCtxStreamCreate))(phStream, greenCtx,
                                                                             flags, priority);
}

/* ---- the wrappers ---- */

/* The body of every wrapper: the core's skeleton, forwarding as the kind says (core.h). */
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    GP_EXPORT CUresult name params                                                                 \
    {                                                                                              \
        pfn_##name gp_real = (pfn_##name)real_fn(API_##name);                                      \
        CORE_WRAPPER_BODY(CUresult, CUDA_ERROR_NOT_INITIALIZED, CUDA_SUCCESS, gp_real, #name,      \
                          kind, stream, API_##name, cost_key, args,                                \
                          CORE_FORWARD(kind, name, gp_real, args))                                 \
    }
#include "cuda_api.def"
#undef CUDA_API

/* The driver still exports deprecated entry points, so the shim wraps them too. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void *const wrappers[API_COUNT] = {
#define CUDA_API(name, kind, stream, cost_key, params, args) (void *)name,
#include "cuda_api.def"
#undef CUDA_API
};
#pragma GCC diagnostic pop

const struct core_shim core_shim = {
    .platform = &cudahal_platform,
    .entries = API_COUNT,
    .names = api_names,
    .wrappers = wrappers,
    .real = real,
};
