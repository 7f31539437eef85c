/*
 * free_sync.c - hipFree's implicit device synchronisation, and stream-ordered allocation.
 *
 * hipFree (and hipHostFree) first waits for all work on all devices, so a 100 ms kernel on an
 * unrelated stream has finished when it returns (fault "free-no-sync" returns at once).
 * hipMallocAsync/hipFreeAsync are stream-ordered and do not synchronise.
 */
#include "conf.h"

static atomic_int flag;
static conf_hset set_flag = {&flag, 1};

/* On s: a 100 ms kernel followed by a host function that sets flag. */
static void long_work(hipStream_t s)
{
    atomic_store(&flag, 0);
    MUST(conf_launch_sleep(s, 100 * CONF_MS));
    MUST(hipLaunchHostFunc(s, conf_host_set, &set_flag));
}

int main(void)
{
    conf_init();
    hipStream_t s, snb;
    int local = 0;
    void *a = NULL, *b = NULL, *h = NULL;
    int *p = NULL;
    MUST(hipStreamCreate(&s));
    MUST(hipStreamCreateWithFlags(&snb, hipStreamNonBlocking));
    MUST(hipMalloc(&a, 64));
    MUST(hipMalloc(&b, 64));
    MUST(hipHostMalloc(&h, 64, 0));

    printf("-- hipFree waits for all work\n");
    long_work(s);
    SHOW("right after launch: hipStreamQuery(s)", hipStreamQuery(s));
    SHOW("hipFree(unrelated buffer)", hipFree(b));
    SHOW("then hipStreamQuery(s)", hipStreamQuery(s));
    printf("work done when hipFree returned: %s\n", conf_yes(atomic_load(&flag) == 1));

    long_work(snb);
    SHOW("hipFree(NULL) while a non-blocking stream is busy", hipFree(NULL));
    SHOW("hipHostFree(host buffer)", hipHostFree(h));
    SHOW("then hipStreamQuery(non-blocking)", hipStreamQuery(snb));
    printf("work done when hipHostFree returned: %s\n", conf_yes(atomic_load(&flag) == 1));

    printf("-- bad frees\n");
    SHOW("hipFree(NULL)", hipFree(NULL));
    SHOW("hipFree(pointer to a local)", hipFree(&local));
    SHOW("hipFree(already freed)", hipFree(b));
    SHOW("hipHostFree(NULL)", hipHostFree(NULL));
    SHOW("hipHostFree(pointer to a local)", hipHostFree(&local));

    printf("-- hipMallocAsync / hipFreeAsync\n");
    int *pinned = NULL;
    MUST(hipHostMalloc((void **)&pinned, sizeof(int), 0));
    *pinned = 0;
    SHOW("hipMallocAsync(s)", hipMallocAsync((void **)&p, sizeof(int), s));
    printf("pointer returned: %s\n", conf_yes(p != NULL));
    MUST(conf_launch_fill(s, p, 3, 1, 0));
    MUST(hipMemcpyAsync(pinned, p, sizeof(int), hipMemcpyDeviceToHost, s));
    SHOW("hipFreeAsync(s)", hipFreeAsync(p, s));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    printf("value copied out before the free: %d\n", *pinned);

    long_work(s);
    SHOW("hipMallocAsync(s) behind a 100 ms kernel", hipMallocAsync((void **)&p, sizeof(int), s));
    SHOW("hipMemsetAsync", hipMemsetAsync(p, 0, sizeof(int), s));
    SHOW("hipFreeAsync(s)", hipFreeAsync(p, s));
    SHOW("right after: hipStreamQuery(s)", hipStreamQuery(s));
    printf("work done when hipFreeAsync returned: %s\n", conf_yes(atomic_load(&flag) == 1));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    SHOW("hipFree(pointer released by hipFreeAsync)", hipFree(p));

    MUST(hipHostFree(pinned));
    MUST(hipFree(a));
    MUST(hipStreamDestroy(s));
    MUST(hipStreamDestroy(snb));
    return conf_done();
}
