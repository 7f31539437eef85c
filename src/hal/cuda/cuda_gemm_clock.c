/*
 * cuda_gemm_clock.c - learned GPU time of GEMM calls (cuda_gemm_clock.h).
 *
 * A small table (open addressing over CLOCK_SLOTS entries, the least recently used of a probe
 * run replaced) holds, per key, the shortest time seen and the events of one timing in flight.
 * The events are created in the stream's context, which must be the calling thread's current one
 * (what cuBLASLt requires of its stream anyway: a call on another context's stream is not
 * timed), and destroyed once read. Driver calls run outside the table's lock; a reading thread
 * takes a key's events out of the table first, so that no two threads read the same pair. The
 * reading query runs in relaxed capture mode, so that it cannot invalidate a capture another
 * thread begins meanwhile in global mode (cuda_marker.c explains the rule).
 */
#include "cuda_gemm_clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_bind.h"
#include "cuda_compat.h"
#include "gp_lockrank.h"

#define CLOCK_SLOTS 256
#define CLOCK_PROBE 8

struct clock_entry {
    struct cudahal_gemm_key key;
    bool used;
    uint64_t learned_ns, calls, last_use;
    CUevent start, end; /* a timing in flight, or NULL */
};

struct clock_token {
    struct cudahal_gemm_key key;
    CUevent start, end;
};

static struct clock_entry table[CLOCK_SLOTS];
static uint64_t use_clock;
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

void cudahal_gemm_clock_forget_all(void)
{
    pthread_mutex_init(&table_mu, NULL);
    memset(table, 0, sizeof table);
    use_clock = 0;
}

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

static void destroy_pair(CUevent start, CUevent end)
{
    if (!start && !end) /* no driver call: the capture mode is not exchanged for nothing */
        return;
    CUstreamCaptureMode mode;
    bool relaxed = relax(&mode);
    if (start)
        drv.event_destroy(start);
    if (end)
        drv.event_destroy(end);
    if (relaxed)
        drv.exchange_capture_mode(&mode);
}

/* The pair's time in ns: > 0 done, 0 not yet, < 0 never (the pair is then of no use). */
static int64_t read_pair(CUevent start, CUevent end)
{
    CUstreamCaptureMode mode;
    bool relaxed = relax(&mode);
    int64_t ns = -1;
    CUresult r = drv.event_query(end);
    float ms = 0;
    if (r == CUDA_ERROR_NOT_READY)
        ns = 0;
    else if (r == CUDA_SUCCESS && drv.elapsed(&ms, start, end) == CUDA_SUCCESS && ms > 0)
        ns = (int64_t)((double)ms * 1e6) + 1;
    if (relaxed)
        drv.exchange_capture_mode(&mode);
    return ns;
}

/* ---- the table (table_mu held) ---- */

/* By 8-byte words, not bytes: every GEMM call of every process hashes its key twice while
 * slicing is on (the default), and a byte at a time that was most of what the shim added. The
 * final mix brings the high bits, where words differ most (m, n, k), down to the slot's. */
_Static_assert(sizeof(struct cudahal_gemm_key) % sizeof(uint64_t) == 0, "a key is whole words");
static size_t key_hash(const struct cudahal_gemm_key *key)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof *key; i += sizeof(uint64_t)) {
        uint64_t word;
        memcpy(&word, (const char *)key + i, sizeof word);
        h = (h ^ word) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)(h % CLOCK_SLOTS);
}

/* key's entry (h its key_hash), or NULL; with claim, a new one in the least recently used slot of
 * its probe run (whose events in flight, if any, go to stale_start and stale_end for the caller to
 * destroy). */
static struct clock_entry *entry_of(const struct cudahal_gemm_key *key, size_t h, bool claim,
                                    CUevent *stale_start, CUevent *stale_end)
{
    struct clock_entry *victim = NULL;
    for (size_t i = 0; i < CLOCK_PROBE; i++) {
        struct clock_entry *e = &table[(h + i) % CLOCK_SLOTS];
        if (e->used && !memcmp(&e->key, key, sizeof *key)) {
            e->last_use = ++use_clock;
            return e;
        }
        if (!victim || !e->used || (victim->used && e->last_use < victim->last_use))
            victim = e;
    }
    if (!claim)
        return NULL;
    *stale_start = victim->start;
    *stale_end = victim->end;
    *victim = (struct clock_entry){.key = *key, .used = true, .last_use = ++use_clock};
    return victim;
}

/* ---- learning ---- */

/* A call of e's key is being made (table_mu held): its learned time, and whether to time it. */
static uint64_t count_call(struct clock_entry *e, bool *time_this)
{
    e->calls++;
    *time_this = !e->end && (!e->learned_ns || e->calls % CUDAHAL_GEMM_RETIME == 0);
    return e->learned_ns;
}

/* Every GEMM call of every process comes here while slicing is on, so the common case (no timing
 * of the key in flight) takes the lock once, hashes once and calls no driver function; only a
 * timing in flight is taken out to be read outside the lock. */
uint64_t cudahal_gemm_clock_learned(const struct cudahal_gemm_key *key, bool *time_this)
{
    *time_this = false;
    pthread_once(&drv_once, find_driver);
    if (!drv.ok)
        return 0;
    size_t h = key_hash(key);
    gp_mutex_lock(&table_mu, GP_RANK_GEMM_TIMES);
    struct clock_entry *e = entry_of(key, h, false, NULL, NULL);
    uint64_t learned = 0;
    if (!e || !e->end) {
        if (e)
            learned = count_call(e, time_this);
        else
            *time_this = true;
        gp_mutex_unlock(&table_mu, GP_RANK_GEMM_TIMES);
        return learned;
    }
    CUevent start = e->start, end = e->end;
    e->start = e->end = NULL;
    gp_mutex_unlock(&table_mu, GP_RANK_GEMM_TIMES);
    int64_t ns = read_pair(start, end);
    if (ns != 0)
        destroy_pair(start, end);

    gp_mutex_lock(&table_mu, GP_RANK_GEMM_TIMES);
    e = entry_of(key, h, false, NULL, NULL);
    if (e) {
        if (ns > 0 && (!e->learned_ns || (uint64_t)ns < e->learned_ns))
            e->learned_ns = (uint64_t)ns;
        if (ns == 0 && !e->end) { /* not done yet: back, unless another timing took its place */
            e->start = start;
            e->end = end;
            start = end = NULL;
        }
        learned = count_call(e, time_this);
    } else {
        *time_this = true;
    }
    gp_mutex_unlock(&table_mu, GP_RANK_GEMM_TIMES);
    if (ns == 0 && start) /* its entry was replaced meanwhile */
        destroy_pair(start, end);
    return learned;
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
    CUevent stale_start = NULL, stale_end = NULL;
    if (!ok || drv.event_record(t->end, stream) != CUDA_SUCCESS)
        goto drop;
    gp_mutex_lock(&table_mu, GP_RANK_GEMM_TIMES);
    struct clock_entry *e = entry_of(&t->key, key_hash(&t->key), true, &stale_start, &stale_end);
    if (!e->end) {
        e->start = t->start;
        e->end = t->end;
        t->start = t->end = NULL;
    }
    gp_mutex_unlock(&table_mu, GP_RANK_GEMM_TIMES);
drop:
    destroy_pair(stale_start, stale_end);
    destroy_pair(t->start, t->end);
    free(t);
}
