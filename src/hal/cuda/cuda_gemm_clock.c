/*
 * cuda_gemm_clock.c - learned GPU time of GEMM calls (cuda_gemm_clock.h), over the driver's
 * events and the table shared with HIP (src/preempt/gemm_clock.c).
 *
 * The events are created in the stream's context, which must be the calling thread's current one
 * (what cuBLASLt requires of its stream anyway: a call on another context's stream is not
 * timed), and destroyed once read. Times are learned per context (the key's), so that a call
 * reads only events of the context it runs in, and a context's teardown drops its own
 * (cudahal_gemm_clock_forget, from cuda_platform.c). The reading query runs in relaxed capture
 * mode, so that it cannot invalidate a capture another thread begins meanwhile in global mode
 * (cuda_marker.c explains the rule).
 */
#include "cuda_gemm_clock.h"

#include <pthread.h>
#include <stdlib.h>

#include "cuda_bind.h"
#include "cuda_compat.h"
#include "gemm_clock.h"

_Static_assert(sizeof(struct cudahal_gemm_key) % sizeof(uint64_t) == 0 &&
                   sizeof(struct cudahal_gemm_key) <= GEMM_CLOCK_KEY_MAX,
               "a key is whole words, and fits the table");

struct clock_token {
    struct cudahal_gemm_key key; /* its context set */
    CUevent start, end;
};

/* ---- the driver ---- */

static struct {
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_query)(CUevent);
    CUresult (*elapsed)(float *, CUevent, CUevent);
    CUresult (*event_destroy)(CUevent);
    CUresult (*stream_ctx)(CUstream, CUcontext *);
    CUresult (*ctx_current)(CUcontext *);
    CUresult (*exchange_capture_mode)(CUstreamCaptureMode *); /* optional */
    bool ok;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void find_driver(void)
{
    *(void **)&drv.event_create = cudahal_sym("cuEventCreate");
    *(void **)&drv.event_record = cudahal_sym("cuEventRecord");
    *(void **)&drv.event_query = cudahal_sym("cuEventQuery");
    *(void **)&drv.elapsed = cudahal_sym("cuEventElapsedTime_v2");
    if (!drv.elapsed)
        *(void **)&drv.elapsed = cudahal_sym("cuEventElapsedTime");
    *(void **)&drv.event_destroy = cudahal_sym("cuEventDestroy_v2");
    *(void **)&drv.stream_ctx = cudahal_sym("cuStreamGetCtx");
    *(void **)&drv.ctx_current = cudahal_sym("cuCtxGetCurrent");
    *(void **)&drv.exchange_capture_mode = cudahal_sym("cuThreadExchangeStreamCaptureMode");
    drv.ok = drv.event_create && drv.event_record && drv.event_query && drv.elapsed &&
             drv.event_destroy && drv.stream_ctx && drv.ctx_current;
}

/* Around calls that a capture in progress elsewhere (global mode) might count as unsafe: a GEMM
 * call goes into a capture as slices with graph gates on, and the clock is then still read. */
static bool relax(CUstreamCaptureMode *mode)
{
    *mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    return drv.exchange_capture_mode && drv.exchange_capture_mode(mode) == CUDA_SUCCESS;
}

static void destroy_pair(void *start, void *end)
{
    if (!start && !end) /* no driver call: the capture mode is not exchanged for nothing */
        return;
    CUstreamCaptureMode mode;
    bool relaxed = relax(&mode);
    if (start)
        drv.event_destroy((CUevent)start);
    if (end)
        drv.event_destroy((CUevent)end);
    if (relaxed)
        drv.exchange_capture_mode(&mode);
}

/* The pair's time in ns: > 0 done, 0 not yet, < 0 never (the pair is then of no use). */
static int64_t read_pair(void *start, void *end)
{
    CUstreamCaptureMode mode;
    bool relaxed = relax(&mode);
    int64_t ns = -1;
    CUresult r = drv.event_query((CUevent)end);
    float ms = 0;
    if (r == CUDA_ERROR_NOT_READY)
        ns = 0;
    else if (r == CUDA_SUCCESS && drv.elapsed(&ms, (CUevent)start, (CUevent)end) == CUDA_SUCCESS &&
             ms > 0)
        ns = (int64_t)((double)ms * 1e6) + 1;
    if (relaxed)
        drv.exchange_capture_mode(&mode);
    return ns;
}

static const struct gemm_clock_ops ops = {read_pair, destroy_pair};
static struct gemm_clock times = GEMM_CLOCK_INIT(sizeof(struct cudahal_gemm_key), &ops);

void cudahal_gemm_clock_forget_all(void)
{
    gemm_clock_forget_all(&times);
}

void cudahal_gemm_clock_forget(uintptr_t context)
{
    gemm_clock_forget_owner(&times, context);
}

uint64_t cudahal_gemm_clock_learned(const struct cudahal_gemm_key *key, bool *time_this)
{
    *time_this = false;
    pthread_once(&drv_once, find_driver);
    CUcontext current = NULL;
    if (!drv.ok || drv.ctx_current(&current) != CUDA_SUCCESS || !current)
        return 0;
    struct cudahal_gemm_key own = *key;
    own.context = (uintptr_t)current;
    return gemm_clock_learned(&times, &own, time_this);
}

void *cudahal_gemm_clock_start(const struct cudahal_gemm_key *key, struct CUstream_st *stream)
{
    pthread_once(&drv_once, find_driver);
    CUcontext mine = NULL, current = NULL;
    if (!drv.ok || drv.stream_ctx(stream, &mine) != CUDA_SUCCESS ||
        drv.ctx_current(&current) != CUDA_SUCCESS || mine != current)
        return NULL;
    struct clock_token *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->key = *key;
    t->key.context = (uintptr_t)mine;
    if (drv.event_create(&t->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        drv.event_create(&t->end, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        drv.event_record(t->start, stream) != CUDA_SUCCESS)
        goto fail;
    return t;
fail:
    destroy_pair(t->start, t->end);
    free(t);
    return NULL;
}

void cudahal_gemm_clock_end(void *token, struct CUstream_st *stream, bool ok)
{
    struct clock_token *t = token;
    if (!t)
        return;
    if (ok && drv.event_record(t->end, stream) == CUDA_SUCCESS)
        gemm_clock_keep(&times, &t->key, (uintptr_t)t->key.context, t->start, t->end);
    else
        destroy_pair(t->start, t->end);
    free(t);
}
