/*
 * hip_platform.c - HIP's implementation of the platform contract (src/shim/core/platform.h):
 * the runtime's binding (hip_bind.c), the current device, stream properties, markers
 * (hip_marker.c), device identity (hip_device.c), gates (hip_gate.c) and what hipDeviceReset
 * destroys.
 *
 * Under ROCm 6 every call sets the thread's "last command error" (hipExtGetLastError), so the
 * queries here are made only where they cannot fail, or cannot fail in a way the application
 * would see: hipGetDevice and the priority range before forwarding (the application's own call
 * sets the error after it), stream properties right after the stream was created.
 */
#include "hip_platform.h"

#include <errno.h>
#include <pthread.h>

#include "hip_bind.h"
#include "hip_compat.h"
#include "hip_device.h"
#include "hip_gemm_clock.h"
#include "hip_gate.h"
#include "hip_graph_gate.h"
#include "hip_marker.h"
#include "hip_reserve.h"
#include "xqueue.h"

static struct {
    hipError_t (*get_device)(int *);
    hipError_t (*stream_get_flags)(hipStream_t, unsigned *);
    hipError_t (*stream_get_priority)(hipStream_t, int *);
    hipError_t (*stream_get_device)(hipStream_t, hipDevice_t *);
    hipError_t (*priority_range)(int *, int *);
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&rt.get_device = hiphal_sym("hipGetDevice");
    *(void **)&rt.stream_get_flags = hiphal_sym("hipStreamGetFlags");
    *(void **)&rt.stream_get_priority = hiphal_sym("hipStreamGetPriority");
    *(void **)&rt.stream_get_device = hiphal_sym("hipStreamGetDevice");
    *(void **)&rt.priority_range = hiphal_sym("hipDeviceGetStreamPriorityRange");
}

/* hipGetDevice fails only where the application's own call will fail too (no device). */
static int current_device(void)
{
    pthread_once(&rt_once, resolve);
    int device = 0;
    if (!rt.get_device || rt.get_device(&device) != hipSuccess)
        return -ENODEV;
    return device;
}

static void stream_props(uintptr_t stream, struct xq_stream_props *out)
{
    pthread_once(&rt_once, resolve);
    hipStream_t s = (hipStream_t)stream;
    hipDevice_t device = 0;
    *out = (struct xq_stream_props){0};
    if (rt.stream_get_flags)
        rt.stream_get_flags(s, &out->flags);
    if (rt.stream_get_priority)
        rt.stream_get_priority(s, &out->priority);
    if (rt.stream_get_device && rt.stream_get_device(s, &device) == hipSuccess)
        out->device = device;
    hiphal_stream_cus(s, out->device, &out->cus);
}

/* Never fails in ROCm (the range is the runtime's, not the device's). */
static int priority_range(int *least, int *greatest)
{
    pthread_once(&rt_once, resolve);
    if (!rt.priority_range || rt.priority_range(least, greatest) != hipSuccess)
        return -ENOTSUP;
    return 0;
}

/* Events belong to a device, so the pools are per device: the queue's. */
static void *marker_record(const struct xqueue *q)
{
    return hiphal_marker_record(q->key.handle, q->device);
}

/* Only on a stream the application created: the null and per-thread handles name another stream
 * on gpuprio's thread. */
static void *marker_record_behind_refused(const struct xqueue *q)
{
    if (q->key.device >= 0 || q->key.tid)
        return NULL;
    return hiphal_marker_record_elsewhere(q->key.handle, q->device);
}

static void marker_release(const struct xqueue *q, void *marker)
{
    hiphal_marker_release(q->device, marker);
}

static int stream_idle(const struct xqueue *q)
{
    return hiphal_stream_idle(q->key.handle);
}

/*
 * hipDeviceReset (the one teardown HIP's list has: DEVICE_RESET of the current device) destroys
 * every stream, event and host registration of the device. ROCm's hipCtx* and
 * hipDevicePrimaryCtx* calls are deprecated, and its hipDevicePrimaryCtxReset does nothing
 * (docs/hip-coverage.md), so they are not teardowns here.
 */
static int teardown_scope(enum gp_teardown_kind kind, uintptr_t arg, struct gp_teardown *t)
{
    (void)kind;
    int device = (int)(intptr_t)arg;
    if (device < 0 && (device = current_device()) < 0)
        return -ENODEV;
    *t = (struct gp_teardown){.device = device};
    return 0;
}

static bool teardown_stream(uintptr_t stream, int device, const struct gp_teardown *t)
{
    (void)stream;
    return device == t->device;
}

static bool teardown_done(struct gp_teardown *t, bool ok)
{
    if (ok) {
        hiphal_marker_forget(t->device);
        hiphal_gemm_clock_forget(t->device);
    }
    return ok;
}

/* Every marker of the device died with it: dropped. */
static void teardown_marker(const struct xqueue *q, void *marker, const struct gp_teardown *t)
{
    (void)q;
    (void)marker;
    (void)t;
}

const struct gp_platform hiphal_platform = {
    .name = "HIP",
    .success = hipSuccess,
    .bind = hiphal_bind,
    .binding = hiphal_binding,
    .sym = hiphal_sym,
    .current_device = current_device,
    .streams = {.null = 0,
                .legacy = (uintptr_t)hipStreamLegacy,
                .per_thread = (uintptr_t)hipStreamPerThread,
                .per_thread_takes_legacy = true},
    .special_cu_mask = XQ_CU_UNMASKABLE,
    .stream_props = stream_props,
    .priority_range = priority_range,
    .markers = {.record = marker_record,
                .record_behind_refused = marker_record_behind_refused,
                .query = hiphal_marker_query,
                .release = marker_release,
                .stream_idle = stream_idle},
    .markers_after_fork = hiphal_marker_reset,
    .device_key = hiphal_device_key,
    .gates_prepare = hiphal_gates_prepare,
    .gate_wait = hiphal_gate_wait,
    .teardown_scope = teardown_scope,
    .teardown_stream = teardown_stream,
    .teardown_done = teardown_done,
    .teardown_marker = teardown_marker,
    .graph = &hiphal_graph_ops,
};
