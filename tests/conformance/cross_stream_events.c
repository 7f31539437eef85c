/*
 * cross_stream_events.c - hipStreamWaitEvent orders one stream after another.
 *
 * Stream A runs a kernel held until the program has looked (conf.h), then a kernel that writes
 * x = 42, then records event e.
 * Stream B waits for e and then reads x with a kernel; stream C waits for e and then copies x
 * (a copy takes no compute slot, so without the wait it would run at once). Both must see 42
 * (fault "wait-event-ignored" makes them see the old value).
 */
#include "conf.h"

int main(void)
{
    conf_init();
    hipStream_t sa, sb, sc;
    hipEvent_t e;
    MUST(hipStreamCreate(&sa));
    MUST(hipStreamCreate(&sb));
    MUST(hipStreamCreate(&sc));
    MUST(hipEventCreate(&e));

    int *x = NULL, *y = NULL, *z = NULL;
    MUST(hipMalloc((void **)&x, sizeof(int)));
    MUST(hipMalloc((void **)&y, sizeof(int)));
    MUST(hipMalloc((void **)&z, sizeof(int)));
    MUST(hipMemset(x, 0, sizeof(int)));
    MUST(hipMemset(y, 0, sizeof(int)));
    MUST(hipMemset(z, 0, sizeof(int)));

    printf("-- B and C wait for an event recorded after A's kernels\n");
    static conf_hold a_runs; /* static: a timer may release it until the process exits */
    MUST(conf_launch_hold(sa, &a_runs));
    MUST(conf_launch_fill(sa, x, 42, 1, 0));
    SHOW("hipEventRecord(e, A)", hipEventRecord(e, sa));
    SHOW("hipStreamWaitEvent(B, e, 0)", hipStreamWaitEvent(sb, e, 0));
    MUST(conf_launch_copy_add(sb, y, x, 1));
    SHOW("hipStreamWaitEvent(C, e, 0)", hipStreamWaitEvent(sc, e, 0));
    MUST(hipMemcpyAsync(z, x, sizeof(int), hipMemcpyDeviceToDevice, sc));
    conf_sleep_ms(30);
    SHOW("after 30 ms: hipEventQuery(e)", hipEventQuery(e));
    SHOW("after 30 ms: hipStreamQuery(B)", hipStreamQuery(sb));
    SHOW("after 30 ms: hipStreamQuery(C)", hipStreamQuery(sc));
    conf_release_after(&a_runs, 20);
    SHOW("hipStreamSynchronize(B)", hipStreamSynchronize(sb));
    SHOW("hipStreamSynchronize(C)", hipStreamSynchronize(sc));
    SHOW("then hipEventQuery(e)", hipEventQuery(e));
    SHOW("then hipStreamQuery(A)", hipStreamQuery(sa));
    printf("B's kernel read x + 1 = %d\n", conf_read_int(y));
    printf("C's copy of x = %d\n", conf_read_int(z));

    printf("-- the wait covers the event's most recent record\n");
    MUST(conf_launch_fill(sa, x, 1, 1, 0));
    SHOW("hipEventRecord(e, A) #1", hipEventRecord(e, sa));
    MUST(conf_launch_sleep(sa, 60 * CONF_MS));
    MUST(conf_launch_fill(sa, x, 2, 1, 0));
    SHOW("hipEventRecord(e, A) #2", hipEventRecord(e, sa));
    SHOW("hipStreamWaitEvent(C, e, 0)", hipStreamWaitEvent(sc, e, 0));
    MUST(hipMemcpyAsync(z, x, sizeof(int), hipMemcpyDeviceToDevice, sc));
    SHOW("hipStreamSynchronize(C)", hipStreamSynchronize(sc));
    printf("C's copy of x = %d\n", conf_read_int(z));

    printf("-- a record made after the wait call does not delay the waiter\n");
    SHOW("hipEventSynchronize(e)", hipEventSynchronize(e));
    SHOW("hipStreamWaitEvent(C, e, 0)", hipStreamWaitEvent(sc, e, 0));
    MUST(conf_launch_hold(sa, &a_runs));
    SHOW("hipEventRecord(e, A)", hipEventRecord(e, sa));
    MUST(hipMemsetAsync(z, 0, sizeof(int), sc));
    /* A waiter wrongly held by the new record is freed after 2 s (the output then differs). */
    conf_release_after(&a_runs, 2000);
    SHOW("hipStreamSynchronize(C)", hipStreamSynchronize(sc));
    SHOW("then hipStreamQuery(A)", hipStreamQuery(sa));
    SHOW("then hipEventQuery(e)", hipEventQuery(e));
    conf_release(&a_runs);
    SHOW("hipStreamSynchronize(A)", hipStreamSynchronize(sa));

    printf("-- flags\n");
    SHOW("hipStreamWaitEvent(B, e, 1)", hipStreamWaitEvent(sb, e, 1));

    MUST(hipFree(x));
    MUST(hipFree(y));
    MUST(hipFree(z));
    MUST(hipEventDestroy(e));
    MUST(hipStreamDestroy(sa));
    MUST(hipStreamDestroy(sb));
    MUST(hipStreamDestroy(sc));
    return conf_done();
}
