/*
 * hip_gemm_clock.c - learned GPU time of hipblasLtMatmul calls (hip_gemm_clock.h), over HIP
 * events and the table shared with CUDA (src/preempt/gemm_clock.c). Queries run in relaxed
 * capture mode, where the runtime has it, so that they cannot invalidate a capture another
 * thread begins meanwhile in global mode (hip_marker.c).
 */
#include "hip_gemm_clock.h"

#include <pthread.h>
#include <stdlib.h>

#include "gemm_clock.h"
#include "hip_bind.h"
#include "hip_compat.h"

_Static_assert(sizeof(struct hiphal_gemm_key) % sizeof(uint64_t) == 0 &&
                   sizeof(struct hiphal_gemm_key) <= GEMM_CLOCK_KEY_MAX,
               "a key is whole words, and fits the table");

struct clock_token {
    struct hiphal_gemm_key key;
    hipEvent_t start, end;
    int device; /* where they are recorded */
};

/* ---- the runtime ---- */

static struct {
    hipError_t (*event_create)(hipEvent_t *);
    hipError_t (*event_record)(hipEvent_t, hipStream_t);
    hipError_t (*event_query)(hipEvent_t);
    hipError_t (*elapsed)(float *, hipEvent_t, hipEvent_t);
    hipError_t (*event_destroy)(hipEvent_t);
    hipError_t (*stream_device)(hipStream_t, hipDevice_t *);
    hipError_t (*get_device)(int *);
    hipError_t (*peek)(void);
    hipError_t (*get_last)(void);
    hipError_t (*exchange_capture_mode)(hipStreamCaptureMode *); /* optional */
    bool ok;
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void find_runtime(void)
{
    *(void **)&rt.event_create = hiphal_sym("hipEventCreate");
    *(void **)&rt.event_record = hiphal_sym("hipEventRecord");
    *(void **)&rt.event_query = hiphal_sym("hipEventQuery");
    *(void **)&rt.elapsed = hiphal_sym("hipEventElapsedTime");
    *(void **)&rt.event_destroy = hiphal_sym("hipEventDestroy");
    *(void **)&rt.stream_device = hiphal_sym("hipStreamGetDevice");
    *(void **)&rt.get_device = hiphal_sym("hipGetDevice");
    *(void **)&rt.peek = hiphal_sym("hipPeekAtLastError");
    *(void **)&rt.get_last = hiphal_sym("hipGetLastError");
    *(void **)&rt.exchange_capture_mode = hiphal_sym("hipThreadExchangeStreamCaptureMode");
    rt.ok = rt.event_create && rt.event_record && rt.event_query && rt.elapsed &&
            rt.event_destroy && rt.stream_device && rt.get_device && rt.peek && rt.get_last;
}

static bool relax(hipStreamCaptureMode *mode)
{
    *mode = hipStreamCaptureModeRelaxed;
    return rt.exchange_capture_mode && rt.exchange_capture_mode(mode) == hipSuccess;
}

static void destroy_pair(void *start, void *end)
{
    if (start)
        rt.event_destroy((hipEvent_t)start);
    if (end)
        rt.event_destroy((hipEvent_t)end);
}

/* The pair's time in ns: > 0 done, 0 not yet (or not readable now: an error of the
 * application's is pending), < 0 never (the pair is then of no use). */
static int64_t read_pair(void *start, void *end)
{
    if (rt.peek() != hipSuccess)
        return 0;
    hipStreamCaptureMode mode;
    bool relaxed = relax(&mode);
    int64_t ns = -1;
    hipError_t r = rt.event_query((hipEvent_t)end);
    float ms = 0;
    if (r == hipErrorNotReady)
        ns = 0;
    else if (r == hipSuccess && rt.elapsed(&ms, (hipEvent_t)start, (hipEvent_t)end) == hipSuccess &&
             ms > 0)
        ns = (int64_t)((double)ms * 1e6) + 1;
    if (relaxed)
        rt.exchange_capture_mode(&mode);
    if (ns <= 0)
        rt.get_last(); /* none was pending: the query's own is cleared */
    return ns;
}

static const struct gemm_clock_ops ops = {read_pair, destroy_pair};
static struct gemm_clock times = GEMM_CLOCK_INIT(sizeof(struct hiphal_gemm_key), &ops);

void hiphal_gemm_clock_forget_all(void)
{
    gemm_clock_forget_all(&times);
}

void hiphal_gemm_clock_forget(int device)
{
    gemm_clock_forget_owner(&times, (uintptr_t)(intptr_t)device);
}

uint64_t hiphal_gemm_clock_learned(const struct hiphal_gemm_key *key, bool *time_this)
{
    *time_this = false;
    pthread_once(&rt_once, find_runtime);
    return rt.ok ? gemm_clock_learned(&times, key, time_this) : 0;
}

void *hiphal_gemm_clock_start(const struct hiphal_gemm_key *key, struct ihipStream_t *called)
{
    hipStream_t stream = hiphal_stream_object((hipStream_t)called);
    pthread_once(&rt_once, find_runtime);
    hipDevice_t mine = -1;
    int current = -2;
    /* Events are the current device's: a stream of another one is not timed (its record would
     * fail, and leave an error the application's call would not); nor one whose key does not say
     * that device (a stream without a queue), whose pair another device's call could read. */
    if (!rt.ok || rt.stream_device(stream, &mine) != hipSuccess ||
        rt.get_device(&current) != hipSuccess || mine != current || mine != key->device)
        return NULL;
    struct clock_token *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->key = *key;
    t->device = mine;
    if (rt.event_create(&t->start) != hipSuccess || rt.event_create(&t->end) != hipSuccess ||
        rt.event_record(t->start, stream) != hipSuccess)
        goto fail;
    return t;
fail:
    destroy_pair(t->start, t->end);
    free(t);
    return NULL;
}

void hiphal_gemm_clock_end(void *token, struct ihipStream_t *called, bool ok)
{
    struct clock_token *t = token;
    if (!t)
        return;
    if (ok && rt.event_record(t->end, hiphal_stream_object((hipStream_t)called)) == hipSuccess)
        gemm_clock_keep(&times, &t->key, (uintptr_t)(intptr_t)t->device, t->start, t->end);
    else
        destroy_pair(t->start, t->end);
    free(t);
}
