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
#include "cost.h"
#include "gp_options.h"
#include "gpuprio.h"
#include "gp_priority.h"
#include "scheduler.h"

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
/* The driver's stream priority range, for hardware priorities (below). */
static CUresult (*real_priority_range)(int *, int *);

static void resolve_more(void)
{
    *(void **)&real_priority_range = cudahal_sym("cuCtxGetStreamPriorityRange");
}

static void *real_fn(enum api_index i)
{
    core_resolve();
    return real[i];
}

/* ---- hardware priorities ----
 *
 * A stream created by a thread with a gpuprio priority (gpuprio_thread_set_priority), or in a
 * process with one (GPUPRIO_PRIORITY), is created with the CUDA priority that matches it, so the
 * GPU itself prefers it at block granularity over the process's other streams: above normal
 * gets the context's greatest priority, below normal its least (CUDA's default), normal is left
 * alone. Only where the application did not choose: cuStreamCreate, and the creators with a
 * priority argument when it is 0 (the default, which is what PyTorch passes for its ordinary
 * streams). The application sees the stream's real priority in cuStreamGetPriority: this is the
 * one observable change gpuprio makes on purpose (docs/cuda-coverage.md).
 */
static bool has_process_priority;
static int process_priority;

/* At load (core_shim.load_more); a bad value was reported once, by gp_opts_load. */
static void read_process_priority(void)
{
    has_process_priority = gp_opt_priority(GP_OPT_PRIORITY, &process_priority);
}

/* The CUDA priority to create a stream with instead of the default, in the current context. */
static bool hardware_priority(int *out)
{
    int p;
    if (sched_thread_priority(&p) != 0) {
        if (!has_process_priority)
            return false;
        p = process_priority;
    }
    int least = 0, greatest = 0;
    if (p == GPUPRIO_PRIORITY_NORMAL || !real_priority_range ||
        real_priority_range(&least, &greatest) != CUDA_SUCCESS)
        return false;
    *out = p > GPUPRIO_PRIORITY_NORMAL ? greatest : least;
    return true;
}

/* The creators' forwarding, one per STREAM_CREATE entry of cuda_api.def (a new creator without
 * one is a compile error). Called only when the real function exists. */
static CUresult create_cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    pfn_cuStreamCreateWithPriority with_priority = real_fn(API_cuStreamCreateWithPriority);
    int hw;
    if (with_priority && hardware_priority(&hw))
        return with_priority(phStream, Flags, hw);
    return ((pfn_cuStreamCreate)real_fn(API_cuStreamCreate))(phStream, Flags);
}

static CUresult create_cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                                  int priority)
{
    int hw;
    if (priority == 0 && hardware_priority(&hw))
        priority = hw;
    return ((pfn_cuStreamCreateWithPriority)real_fn(API_cuStreamCreateWithPriority))(
        phStream, flags, priority);
}

static CUresult create_cuGreenCtxStreamCreate(CUstream *phStream, CUgreenCtx greenCtx,
                                              unsigned int flags, int priority)
{
    int hw;
    if (priority == 0 && hardware_priority(&hw))
        priority = hw;
    return ((pfn_cuGreenCtxStreamCreate)real_fn(API_cuGreenCtxStreamCreate))(phStream, greenCtx,
                                                                             flags, priority);
}

/* ---- the wrappers ---- */

/* How each kind forwards: the real function with the caller's arguments, except that stream
 * creators go through their create_ function (hardware priorities). */
#define GP_FORWARD_WORK(name, gp_real, args) gp_real args
#define GP_FORWARD_WORK_PT(name, gp_real, args) gp_real args
#define GP_FORWARD_WORK_IF(name, gp_real, args) gp_real args
#define GP_FORWARD_WORK_IF_PT(name, gp_real, args) gp_real args
#define GP_FORWARD_SYNC(name, gp_real, args) gp_real args
#define GP_FORWARD_SYNC_PT(name, gp_real, args) gp_real args
#define GP_FORWARD_EVENT_SYNC(name, gp_real, args) gp_real args
#define GP_FORWARD_DEVICE_SYNC(name, gp_real, args) gp_real args
#define GP_FORWARD_STREAM_CREATE(name, gp_real, args) create_##name args
#define GP_FORWARD_STREAM_DESTROY(name, gp_real, args) gp_real args
#define GP_FORWARD_CAPTURE_BEGIN(name, gp_real, args) gp_real args
#define GP_FORWARD_CAPTURE_BEGIN_PT(name, gp_real, args) gp_real args
#define GP_FORWARD_CAPTURE_END(name, gp_real, args) gp_real args
#define GP_FORWARD_CAPTURE_END_PT(name, gp_real, args) gp_real args
#define GP_FORWARD_LOOKUP(name, gp_real, args) gp_real args

/* The body of every wrapper: the core's skeleton, forwarding as the kind says. */
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    GP_EXPORT CUresult name params                                                                 \
    {                                                                                              \
        pfn_##name gp_real = (pfn_##name)real_fn(API_##name);                                      \
        CORE_WRAPPER_BODY(CUresult, CUDA_ERROR_NOT_INITIALIZED, CUDA_SUCCESS, gp_real, #name,      \
                          kind, stream, API_##name, cost_key, args,                                \
                          GP_FORWARD_##kind(name, gp_real, args))                                  \
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
    .resolve_more = resolve_more,
    .load_more = read_process_priority,
};
