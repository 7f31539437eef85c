/*
 * cuda_platform.c - CUDA's implementation of the platform contract (src/shim/core/platform.h):
 * the driver's binding (cuda_bind.c), the current device, stream properties, markers
 * (cuda_marker.c), device identity (cuda_device.c), gates (cuda_gate.c), MPS (cuda_mps.c), gates
 * inside graphs (cuda_graph_gate.c) and what a context's destruction destroys.
 *
 * The driver API keeps no per-thread "last error", so these queries cannot change what the
 * application observes; none of them changes the thread's current context either.
 */
#include "cuda_platform.h"

#include <errno.h>
#include <pthread.h>

#include "cuda_bind.h"
#include "cuda_compat.h"
#include "cuda_device.h"
#include "cuda_gemm_clock.h"
#include "cuda_gate.h"
#include "cuda_graph_gate.h"
#include "cuda_marker.h"
#include "cuda_mps.h"
#include "xqueue.h"

static struct {
    CUresult (*ctx_get_device)(CUdevice *);
    CUresult (*stream_get_flags)(CUstream, unsigned int *);
    CUresult (*stream_get_priority)(CUstream, int *);
    CUresult (*stream_get_device)(CUstream, CUdevice *); /* CUDA 12.8 and later */
    CUresult (*priority_range)(int *, int *);
    CUresult (*primary_state)(CUdevice, unsigned int *, int *);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*primary_release)(CUdevice);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*stream_get_ctx)(CUstream, CUcontext *);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&drv.ctx_get_device = cudahal_sym("cuCtxGetDevice");
    *(void **)&drv.stream_get_flags = cudahal_sym("cuStreamGetFlags");
    *(void **)&drv.stream_get_priority = cudahal_sym("cuStreamGetPriority");
    *(void **)&drv.stream_get_device = cudahal_sym("cuStreamGetDevice");
    *(void **)&drv.priority_range = cudahal_sym("cuCtxGetStreamPriorityRange");
    *(void **)&drv.primary_state = cudahal_sym("cuDevicePrimaryCtxGetState");
    *(void **)&drv.primary_retain = cudahal_sym("cuDevicePrimaryCtxRetain");
    *(void **)&drv.primary_release = cudahal_sym("cuDevicePrimaryCtxRelease_v2");
    if (!drv.primary_release)
        *(void **)&drv.primary_release = cudahal_sym("cuDevicePrimaryCtxRelease");
    *(void **)&drv.ctx_push = cudahal_sym("cuCtxPushCurrent_v2");
    *(void **)&drv.ctx_pop = cudahal_sym("cuCtxPopCurrent_v2");
    *(void **)&drv.stream_get_ctx = cudahal_sym("cuStreamGetCtx");
}

/* The device of the current context: none without a context, or before cuInit. */
static int current_device(void)
{
    pthread_once(&drv_once, resolve);
    CUdevice device = -1;
    if (!drv.ctx_get_device || drv.ctx_get_device(&device) != CUDA_SUCCESS || device < 0)
        return -ENODEV;
    return (int)device;
}

static void stream_props(uintptr_t stream, struct xq_stream_props *out)
{
    pthread_once(&drv_once, resolve);
    CUstream s = (CUstream)stream;
    CUdevice device = 0;
    *out = (struct xq_stream_props){0};
    if (drv.stream_get_flags)
        drv.stream_get_flags(s, &out->flags);
    if (drv.stream_get_priority)
        drv.stream_get_priority(s, &out->priority);
    /* Creators make the stream in the current context (a green context's stream: in its
     * device), so the current device is the answer where the driver cannot say. */
    if (drv.stream_get_device && drv.stream_get_device(s, &device) == CUDA_SUCCESS) {
        out->device = (int)device;
    } else {
        int current = current_device();
        out->device = current < 0 ? 0 : current;
    }
}

/* The current context's range; without one the creator fails too. */
static int priority_range(int *least, int *greatest)
{
    pthread_once(&drv_once, resolve);
    if (!drv.priority_range || drv.priority_range(least, greatest) != CUDA_SUCCESS)
        return -ENOTSUP;
    return 0;
}

static int stream_idle(const struct xqueue *q)
{
    return cudahal_stream_idle(q->key.handle);
}

/* The marker's context is the stream's, found by cuda_marker.c: the queue's handle is enough. */
static void *marker_record(const struct xqueue *q)
{
    return cudahal_marker_record(q->key.handle);
}

/* The driver API keeps no per-thread error state, so the caller's thread serves; only on a
 * stream the application created, as on HIP: a marker on the legacy stream would synchronize
 * with every blocking stream where the refused command did not. */
static void *marker_record_behind_refused(const struct xqueue *q)
{
    if (q->key.device >= 0 || q->key.tid)
        return NULL;
    return cudahal_marker_record(q->key.handle);
}

static void marker_release(const struct xqueue *q, void *marker)
{
    (void)q;
    cudahal_marker_release(marker);
}

/* ---- teardowns (src/shim/core/teardown.c) ---- */

/* Whether dev's primary context is active (retained, or not reset since). */
static bool primary_active(CUdevice dev)
{
    unsigned flags = 0;
    int active = 0;
    return drv.primary_state && drv.primary_state(dev, &flags, &active) == CUDA_SUCCESS && active;
}

/*
 * The context a reset or release of dev's primary context concerns: its handle, found by
 * retaining it and releasing it again, only while it is active (so neither creates nor destroys
 * anything). A cuCtxDestroy's: the handle, and its device, read with it pushed and popped again.
 */
static int teardown_scope(enum gp_teardown_kind kind, uintptr_t arg, struct gp_teardown *t)
{
    pthread_once(&drv_once, resolve);
    if (kind == GP_TEARDOWN_DESTROY) {
        CUcontext ctx = (CUcontext)arg, popped;
        CUdevice device = -1;
        if (!ctx || !drv.ctx_push || !drv.ctx_pop || !drv.ctx_get_device ||
            drv.ctx_push(ctx) != CUDA_SUCCESS)
            return -ENOENT;
        CUresult r = drv.ctx_get_device(&device);
        drv.ctx_pop(&popped);
        if (r != CUDA_SUCCESS || device < 0)
            return -ENOENT;
        *t = (struct gp_teardown){.device = (int)device, .context = arg};
        return 0;
    }
    CUdevice dev = (CUdevice)(intptr_t)arg;
    CUcontext ctx = NULL;
    if (dev < 0 || !drv.primary_retain || !drv.primary_release || !primary_active(dev) ||
        drv.primary_retain(&ctx, dev) != CUDA_SUCCESS)
        return -ENOENT;
    drv.primary_release(dev);
    *t = (struct gp_teardown){
        .device = (int)dev, .context = (uintptr_t)ctx, .may_survive = kind == GP_TEARDOWN_RELEASE};
    return 0;
}

/* A stream of the device dies with the context it was created in; where the driver cannot say
 * which that is, it is taken for dying (its queue is then forgotten: never a query on a dead
 * stream). */
static bool teardown_stream(uintptr_t stream, int device, const struct gp_teardown *t)
{
    CUcontext ctx = NULL;
    if (device != t->device)
        return false;
    if (!drv.stream_get_ctx || drv.stream_get_ctx((CUstream)stream, &ctx) != CUDA_SUCCESS)
        return true;
    return (uintptr_t)ctx == t->context;
}

/* A release destroys the primary context only when it was the last: then it is no longer
 * active. */
static bool teardown_done(struct gp_teardown *t, bool ok)
{
    if (!ok || (t->may_survive && primary_active((CUdevice)t->device)))
        return false;
    cudahal_marker_forget(t->context);
    cudahal_gemm_clock_forget(t->context);
    return true;
}

static void teardown_marker(const struct xqueue *q, void *marker, const struct gp_teardown *t)
{
    (void)q;
    cudahal_marker_drop(marker, t->context);
}

const struct gp_platform cudahal_platform = {
    .name = "CUDA",
    .success = CUDA_SUCCESS,
    .bind = cudahal_bind,
    .binding = cudahal_binding,
    .sym = cudahal_sym,
    .current_device = current_device,
    .streams = {.null = 0,
                .legacy = (uintptr_t)CU_STREAM_LEGACY,
                .per_thread = (uintptr_t)CU_STREAM_PER_THREAD},
    .stream_props = stream_props,
    .priority_range = priority_range,
    .markers = {.record = marker_record,
                .record_behind_refused = marker_record_behind_refused,
                .query = cudahal_marker_query,
                .release = marker_release,
                .stream_idle = stream_idle},
    .markers_after_fork = cudahal_marker_reset,
    .device_key = cudahal_device_key,
    .gates_prepare = cudahal_gates_prepare,
    .gate_wait = cudahal_gate_wait,
    .teardown_scope = teardown_scope,
    .teardown_stream = teardown_stream,
    .teardown_done = teardown_done,
    .teardown_marker = teardown_marker,
    .before_runtime = cudahal_mps_before_runtime,
    .mps = cudahal_mps,
    .graph = &cudahal_graph_ops,
};
