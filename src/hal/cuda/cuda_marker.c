/*
 * cuda_marker.c - completion markers for CUDA: an event (timing disabled, the cheapest kind)
 * recorded behind a command, queried by the watcher thread.
 *
 * The driver API has no per-thread "last error" that a call of ours could change, so these
 * calls cannot alter what the application observes, as long as the thread's current context is
 * left as it was. An event belongs to the context current when it is created, and it can only
 * be recorded on a stream of the same context; so a marker is created and recorded with the
 * stream's context current (cuStreamGetCtx), pushed and popped only when it differs from the
 * caller's current one. Events are pooled per context and reused, so the launch path creates
 * none once warmed up; a context's pool is found by its handle, and an event whose record fails
 * is destroyed rather than pooled again. When a context is destroyed (cuCtxDestroy, a primary
 * context's reset or last release: src/shim/core/teardown.c), its pool and its markers in flight
 * are forgotten without a call (their events died with it, and the next context may get the same
 * handle).
 *
 * cuEventQuery is documented without any context requirement (it takes the event alone), so
 * the watcher queries from its own thread, which has no current context. Should a driver answer
 * CUDA_ERROR_INVALID_CONTEXT anyway, the watcher makes the marker's context current on its own
 * thread and asks again: tests/gpu/procaddress_probe.c reports what the real driver does.
 *
 * The watcher's thread puts itself in relaxed stream capture mode before its first query. In
 * the default (global) mode, while any thread of the process captures in global mode (PyTorch's
 * default for CUDA graphs), a "potentially unsafe" call from any other thread is prohibited and
 * invalidates that capture. The shim does not query while it knows of a capture, but a capture
 * can begin between its check and its query; in relaxed mode the query is never prohibited.
 */
#include "cuda_marker.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cuda_bind.h"
#include "gp_lockrank.h"
#include "cuda_compat.h"

#define MAX_CONTEXTS 64

struct marker {
    CUevent event;
    CUcontext ctx;
    struct marker *next; /* in its pool's free list */
};

static struct pool {
    _Atomic(uintptr_t) ctx; /* 0: unused */
    pthread_mutex_t mu;
    struct marker *free;
} pools[MAX_CONTEXTS] = {[0 ... MAX_CONTEXTS - 1] = {.mu = PTHREAD_MUTEX_INITIALIZER}};

static struct {
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_query)(CUevent);
    CUresult (*stream_query)(CUstream); /* optional */
    CUresult (*event_destroy)(CUevent);
    CUresult (*exchange_capture_mode)(CUstreamCaptureMode *); /* optional */
    CUresult (*stream_get_ctx)(CUstream, CUcontext *);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static bool drv_ok;

/* Legacy (unsuffixed) names where the handle decides: 0 means the legacy null stream, as the
 * shim keys it. */
static void resolve(void)
{
    *(void **)&drv.event_create = cudahal_sym("cuEventCreate");
    *(void **)&drv.event_record = cudahal_sym("cuEventRecord");
    *(void **)&drv.event_query = cudahal_sym("cuEventQuery");
    *(void **)&drv.stream_query = cudahal_sym("cuStreamQuery");
    *(void **)&drv.event_destroy = cudahal_sym("cuEventDestroy_v2");
    *(void **)&drv.exchange_capture_mode = cudahal_sym("cuThreadExchangeStreamCaptureMode");
    *(void **)&drv.stream_get_ctx = cudahal_sym("cuStreamGetCtx");
    *(void **)&drv.ctx_get_current = cudahal_sym("cuCtxGetCurrent");
    *(void **)&drv.ctx_set_current = cudahal_sym("cuCtxSetCurrent");
    *(void **)&drv.ctx_push = cudahal_sym("cuCtxPushCurrent_v2");
    *(void **)&drv.ctx_pop = cudahal_sym("cuCtxPopCurrent_v2");
    drv_ok = drv.event_create && drv.event_record && drv.event_query && drv.event_destroy &&
             drv.stream_get_ctx && drv.ctx_get_current && drv.ctx_set_current && drv.ctx_push &&
             drv.ctx_pop;
}

/* ctx's pool, claimed on first use; NULL once MAX_CONTEXTS contexts have one. */
static struct pool *pool_of(CUcontext ctx)
{
    uintptr_t want = (uintptr_t)ctx;
    for (int i = 0; i < MAX_CONTEXTS; i++) {
        uintptr_t have = atomic_load(&pools[i].ctx);
        if (have == want)
            return &pools[i];
        if (have == 0) {
            if (atomic_compare_exchange_strong(&pools[i].ctx, &have, want) || have == want)
                return &pools[i];
        }
    }
    return NULL;
}

static struct marker *pool_take(CUcontext ctx)
{
    struct pool *p = pool_of(ctx);
    struct marker *m = NULL;
    if (!p)
        return NULL;
    gp_mutex_lock(&p->mu, GP_RANK_MARKER_POOL);
    if ((m = p->free))
        p->free = m->next;
    gp_mutex_unlock(&p->mu, GP_RANK_MARKER_POOL);
    return m;
}

/* A new marker, created with ctx current. */
static struct marker *marker_new(CUcontext ctx)
{
    struct marker *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    if (drv.event_create(&m->event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
        free(m);
        return NULL;
    }
    m->ctx = ctx;
    m->next = NULL;
    return m;
}

static void marker_discard(struct marker *m)
{
    drv.event_destroy(m->event);
    free(m);
}

void *cudahal_marker_record(uintptr_t stream)
{
    pthread_once(&drv_once, resolve);
    if (!drv_ok)
        return NULL;
    CUcontext current = NULL, ctx;
    if (drv.ctx_get_current(&current) != CUDA_SUCCESS)
        return NULL;
    ctx = current;
    /* The null, legacy and per-thread handles are the current context's streams. */
    bool special = stream == 0 || stream == (uintptr_t)CU_STREAM_LEGACY ||
                   stream == (uintptr_t)CU_STREAM_PER_THREAD;
    if (!special && drv.stream_get_ctx((CUstream)stream, &ctx) != CUDA_SUCCESS)
        return NULL;
    if (!ctx)
        return NULL;
    bool switched = ctx != current;
    if (switched && drv.ctx_push(ctx) != CUDA_SUCCESS)
        return NULL;
    struct marker *m = pool_take(ctx);
    if (!m)
        m = marker_new(ctx);
    if (m && drv.event_record(m->event, (CUstream)stream) != CUDA_SUCCESS) {
        marker_discard(m);
        m = NULL;
    }
    if (switched) {
        CUcontext popped;
        drv.ctx_pop(&popped);
    }
    return m;
}

/* The watcher's thread queries in relaxed capture mode (the top of the file). */
static void relax(void)
{
    static _Thread_local bool relaxed;
    if (!relaxed && drv.exchange_capture_mode) {
        CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
        drv.exchange_capture_mode(&mode);
        relaxed = true;
    }
}

/* As the marker contract has it: any other answer means it will never be reached. */
static int answer(CUresult r)
{
    return r == CUDA_SUCCESS ? 1 : r == CUDA_ERROR_NOT_READY ? 0 : -EIO;
}

int cudahal_marker_query(void *marker)
{
    relax();
    struct marker *m = marker;
    CUresult r = drv.event_query(m->event);
    if (r == CUDA_ERROR_INVALID_CONTEXT && drv.ctx_set_current(m->ctx) == CUDA_SUCCESS)
        r = drv.event_query(m->event); /* the watcher's own thread: its context is ours to set */
    return answer(r);
}

/* As the marker query: the stream's context is made current on the watcher's thread should the
 * driver want one. */
int cudahal_stream_idle(uintptr_t stream)
{
    pthread_once(&drv_once, resolve);
    if (!drv_ok || !drv.stream_query)
        return -ENOTSUP;
    relax();
    CUresult r = drv.stream_query((CUstream)stream);
    CUcontext ctx;
    if (r == CUDA_ERROR_INVALID_CONTEXT &&
        drv.stream_get_ctx((CUstream)stream, &ctx) == CUDA_SUCCESS &&
        drv.ctx_set_current(ctx) == CUDA_SUCCESS)
        r = drv.stream_query((CUstream)stream);
    return answer(r);
}

void cudahal_marker_release(void *marker)
{
    struct marker *m = marker;
    struct pool *p = pool_of(m->ctx);
    if (!p) {
        marker_discard(m);
        return;
    }
    gp_mutex_lock(&p->mu, GP_RANK_MARKER_POOL);
    m->next = p->free;
    p->free = m;
    gp_mutex_unlock(&p->mu, GP_RANK_MARKER_POOL);
}

void cudahal_marker_forget(uintptr_t ctx)
{
    for (int i = 0; i < MAX_CONTEXTS; i++) {
        struct pool *p = &pools[i];
        if (atomic_load(&p->ctx) != ctx)
            continue;
        gp_mutex_lock(&p->mu, GP_RANK_MARKER_POOL);
        struct marker *m = p->free;
        p->free = NULL;
        atomic_store(&p->ctx, 0); /* a context created next may get the same handle */
        gp_mutex_unlock(&p->mu, GP_RANK_MARKER_POOL);
        while (m) {
            struct marker *next = m->next;
            free(m); /* its event died with the context: never destroyed */
            m = next;
        }
    }
}

void cudahal_marker_drop(void *marker, uintptr_t ctx)
{
    struct marker *m = marker;
    if ((uintptr_t)m->ctx == ctx)
        free(m);
    else
        cudahal_marker_release(m);
}

void cudahal_marker_reset(void)
{
    for (int i = 0; i < MAX_CONTEXTS; i++) {
        pthread_mutex_init(&pools[i].mu, NULL);
        atomic_store(&pools[i].ctx, 0);
        pools[i].free = NULL; /* abandoned: the parent's events */
    }
}
