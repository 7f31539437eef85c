/*
 * shim_hip.c - the exported HIP entry points of libgpuprio-hip.so.
 *
 * Every wrapper is generated from hip_api.def and does the same three things: observe (find
 * the call's XQueue), forward the call to the application's own runtime on the calling thread
 * with the caller's arguments, and track its effect (count submitted work, register and forget
 * streams). Nothing is deferred, copied or re-issued (docs/design.md, "Transparency"). The
 * deliberate changes are in how streams the application creates without choosing a priority or
 * a CU mask are created (see "stream creation" below).
 *
 * The application's view of errors must not change. Under ROCm 6 every call sets the thread's
 * "last command error" (hipExtGetLastError) and every failing call the sticky last error. So the
 * shim calls the runtime itself only before forwarding, with calls that cannot fail, or after a
 * forwarded call that succeeded, with calls that succeed too: either way the last result the
 * application sees is its own. Calls the runtime makes into its own exports come back through
 * these wrappers; a thread-local depth sends them straight through.
 *
 * What every platform's shim shares is the core's (src/shim/core/core.h): the wrapper skeleton,
 * run-time lookups, which queue a stream handle means, stream registration, the depth, the
 * markers and the library's start, over HIP's implementation of the platform contract
 * (src/hal/hip/hip_platform.c).
 */

#include "core.h"
#include "xc_cost.h"
#include "hip_device.h"
#include "hip_platform.h"
#include "gpuprio.h"
#include "hip_compat_shim.h"
#include "hip_bind.h"
#include "hip_reserve.h"
#include "shim_hip_graph.h"
#include "scheduler.h"

#define GP_EXPORT __attribute__((visibility("default")))

/* ---- the entry points ---- */

/*
 * Every entry point: those of hip_api.def, then the functions the runtime exports under C++
 * names only (hip_ext.h's launches also have a C name, listed in hip_api.def;
 * hipLaunchKernelGGLImpl is ROCm 5's). C cannot spell these names, so their wrappers below use
 * asm labels. The index is also the entry point's part of cost keys.
 */
enum entry_index {
#define HIP_API(name, kind, stream, cost_key, params, args) API_##name,
#include "hip_api.def"
#undef HIP_API
    API_COUNT,
    CXX_EXT_MODULE_LAUNCH = API_COUNT,
    CXX_HCC_MODULE_LAUNCH,
    CXX_LAUNCH_KERNEL_GGL_IMPL,
    ENTRY_COUNT
};

static const char *const entry_names[ENTRY_COUNT] = {
#define HIP_API(name, kind, stream, cost_key, params, args) #name,
#include "hip_api.def"
#undef HIP_API
    [CXX_EXT_MODULE_LAUNCH] = HIP_EXT_MODULE_LAUNCH_KERNEL_CXX,
    [CXX_HCC_MODULE_LAUNCH] = HIP_HCC_MODULE_LAUNCH_KERNEL_CXX,
    [CXX_LAUNCH_KERNEL_GGL_IMPL] = HIP_LAUNCH_KERNEL_GGL_IMPL_CXX,
};

#define HIP_API(name, kind, stream, cost_key, params, args) typedef hipError_t(*pfn_##name) params;
#include "hip_api.def"
#undef HIP_API

static void *real[ENTRY_COUNT];
static hipError_t (*real_peek_at_last_error)(void);

static void resolve_more(void)
{
    real_peek_at_last_error = hiphal_sym("hipPeekAtLastError");
}

static void *real_fn(enum entry_index i)
{
    core_resolve();
    return real[i];
}

/* ---- stream creation ----
 *
 * A stream the application creates without choosing a priority (hipStreamCreate,
 * hipStreamCreateWithFlags, hipStreamCreateWithPriority with 0, HIP's normal) or a CU mask is
 * created as the priority gpuprio gives it asks (src/shim/core/creation.c):
 *   - below the highest priority the process was given, with GPUPRIO_CU_RESERVE set, confined to
 *     the CUs the reservation leaves (hip_reserve.c), through hipExtStreamCreateWithCUMask. That
 *     creator makes blocking streams of normal priority only, so only a blocking stream can be
 *     masked; a non-blocking one gets the hardware priority below instead;
 *   - otherwise with the matching hardware priority (hipStreamCreateWithPriority), which puts it
 *     on a hardware queue of that priority: the command processor dispatches from the most
 *     urgent queues first, across processes too.
 * The application sees both in hipStreamGetPriority and hipExtStreamGetCUMask; streams it created
 * with a priority or mask of its own keep them. docs/hip-coverage.md has the details.
 */
/* How a stream the application creates without a priority or mask of its own is created. */
struct creation {
    enum { AS_CALLED, MASKED, PRIORITIZED } how;
    int hw_priority;                            /* PRIORITIZED */
    uint32_t mask[HIPHAL_RESERVE_WORDS], words; /* MASKED */
};

static void creation_for(unsigned flags, struct creation *c)
{
    c->how = AS_CALLED;
    if (flags == hipStreamDefault && real_fn(API_hipExtStreamCreateWithCUMask) &&
        core_creation_priority() < sched_highest_priority() &&
        hiphal_reserve_mask(c->mask, &c->words)) {
        c->how = MASKED;
        core_creating.adjusted = core_creating.cu_reserved = true;
    } else if (real_fn(API_hipStreamCreateWithPriority) && core_hw_priority(&c->hw_priority))
        c->how = PRIORITIZED;
}

__attribute__((constructor)) static void reserve_forget_in_child(void)
{
    pthread_atfork(NULL, NULL, hiphal_reserve_forget_all); /* its lock may be held at fork */
}

/* Creates the stream as c says, unless it says AS_CALLED (then: 1). */
static int create_as(const struct creation *c, hipStream_t *stream, unsigned flags,
                     hipError_t *result)
{
    if (c->how == MASKED)
        *result = ((pfn_hipExtStreamCreateWithCUMask)real_fn(API_hipExtStreamCreateWithCUMask))(
            stream, c->words, c->mask);
    else if (c->how == PRIORITIZED)
        *result = ((pfn_hipStreamCreateWithPriority)real_fn(API_hipStreamCreateWithPriority))(
            stream, flags, c->hw_priority);
    return c->how == AS_CALLED;
}

/* The creators' forwarding, one per STREAM_CREATE entry of hip_api.def (core.h's
 * CORE_FORWARD). Called only when the real function exists. */
static hipError_t create_hipStreamCreate(hipStream_t *stream)
{
    struct creation c;
    hipError_t result = hipErrorUnknown;
    creation_for(hipStreamDefault, &c);
    if (create_as(&c, stream, hipStreamDefault, &result))
        result = ((pfn_hipStreamCreate)real_fn(API_hipStreamCreate))(stream);
    return result;
}

static hipError_t create_hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    struct creation c;
    hipError_t result = hipErrorUnknown;
    creation_for(flags, &c);
    if (create_as(&c, stream, flags, &result))
        result =
            ((pfn_hipStreamCreateWithFlags)real_fn(API_hipStreamCreateWithFlags))(stream, flags);
    return result;
}

static hipError_t create_hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags,
                                                     int priority)
{
    struct creation c = {.how = AS_CALLED};
    hipError_t result = hipErrorUnknown;
    if (priority == 0) /* HIP's normal: the application did not choose */
        creation_for(flags, &c);
    if (create_as(&c, stream, flags, &result))
        result = ((pfn_hipStreamCreateWithPriority)real_fn(API_hipStreamCreateWithPriority))(
            stream, flags, priority);
    return result;
}

static hipError_t create_hipExtStreamCreateWithCUMask(hipStream_t *stream, uint32_t cuMaskSize,
                                                      const uint32_t *cuMask)
{
    return ((pfn_hipExtStreamCreateWithCUMask)real_fn(API_hipExtStreamCreateWithCUMask))(
        stream, cuMaskSize, cuMask);
}

/* ---- the wrappers ---- */

/* The body of every wrapper: the core's skeleton, forwarding as the kind says (core.h). */
#define GP_WRAPPER_BODY(gp_real, name, kind, stream, entry, what, args, forward)                   \
    CORE_WRAPPER_BODY(hipError_t, hipErrorNotInitialized, hipSuccess, gp_real, name, kind, stream, \
                      entry, what, args, forward)

#define HIP_API(name, kind, stream, cost_key, params, args)                                        \
    GP_EXPORT hipError_t name params                                                               \
    {                                                                                              \
        pfn_##name gp_real = (pfn_##name)real_fn(API_##name);                                      \
        GP_WRAPPER_BODY(gp_real, #name, kind, stream, API_##name, cost_key, args,                  \
                        CORE_FORWARD(kind, name, gp_real, args))                                   \
    }
#include "hip_api.def"
#undef HIP_API

/* The C++-named functions (see enum entry_index above). */
#define EXT_MODULE_LAUNCH_PARAMS                                                                   \
    (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,            \
     uint32_t lz, size_t shared, hipStream_t stream, void **params, void **extra,                \
     hipEvent_t start, hipEvent_t stop
typedef hipError_t(*pfn_ext_module_launch) EXT_MODULE_LAUNCH_PARAMS, uint32_t flags);
typedef hipError_t(*pfn_hcc_module_launch) EXT_MODULE_LAUNCH_PARAMS);
typedef void (*pfn_launch_kernel_ggl_impl)(uintptr_t, const dim3 *, const dim3 *, uint32_t,
                                           hipStream_t, void **);

GP_EXPORT hipError_t ext_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS, uint32_t flags)
    __asm__(HIP_EXT_MODULE_LAUNCH_KERNEL_CXX);
GP_EXPORT hipError_t ext_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS, uint32_t flags)
{
    pfn_ext_module_launch gp_real = (pfn_ext_module_launch)real_fn(CXX_EXT_MODULE_LAUNCH);
#define GP_ARGS (f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, flags)
    GP_WRAPPER_BODY(gp_real, HIP_EXT_MODULE_LAUNCH_KERNEL_CXX, WORK, stream, CXX_EXT_MODULE_LAUNCH,
                    xc_launch_key(f, gx, gy, gz), GP_ARGS, gp_real GP_ARGS)
#undef GP_ARGS
}

GP_EXPORT hipError_t hcc_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS)
    __asm__(HIP_HCC_MODULE_LAUNCH_KERNEL_CXX);
GP_EXPORT hipError_t hcc_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS)
{
    pfn_hcc_module_launch gp_real = (pfn_hcc_module_launch)real_fn(CXX_HCC_MODULE_LAUNCH);
#define GP_ARGS (f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop)
    GP_WRAPPER_BODY(gp_real, HIP_HCC_MODULE_LAUNCH_KERNEL_CXX, WORK, stream, CXX_HCC_MODULE_LAUNCH,
                    xc_launch_key(f, gx, gy, gz), GP_ARGS, gp_real GP_ARGS)
#undef GP_ARGS
}

/*
 * Returns nothing, so whether the launch was accepted shows only in the thread's last error,
 * which hipPeekAtLastError reads without changing under ROCm 5, the only runtime that has
 * this function. An earlier sticky error makes a good launch look failed: it is then not
 * tracked, which only makes the shim more careful.
 */
GP_EXPORT void launch_kernel_ggl_impl_cxx(uintptr_t function, const dim3 *grid, const dim3 *block,
                                          uint32_t shared, hipStream_t stream,
                                          void **args) __asm__(HIP_LAUNCH_KERNEL_GGL_IMPL_CXX);
GP_EXPORT void launch_kernel_ggl_impl_cxx(uintptr_t function, const dim3 *grid, const dim3 *block,
                                          uint32_t shared, hipStream_t stream, void **args)
{
    pfn_launch_kernel_ggl_impl gp_real =
        (pfn_launch_kernel_ggl_impl)real_fn(CXX_LAUNCH_KERNEL_GGL_IMPL);
    if (!gp_real) {
        *(void **)&gp_real =
            gp_unbound_fn(HIP_LAUNCH_KERNEL_GGL_IMPL_CXX, __builtin_return_address(0));
        if (gp_real)
            gp_real(function, grid, block, shared, stream, args);
        return;
    }
    if (core_depth) {
        gp_real(function, grid, block, shared, stream, args);
        return;
    }
    struct core_call gp_call;
    core_call_begin(&gp_call, CORE_KIND_WORK, (void *)stream, CXX_LAUNCH_KERNEL_GGL_IMPL,
                    grid ? xc_launch_key((const void *)function, grid->x, grid->y, grid->z) : 0);
    core_depth++;
    gp_real(function, grid, block, shared, stream, args);
    hipError_t result = real_peek_at_last_error ? real_peek_at_last_error() : hipErrorUnknown;
    core_call_end(&gp_call, result == hipSuccess);
    core_depth--;
}

/* The runtime still exports deprecated entry points, so the shim wraps them too. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void *const wrappers[ENTRY_COUNT] = {
#define HIP_API(name, kind, stream, cost_key, params, args) (void *)name,
#include "hip_api.def"
#undef HIP_API
    [CXX_EXT_MODULE_LAUNCH] = (void *)ext_module_launch_cxx,
    [CXX_HCC_MODULE_LAUNCH] = (void *)hcc_module_launch_cxx,
    [CXX_LAUNCH_KERNEL_GGL_IMPL] = (void *)launch_kernel_ggl_impl_cxx,
};
#pragma GCC diagnostic pop

const struct core_shim core_shim = {
    .platform = &hiphal_platform,
    .entries = ENTRY_COUNT,
    .names = entry_names,
    .wrappers = wrappers,
    .real = real,
    .resolve_more = resolve_more,
};
