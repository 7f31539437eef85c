/*
 * cuda_platform.c - CUDA's implementation of the platform contract (src/shim/core/platform.h):
 * the driver's binding (cuda_bind.c), the current device, stream properties, markers
 * (cuda_marker.c), device identity (cuda_device.c), gates (cuda_gate.c) and MPS (cuda_mps.c).
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
#include "cuda_gate.h"
#include "cuda_marker.h"
#include "cuda_mps.h"
#include "xqueue.h"

static struct {
    CUresult (*ctx_get_device)(CUdevice *);
    CUresult (*stream_get_flags)(CUstream, unsigned int *);
    CUresult (*stream_get_priority)(CUstream, int *);
    CUresult (*stream_get_device)(CUstream, CUdevice *); /* CUDA 12.8 and later */
    CUresult (*priority_range)(int *, int *);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&drv.ctx_get_device = cudahal_sym("cuCtxGetDevice");
    *(void **)&drv.stream_get_flags = cudahal_sym("cuStreamGetFlags");
    *(void **)&drv.stream_get_priority = cudahal_sym("cuStreamGetPriority");
    *(void **)&drv.stream_get_device = cudahal_sym("cuStreamGetDevice");
    *(void **)&drv.priority_range = cudahal_sym("cuCtxGetStreamPriorityRange");
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

static void marker_release(const struct xqueue *q, void *marker)
{
    (void)q;
    cudahal_marker_release(marker);
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
                .query = cudahal_marker_query,
                .release = marker_release,
                .stream_idle = stream_idle},
    .markers_after_fork = cudahal_marker_reset,
    .device_key = cudahal_device_key,
    .gates_prepare = cudahal_gates_prepare,
    .gate_wait = cudahal_gate_wait,
    .before_runtime = cudahal_mps_before_runtime,
    .mps = cudahal_mps,
};
