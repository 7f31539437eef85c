/*
 * hip_marker.c - completion markers for HIP: an event (timing disabled, the cheapest kind)
 * recorded behind a command, queried by the watcher.
 *
 * These calls run on the application's thread, so they must leave its error state as it was
 * (docs/design.md, "Transparency"). They are made only right after the runtime accepted a command
 * on the same stream: then creating an event on the stream's device, switching to that device and
 * back, and recording on the stream all succeed, and a successful call leaves what the
 * application's own successful call left. Events are pooled per device and reused, so the
 * launch path creates none once warmed up; hipDeviceReset destroys a device's events, and its
 * pool is then forgotten without a call (hiphal_marker_forget).
 *
 * The watcher's thread queries in relaxed stream capture mode, where the runtime has it, for the
 * reason hal/cuda/cuda_marker.c gives: a capture begun in global mode on another thread must
 * never be broken by a query of gpuprio's.
 */
#include "hip_marker.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "hip_bind.h"
#include "hip_device.h"
#include "gp_lockrank.h"
#include "hip_compat.h"

#define MAX_DEVICES 64

static struct pool {
    pthread_mutex_t mu;
    hipEvent_t *free;
    size_t n, cap;
} pools[MAX_DEVICES] = {[0 ... MAX_DEVICES - 1] = {.mu = PTHREAD_MUTEX_INITIALIZER}};

static struct {
    hipError_t (*create)(hipEvent_t *, unsigned);
    hipError_t (*record)(hipEvent_t, hipStream_t);
    hipError_t (*query)(hipEvent_t);
    hipError_t (*stream_query)(hipStream_t);
    hipError_t (*get_device)(int *);
    hipError_t (*set_device)(int);
    hipError_t (*exchange_capture_mode)(hipStreamCaptureMode *); /* optional */
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    rt.create = (hipError_t(*)(hipEvent_t *, unsigned))hiphal_sym("hipEventCreateWithFlags");
    rt.record = (hipError_t(*)(hipEvent_t, hipStream_t))hiphal_sym("hipEventRecord");
    rt.query = (hipError_t(*)(hipEvent_t))hiphal_sym("hipEventQuery");
    rt.stream_query = (hipError_t(*)(hipStream_t))hiphal_sym("hipStreamQuery");
    rt.get_device = (hipError_t(*)(int *))hiphal_sym("hipGetDevice");
    rt.set_device = (hipError_t(*)(int))hiphal_sym("hipSetDevice");
    rt.exchange_capture_mode =
        (hipError_t(*)(hipStreamCaptureMode *))hiphal_sym("hipThreadExchangeStreamCaptureMode");
}

static hipEvent_t pool_take(int device)
{
    struct pool *p = &pools[device];
    hipEvent_t e = NULL;
    gp_mutex_lock(&p->mu, GP_RANK_MARKER_POOL);
    if (p->n)
        e = p->free[--p->n];
    gp_mutex_unlock(&p->mu, GP_RANK_MARKER_POOL);
    return e;
}

/* A new event on device: created with device current, as events belong to a device. */
static hipEvent_t create_on(int device)
{
    int current = device;
    if (rt.get_device(&current) != hipSuccess)
        return NULL;
    if (current != device && rt.set_device(device) != hipSuccess)
        return NULL;
    hipEvent_t e = NULL;
    if (rt.create(&e, hipEventDisableTiming) != hipSuccess)
        e = NULL;
    if (current != device)
        rt.set_device(current);
    return e;
}

void *hiphal_marker_record(uintptr_t stream, int device)
{
    pthread_once(&rt_once, resolve);
    if (device < 0 || device >= MAX_DEVICES || !rt.create || !rt.record || !rt.query ||
        !rt.get_device || !rt.set_device)
        return NULL;
    hipEvent_t e = pool_take(device);
    if (!e && !(e = create_on(device)))
        return NULL;
    if (rt.record(e, (hipStream_t)stream) != hipSuccess) {
        hiphal_marker_release(device, e);
        return NULL;
    }
    return e;
}

struct record_job {
    uintptr_t stream;
    int device;
    void *marker;
};

static void record_on_own_thread(void *arg)
{
    struct record_job *job = arg;
    job->marker = hiphal_marker_record(job->stream, job->device);
}

void *hiphal_marker_record_elsewhere(uintptr_t stream, int device)
{
    struct record_job job = {stream, device, NULL};
    return hiphal_on_own_thread(record_on_own_thread, &job) == 0 ? job.marker : NULL;
}

/* The watcher's thread queries in relaxed capture mode (the top of the file). */
static void relax(void)
{
    static _Thread_local bool relaxed;
    if (!relaxed && rt.exchange_capture_mode) {
        hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
        rt.exchange_capture_mode(&mode);
        relaxed = true;
    }
}

/* As the marker contract has it: any other answer means it will never be reached. */
static int answer(hipError_t r)
{
    return r == hipSuccess ? 1 : r == hipErrorNotReady ? 0 : -EIO;
}

int hiphal_marker_query(void *marker)
{
    relax();
    return answer(rt.query((hipEvent_t)marker));
}

/* On the watcher's thread, whose last error only gpuprio sees. */
int hiphal_stream_idle(uintptr_t stream)
{
    pthread_once(&rt_once, resolve);
    if (!rt.stream_query)
        return -ENOTSUP;
    relax();
    return answer(rt.stream_query((hipStream_t)stream));
}

void hiphal_marker_release(int device, void *marker)
{
    struct pool *p = &pools[device];
    gp_mutex_lock(&p->mu, GP_RANK_MARKER_POOL);
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        hipEvent_t *f = realloc(p->free, cap * sizeof *f);
        if (f) {
            p->free = f;
            p->cap = cap;
        }
    }
    if (p->n < p->cap)
        p->free[p->n++] = (hipEvent_t)marker;
    /* else: out of memory, the event is leaked rather than destroyed from a hot path */
    gp_mutex_unlock(&p->mu, GP_RANK_MARKER_POOL);
}

void hiphal_marker_forget(int device)
{
    if (device < 0 || device >= MAX_DEVICES)
        return;
    struct pool *p = &pools[device];
    gp_mutex_lock(&p->mu, GP_RANK_MARKER_POOL);
    p->n = 0; /* the reset destroyed them: dropped, never destroyed (their handles are dead) */
    gp_mutex_unlock(&p->mu, GP_RANK_MARKER_POOL);
}

void hiphal_marker_reset(void)
{
    for (int i = 0; i < MAX_DEVICES; i++) {
        pthread_mutex_init(&pools[i].mu, NULL);
        pools[i].free = NULL; /* abandoned: the parent's events */
        pools[i].n = pools[i].cap = 0;
    }
}
