/*
 * hip_gemm_clock.c - learned GPU time of hipblasLtMatmul calls (hip_gemm_clock.h).
 *
 * The table is cuda_gemm_clock.c's (open addressing over CLOCK_SLOTS entries, the least recently
 * used of a probe run replaced; per key the shortest time seen and one timing in flight), over
 * HIP events. Runtime calls run outside the table's lock; a reading thread takes a key's events
 * out of the table first, so that no two threads read the same pair. Queries run in relaxed
 * capture mode, where the runtime has it, so that they cannot invalidate a capture another
 * thread begins meanwhile in global mode (hip_marker.c).
 */
#include "hip_gemm_clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gp_lockrank.h"
#include "hip_bind.h"
#include "hip_compat.h"

#define CLOCK_SLOTS 256
#define CLOCK_PROBE 8

struct clock_entry {
    struct hiphal_gemm_key key;
    bool used;
    uint64_t learned_ns, calls, last_use;
    hipEvent_t start, end; /* a timing in flight, or NULL */
};

struct clock_token {
    struct hiphal_gemm_key key;
    hipEvent_t start, end;
};

static struct clock_entry table[CLOCK_SLOTS];
static uint64_t use_clock;
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

/* In a forked child, where another thread of the parent may have held table_mu: the times are
 * learned again, and the timings in flight (the parent's events) left alone. */
void hiphal_gemm_clock_forget_all(void)
{
    pthread_mutex_init(&table_mu, NULL);
    memset(table, 0, sizeof table);
    use_clock = 0;
}

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

static void destroy_pair(hipEvent_t start, hipEvent_t end)
{
    if (start)
        rt.event_destroy(start);
    if (end)
        rt.event_destroy(end);
}

/* The pair's time in ns: > 0 done, 0 not yet (or not readable now: an error of the
 * application's is pending), < 0 never (the pair is then of no use). */
static int64_t read_pair(hipEvent_t start, hipEvent_t end)
{
    if (rt.peek() != hipSuccess)
        return 0;
    hipStreamCaptureMode mode;
    bool relaxed = relax(&mode);
    int64_t ns = -1;
    hipError_t r = rt.event_query(end);
    float ms = 0;
    if (r == hipErrorNotReady)
        ns = 0;
    else if (r == hipSuccess && rt.elapsed(&ms, start, end) == hipSuccess && ms > 0)
        ns = (int64_t)((double)ms * 1e6) + 1;
    if (relaxed)
        rt.exchange_capture_mode(&mode);
    if (ns <= 0)
        rt.get_last(); /* none was pending: the query's own is cleared */
    return ns;
}

/* ---- the table (table_mu held) ---- */

_Static_assert(sizeof(struct hiphal_gemm_key) % sizeof(uint64_t) == 0, "a key is whole words");
static size_t key_hash(const struct hiphal_gemm_key *key)
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

static struct clock_entry *entry_of(const struct hiphal_gemm_key *key, size_t h, bool claim,
                                    hipEvent_t *stale_start, hipEvent_t *stale_end)
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

static uint64_t count_call(struct clock_entry *e, bool *time_this)
{
    e->calls++;
    *time_this = !e->end && (!e->learned_ns || e->calls % HIPHAL_GEMM_RETIME == 0);
    return e->learned_ns;
}

uint64_t hiphal_gemm_clock_learned(const struct hiphal_gemm_key *key, bool *time_this)
{
    *time_this = false;
    pthread_once(&rt_once, find_runtime);
    if (!rt.ok)
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
    hipEvent_t start = e->start, end = e->end;
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

void *hiphal_gemm_clock_start(const struct hiphal_gemm_key *key, struct ihipStream_t *stream)
{
    pthread_once(&rt_once, find_runtime);
    hipDevice_t mine = -1;
    int current = -2;
    /* Events are the current device's: a stream of another one is not timed (its record would
     * fail, and leave an error the application's call would not). */
    if (!rt.ok || rt.stream_device((hipStream_t)stream, &mine) != hipSuccess ||
        rt.get_device(&current) != hipSuccess || mine != current)
        return NULL;
    struct clock_token *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->key = *key;
    if (rt.event_create(&t->start) != hipSuccess || rt.event_create(&t->end) != hipSuccess ||
        rt.event_record(t->start, (hipStream_t)stream) != hipSuccess)
        goto fail;
    return t;
fail:
    destroy_pair(t->start, t->end);
    free(t);
    return NULL;
}

void hiphal_gemm_clock_end(void *token, struct ihipStream_t *stream, bool ok)
{
    struct clock_token *t = token;
    if (!t)
        return;
    hipEvent_t stale_start = NULL, stale_end = NULL;
    if (!ok || rt.event_record(t->end, (hipStream_t)stream) != hipSuccess)
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
