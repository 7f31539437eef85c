/*
 * many_threads.c - 8 threads x 4 streams x 200 launches of an atomic-add kernel.
 *
 * Each stream has its own counter; each launch carries its sequence number on its stream and
 * checks that the counter equals it before adding 1, so a lost launch (fault "drop-launch") or an
 * out-of-order one shows up, as does any count other than exactly 200 per stream.
 */
#include "conf.h"

#define THREADS 8
#define STREAMS 4
#define LAUNCHES 200

static const void *k_count;
static atomic_int *counters; /* device memory: THREADS * STREAMS counters */
static atomic_int total, out_of_order;

typedef struct thread_result {
    int index;
    int launch_errors;
    hipError_t sync[STREAMS];
    hipError_t destroy[STREAMS];
} thread_result;

static thread_result results[THREADS];

/* count(atomic_int *counter, int seq): checks *counter == seq, adds 1, counts the total. */
static uint64_t kernel_count(hipsimLaunch *l)
{
    atomic_int *c = CONF_ARG(l, 0, atomic_int *);
    int seq = CONF_ARG(l, 1, int);
    if (atomic_fetch_add(c, 1) != seq)
        atomic_fetch_add(&out_of_order, 1);
    atomic_fetch_add(&total, 1);
    return 0;
}

static void *worker(void *arg)
{
    thread_result *r = arg;
    hipStream_t s[STREAMS];
    for (int j = 0; j < STREAMS; j++)
        MUST(hipStreamCreate(&s[j]));
    for (int i = 0; i < LAUNCHES; i++) {
        for (int j = 0; j < STREAMS; j++) {
            atomic_int *c = &counters[r->index * STREAMS + j];
            int seq = i;
            void *args[] = {&c, &seq};
            if (hipLaunchKernel(k_count, conf_dim(1), conf_dim(1), args, 0, s[j]) != hipSuccess)
                r->launch_errors++;
        }
    }
    for (int j = 0; j < STREAMS; j++)
        r->sync[j] = hipStreamSynchronize(s[j]);
    for (int j = 0; j < STREAMS; j++)
        r->destroy[j] = hipStreamDestroy(s[j]);
    return NULL;
}

int main(void)
{
    conf_init();
    static const size_t count_sz[] = {sizeof(atomic_int *), sizeof(int)};
    k_count = conf_register("mt_count", kernel_count, 2, count_sz);
    MUST(hipMalloc((void **)&counters, THREADS * STREAMS * sizeof(atomic_int)));
    MUST(hipMemset(counters, 0, THREADS * STREAMS * sizeof(atomic_int)));

    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        results[i].index = i;
        pthread_create(&t[i], NULL, worker, &results[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());

    int host[THREADS * STREAMS];
    MUST(hipMemcpy(host, counters, sizeof host, hipMemcpyDeviceToHost));
    int all_ok = 1;
    for (int i = 0; i < THREADS; i++) {
        thread_result *r = &results[i];
        printf("thread %d: counters", i);
        for (int j = 0; j < STREAMS; j++) {
            printf(" %d", host[i * STREAMS + j]);
            all_ok &= host[i * STREAMS + j] == LAUNCHES;
        }
        printf("; launch errors %d; sync", r->launch_errors);
        for (int j = 0; j < STREAMS; j++)
            printf(" %s", conf_err(r->sync[j]));
        printf("; destroy");
        for (int j = 0; j < STREAMS; j++)
            printf(" %s", conf_err(r->destroy[j]));
        printf("\n");
    }
    printf("kernels run: %d\n", atomic_load(&total));
    printf("out-of-order kernels: %d\n", atomic_load(&out_of_order));
    printf("every counter exact: %s\n", conf_yes(all_ok));
    SHOW("hipGetLastError", hipGetLastError());
    MUST(hipFree(counters));
    return conf_done();
}
