/*
 * shim_hip.c - the exported HIP entry points of libgpuprio-hip.so.
 *
 * Every wrapper is generated from hip_api.def and does the same three things: observe (find
 * the call's XQueue), forward the call to the application's own runtime on the calling thread
 * with the caller's arguments, and track its effect (count submitted work, register and forget
 * streams). Nothing is deferred, copied or re-issued (DESIGN.md, principle 1).
 *
 * The application's view of errors must not change. Under ROCm 6 every call sets the thread's
 * "last command error" (hipExtGetLastError) and every failing call the sticky last error. So the
 * shim calls the runtime itself only before forwarding, with calls that cannot fail, or after a
 * forwarded call that succeeded, with calls that succeed too: either way the last result the
 * application sees is its own. Calls the runtime makes into its own exports come back through
 * these wrappers; a thread-local depth sends them straight through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gp_log.h"
#include "gpuprio.h"
#include "hip_compat_shim.h"
#include "hip_bind.h"
#include "xqueue.h"

#define GP_EXPORT __attribute__((visibility("default")))

/* ---- the real functions ---- */

enum api_index {
#define HIP_API(name, kind, stream, params, args) API_##name,
#include "hip_api.def"
#undef HIP_API
    API_COUNT
};

static const char *const api_names[API_COUNT] = {
#define HIP_API(name, kind, stream, params, args) #name,
#include "hip_api.def"
#undef HIP_API
};

#define HIP_API(name, kind, stream, params, args) typedef hipError_t(*pfn_##name) params;
#include "hip_api.def"
#undef HIP_API

/* hip_ext.h's launch functions under their C++ names (see their wrappers below). */
typedef hipError_t (*pfn_ext_module_launch)(hipFunction_t, uint32_t, uint32_t, uint32_t,
                                            uint32_t, uint32_t, uint32_t, size_t, hipStream_t,
                                            void **, void **, hipEvent_t, hipEvent_t, uint32_t);
typedef hipError_t (*pfn_hcc_module_launch)(hipFunction_t, uint32_t, uint32_t, uint32_t,
                                            uint32_t, uint32_t, uint32_t, size_t, hipStream_t,
                                            void **, void **, hipEvent_t, hipEvent_t);

static void *real[API_COUNT];
static hipError_t (*real_get_device)(int *);
static pfn_ext_module_launch real_ext_module_launch_cxx;
static pfn_hcc_module_launch real_hcc_module_launch_cxx;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
static _Thread_local int shim_depth;

/*
 * Looks up every intercepted function in the bound runtime. Without one (no runtime, or two),
 * calls still go where they would have gone without gpuprio: the next definition in the
 * lookup order, so the application keeps working, unscheduled.
 */
static void resolve_all(void)
{
    bool bound = hiphal_bind() == 0;
    for (int i = 0; i < API_COUNT; i++)
        real[i] = bound ? hiphal_sym(api_names[i]) : dlsym(RTLD_NEXT, api_names[i]);
    real_get_device = bound ? hiphal_sym("hipGetDevice") : dlsym(RTLD_NEXT, "hipGetDevice");
    real_ext_module_launch_cxx = bound ? hiphal_sym(HIP_EXT_MODULE_LAUNCH_KERNEL_CXX)
                                       : dlsym(RTLD_NEXT, HIP_EXT_MODULE_LAUNCH_KERNEL_CXX);
    real_hcc_module_launch_cxx = bound ? hiphal_sym(HIP_HCC_MODULE_LAUNCH_KERNEL_CXX)
                                       : dlsym(RTLD_NEXT, HIP_HCC_MODULE_LAUNCH_KERNEL_CXX);
}

static void *real_fn(enum api_index i)
{
    pthread_once(&resolve_once, resolve_all);
    return real[i];
}

/* ---- which XQueue a call acts on ---- */

enum call_kind {
    KIND_WORK,
    KIND_WORK_SPT,
    KIND_SYNC,
    KIND_SYNC_SPT,
    KIND_DEVICE_SYNC,
    KIND_EVENT_SYNC,
    KIND_STREAM_CREATE,
    KIND_STREAM_DESTROY,
    KIND_CAPTURE,
    KIND_CAPTURE_SPT,
    KIND_LOOKUP,
    KIND_STREAM_INFO,
    KIND_STREAM_INFO_SPT,
};

static uint64_t thread_id(void)
{
    static _Thread_local uint64_t tid;
    if (!tid)
        tid = (uint64_t)syscall(SYS_gettid);
    return tid;
}

/* The device current on this thread, asked before forwarding (hipGetDevice cannot fail). */
static int current_device(void)
{
    int dev = 0;
    if (real_get_device)
        real_get_device(&dev);
    return dev;
}

/* The key of the stream a handle means on this thread (spt: 0 means the per-thread stream). */
static struct xq_key key_of(hipStream_t s, bool spt)
{
    if (s == hipStreamPerThread || (s == NULL && spt))
        return (struct xq_key){(uintptr_t)hipStreamPerThread, current_device(), thread_id()};
    if (s == NULL || s == hipStreamLegacy)
        return (struct xq_key){0, current_device(), 0};
    return (struct xq_key){(uintptr_t)s, -1, 0};
}

struct call {
    enum call_kind kind;
    void *stream; /* hipStream_t, or the hipStream_t * of a creator */
    struct xq_key key;
};

static void call_begin(struct call *c, enum call_kind kind, void *stream)
{
    c->kind = kind;
    c->stream = stream;
    if (kind == KIND_WORK || kind == KIND_WORK_SPT || kind == KIND_STREAM_DESTROY)
        c->key = key_of(stream, kind == KIND_WORK_SPT);
}

static void stream_created(hipStream_t s)
{
    unsigned flags = 0;
    int priority = 0, device = 0;
    /* After a successful creation, queries of the new stream succeed too. */
    pfn_hipStreamGetFlags get_flags = real_fn(API_hipStreamGetFlags);
    pfn_hipStreamGetPriority get_priority = real_fn(API_hipStreamGetPriority);
    pfn_hipStreamGetDevice get_device = real_fn(API_hipStreamGetDevice);
    if (get_flags)
        get_flags(s, &flags);
    if (get_priority)
        get_priority(s, &priority);
    if (get_device)
        get_device(s, &device);
    struct xq_key key = {(uintptr_t)s, -1, 0};
    if (!xq_create(&key, device, flags, priority))
        gp_log(GP_LOG_WARN, "out of memory: stream %p is not scheduled", (void *)s);
}

static void *const wrappers[API_COUNT];

/*
 * A proc-address lookup returned a real function: hand out the wrapper instead, so calls
 * through the pointer are seen too. The runtime already chose between the legacy and the
 * per-thread-default-stream form, so matching the pointer keeps the two apart.
 */
static void hand_out_wrapper(void *out)
{
    void **pfn = out;
    if (!pfn || !*pfn)
        return;
    for (int i = 0; i < API_COUNT; i++)
        if (real[i] == *pfn) {
            *pfn = wrappers[i];
            return;
        }
}

static void call_end(const struct call *c, hipError_t result)
{
    if (result != hipSuccess)
        return;
    switch (c->kind) {
    case KIND_WORK:
    case KIND_WORK_SPT: {
        struct xqueue *q = xq_get(&c->key);
        if (q)
            atomic_fetch_add_explicit(&q->submitted, 1, memory_order_relaxed);
        break;
    }
    case KIND_STREAM_CREATE:
        stream_created(*(hipStream_t *)c->stream);
        break;
    case KIND_STREAM_DESTROY:
        xq_destroy(&c->key);
        break;
    case KIND_LOOKUP:
        hand_out_wrapper(c->stream);
        break;
    default:
        break;
    }
}

/* ---- the wrappers ---- */

/*
 * The body of every wrapper: forward through gp_real (a function pointer, NULL when the runtime
 * lacks the function), observing and tracking around it. Locals carry a gp_ prefix because the
 * parameter lists of hip_api.def use names such as fn.
 */
#define GP_WRAPPER_BODY(gp_real, kind, stream, args)                                               \
    if (!gp_real)                                                                                  \
        return hipErrorNotInitialized;                                                             \
    if (shim_depth)                                                                                \
        return gp_real args;                                                                       \
    struct call gp_call;                                                                           \
    call_begin(&gp_call, KIND_##kind, (void *)(stream));                                           \
    shim_depth++;                                                                                  \
    hipError_t gp_result = gp_real args;                                                           \
    shim_depth--;                                                                                  \
    call_end(&gp_call, gp_result);                                                                 \
    return gp_result;

#define HIP_API(name, kind, stream, params, args)                                                  \
    GP_EXPORT hipError_t name params                                                               \
    {                                                                                              \
        pfn_##name gp_real = (pfn_##name)real_fn(API_##name);                                      \
        GP_WRAPPER_BODY(gp_real, kind, stream, args)                                               \
    }
#include "hip_api.def"
#undef HIP_API

/*
 * hip_ext.h's launch functions under their C++ names, which ROCm exports beside the C one
 * (hip_4.2; rocBLAS/Tensile and MIOpen call them). C cannot spell these names, hence asm labels.
 */
#define EXT_MODULE_LAUNCH_PARAMS                                                                   \
    (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,            \
     uint32_t lz, size_t shared, hipStream_t stream, void **params, void **extra,                \
     hipEvent_t start, hipEvent_t stop

GP_EXPORT hipError_t ext_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS, uint32_t flags)
    __asm__(HIP_EXT_MODULE_LAUNCH_KERNEL_CXX);
GP_EXPORT hipError_t ext_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS, uint32_t flags)
{
    pthread_once(&resolve_once, resolve_all);
    GP_WRAPPER_BODY(real_ext_module_launch_cxx, WORK, stream,
                    (f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, flags))
}

GP_EXPORT hipError_t hcc_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS)
    __asm__(HIP_HCC_MODULE_LAUNCH_KERNEL_CXX);
GP_EXPORT hipError_t hcc_module_launch_cxx EXT_MODULE_LAUNCH_PARAMS)
{
    pthread_once(&resolve_once, resolve_all);
    GP_WRAPPER_BODY(real_hcc_module_launch_cxx, WORK, stream,
                    (f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop))
}

/* The runtime still exports deprecated entry points, so the shim wraps them too. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void *const wrappers[API_COUNT] = {
#define HIP_API(name, kind, stream, params, args) (void *)name,
#include "hip_api.def"
#undef HIP_API
};
#pragma GCC diagnostic pop

/* ---- the public API ---- */

GP_EXPORT const char *gpuprio_version(void)
{
#define GP_STR2(x) #x
#define GP_STR(x) GP_STR2(x)
    return GP_STR(GPUPRIO_VERSION_MAJOR) "." GP_STR(GPUPRIO_VERSION_MINOR) "." GP_STR(
        GPUPRIO_VERSION_PATCH);
}

GP_EXPORT int gpuprio_stream_stats(void *stream, struct gpuprio_queue_stats *out)
{
    if (!out)
        return -EINVAL;
    pthread_once(&resolve_once, resolve_all);
    if (hiphal_bind() != 0)
        return -ENOENT;
    hipStream_t s = stream;
    struct xq_key key = key_of(s, false);
    /* The special handles always name a stream; a created one must be known. */
    struct xqueue *q = key.device >= 0 ? xq_get(&key) : xq_find(&key);
    if (!q)
        return -ENOENT;
    out->submitted = atomic_load_explicit(&q->submitted, memory_order_relaxed);
    out->device = q->device;
    out->flags = q->flags;
    out->stream_priority = q->stream_priority;
    return 0;
}

GP_EXPORT int gpuprio_runtime_path(char *buf, size_t size)
{
    if (!buf || !size)
        return -EINVAL;
    const struct hiphal_binding *b = hiphal_binding();
    if (!b)
        return -ENOENT;
    if (strlen(b->path) >= size)
        return -ERANGE;
    strcpy(buf, b->path);
    return 0;
}

/* ---- lifecycle: constructors only read configuration ---- */

static void after_fork_child(void)
{
    xq_reset();
}

__attribute__((constructor)) static void shim_load(void)
{
    gp_log_configure();
    pthread_atfork(NULL, NULL, after_fork_child);
}
