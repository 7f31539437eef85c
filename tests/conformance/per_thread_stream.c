/*
 * per_thread_stream.c - hipStreamPerThread and the _spt entry points.
 *
 * Thread 1 puts a 100 ms kernel on its per-thread stream; thread 2, meanwhile, finds its own
 * per-thread stream idle (fault "per-thread-shared" makes it see thread 1's kernel). Each thread's
 * per-thread stream runs its work in order; hipLaunchKernel_spt with stream 0 launches onto the
 * per-thread stream, and so does it with hipStreamLegacy (clr's PER_THREAD_DEFAULT_STREAM); a
 * thread that exits with work pending still has that work run.
 */
#include "conf.h"

static const void *k_sid;
static pthread_barrier_t barrier;

/* sid(atomic_ullong *out, uint64_t ns): *out = the id of the stream the kernel runs on. */
static uint64_t kernel_sid(hipsimLaunch *l)
{
    atomic_store(CONF_ARG(l, 0, atomic_ullong *), (unsigned long long)l->stream_id);
    return CONF_ARG(l, 1, uint64_t);
}

#define N 8

typedef struct thread_result {
    conf_log log;
    conf_hlog hl[N];
    atomic_ullong seen;
    uint64_t id;
    hipError_t query_busy, query_peer, sync, spt_query, spt_record_query, spt_sync, spt_event;
    int spt_on_own, explicit_on_own;
    const char *spt_legacy_ran_on;
    int in_order;
} thread_result;

static thread_result r1, r2;
static atomic_int exited_flag;
static conf_hset exited_set = {&exited_flag, 1};

static void in_order_sequence(thread_result *r, int base)
{
    conf_log_reset(&r->log);
    for (int i = 0; i < N; i++) {
        if (i % 4 == 2) {
            r->hl[i].log = &r->log;
            r->hl[i].value = base + i;
            MUST(hipLaunchHostFunc(hipStreamPerThread, conf_host_log, &r->hl[i]));
        } else {
            MUST(conf_launch_log(hipStreamPerThread, &r->log, base + i,
                                 i % 4 == 0 ? 20 * CONF_MS : 0));
        }
    }
    MUST(hipStreamSynchronize(hipStreamPerThread));
    int ok = conf_log_count(&r->log) == N;
    for (int i = 0; ok && i < N; i++)
        ok = atomic_load(&r->log.v[i]) == base + i;
    r->in_order = ok;
}

static hipError_t launch_sid(hipError_t (*launch)(const void *, dim3, dim3, void **, size_t,
                                                  hipStream_t),
                             hipStream_t s, atomic_ullong *out, uint64_t ns)
{
    void *args[] = {&out, &ns};
    return launch(k_sid, conf_dim(1), conf_dim(1), args, 0, s);
}

static void *thread1(void *arg)
{
    (void)arg;
    thread_result *r = &r1;
    MUST(hipStreamQuery(hipStreamPerThread));
    r->id = hipsimStreamId(hipStreamPerThread);
    MUST(conf_launch_sleep(hipStreamPerThread, 100 * CONF_MS));
    r->query_busy = hipStreamQuery(hipStreamPerThread);
    pthread_barrier_wait(&barrier); /* A: thread 2 may look now */
    pthread_barrier_wait(&barrier); /* B: thread 2 has looked */
    r->sync = hipStreamSynchronize(hipStreamPerThread);
    in_order_sequence(r, 0);

    /* hipLaunchKernel_spt with stream 0: the per-thread stream. */
    hipEvent_t e;
    MUST(hipEventCreate(&e));
    atomic_store(&r->seen, 0);
    MUST(launch_sid(hipLaunchKernel_spt, 0, &r->seen, 100 * CONF_MS));
    r->spt_query = hipStreamQuery(hipStreamPerThread);
    MUST(hipEventRecord_spt(e, 0));
    r->spt_record_query = hipEventQuery(e);
    r->spt_sync = hipStreamSynchronize_spt(0);
    r->spt_event = hipEventQuery(e);
    r->spt_on_own = atomic_load(&r->seen) == r->id;
    MUST(hipEventDestroy(e));

    /* hipLaunchKernel with hipStreamPerThread. */
    atomic_store(&r->seen, 0);
    MUST(launch_sid(hipLaunchKernel, hipStreamPerThread, &r->seen, 0));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    r->explicit_on_own = atomic_load(&r->seen) == r->id;

    /* hipLaunchKernel_spt with hipStreamLegacy: the per-thread stream. */
    atomic_store(&r->seen, 0);
    MUST(launch_sid(hipLaunchKernel_spt, hipStreamLegacy, &r->seen, 0));
    MUST(hipDeviceSynchronize());
    uint64_t seen = atomic_load(&r->seen);
    r->spt_legacy_ran_on = seen == r->id                             ? "the per-thread stream"
                           : seen == hipsimStreamId(hipStreamLegacy) ? "the legacy stream"
                                                                     : "another stream";
    return NULL;
}

static void *thread2(void *arg)
{
    (void)arg;
    thread_result *r = &r2;
    pthread_barrier_wait(&barrier); /* A: thread 1's 100 ms kernel is queued */
    r->query_peer = hipStreamQuery(hipStreamPerThread);
    r->id = hipsimStreamId(hipStreamPerThread);
    pthread_barrier_wait(&barrier); /* B */
    r->sync = hipStreamSynchronize(hipStreamPerThread);
    in_order_sequence(r, 100);
    return NULL;
}

/* Leaves a 60 ms kernel and a host function on its per-thread stream and exits. */
static void *thread3(void *arg)
{
    (void)arg;
    MUST(conf_launch_sleep(hipStreamPerThread, 60 * CONF_MS));
    MUST(hipLaunchHostFunc(hipStreamPerThread, conf_host_set, &exited_set));
    return NULL;
}

int main(void)
{
    conf_init();
    static const size_t sid_sz[] = {sizeof(atomic_ullong *), sizeof(uint64_t)};
    k_sid = conf_register("pts_sid", kernel_sid, 2, sid_sz);
    pthread_barrier_init(&barrier, NULL, 2);

    pthread_t t1, t2, t3;
    pthread_create(&t1, NULL, thread1, NULL);
    pthread_create(&t2, NULL, thread2, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);

    printf("-- two threads\n");
    printf("thread 1: query of own per-thread stream after a 100 ms kernel -> %s\n",
           conf_err(r1.query_busy));
    printf("thread 2: query of own per-thread stream meanwhile -> %s\n", conf_err(r2.query_peer));
    printf("per-thread streams of the two threads distinct: %s\n",
           conf_yes(r1.id != 0 && r2.id != 0 && r1.id != r2.id));
    printf("thread 1: hipStreamSynchronize(hipStreamPerThread) -> %s\n", conf_err(r1.sync));
    printf("thread 2: hipStreamSynchronize(hipStreamPerThread) -> %s\n", conf_err(r2.sync));
    conf_log_print("thread 1 order", &r1.log);
    conf_log_print("thread 2 order", &r2.log);
    printf("thread 1 in order: %s\n", conf_yes(r1.in_order));
    printf("thread 2 in order: %s\n", conf_yes(r2.in_order));

    printf("-- _spt entry points (thread 1)\n");
    printf("query after hipLaunchKernel_spt(stream 0, 100 ms) -> %s\n", conf_err(r1.spt_query));
    printf("query of hipEventRecord_spt(e, 0) after it -> %s\n", conf_err(r1.spt_record_query));
    printf("hipStreamSynchronize_spt(0) -> %s\n", conf_err(r1.spt_sync));
    printf("then hipEventQuery(e) -> %s\n", conf_err(r1.spt_event));
    printf("hipLaunchKernel_spt(stream 0) ran on the per-thread stream: %s\n",
           conf_yes(r1.spt_on_own));
    printf("hipLaunchKernel(hipStreamPerThread) ran on the per-thread stream: %s\n",
           conf_yes(r1.explicit_on_own));
    printf("hipLaunchKernel_spt(hipStreamLegacy) ran on %s\n", r1.spt_legacy_ran_on);

    printf("-- main thread\n");
    SHOW("hipStreamQuery(hipStreamPerThread)", hipStreamQuery(hipStreamPerThread));
    uint64_t idm = hipsimStreamId(hipStreamPerThread);
    printf(
        "per-thread stream distinct from the null stream: %s\n",
        conf_yes(idm != 0 && idm != hipsimStreamId(0) && idm != hipsimStreamId(hipStreamLegacy)));
    unsigned flags = 99;
    SHOW("hipStreamGetFlags(hipStreamPerThread)", hipStreamGetFlags(hipStreamPerThread, &flags));
    printf("flags = %u\n", flags);
    SHOW("hipStreamDestroy(hipStreamPerThread)", hipStreamDestroy(hipStreamPerThread));

    printf("-- a thread that exits with work pending\n");
    pthread_create(&t3, NULL, thread3, NULL);
    pthread_join(t3, NULL);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    printf("exited thread's work ran: %s\n", conf_yes(atomic_load(&exited_flag) == 1));

    pthread_barrier_destroy(&barrier);
    return conf_done();
}
