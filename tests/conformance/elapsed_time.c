/*
 * elapsed_time.c - the rules of hipEventElapsedTime.
 *
 * NULL ms: hipErrorInvalidValue. NULL event, an event created with hipEventDisableTiming, or one
 * never recorded: hipErrorInvalidHandle. Recorded but not complete: hipErrorNotReady (fault
 * "elapsed-no-notready" returns hipSuccess). Complete: the milliseconds between the completions,
 * at least the simulated duration of the kernel between the two records.
 */
#include "conf.h"

int main(void)
{
    conf_init();
    hipStream_t s;
    hipEvent_t a, b, dt, never;
    float ms = -1.0f;
    MUST(hipStreamCreate(&s));
    MUST(hipEventCreate(&a));
    MUST(hipEventCreate(&b));
    MUST(hipEventCreateWithFlags(&dt, hipEventDisableTiming));
    MUST(hipEventCreate(&never));

    printf("-- a 60 ms kernel between two records\n");
    SHOW("hipEventRecord(a, s)", hipEventRecord(a, s));
    MUST(conf_launch_sleep(s, 60 * CONF_MS));
    SHOW("hipEventRecord(b, s)", hipEventRecord(b, s));
    SHOW("right after: hipEventElapsedTime(a, b)", hipEventElapsedTime(&ms, a, b));
    SHOW("right after: hipEventElapsedTime(b, a)", hipEventElapsedTime(&ms, b, a));
    SHOW("right after: hipEventQuery(b)", hipEventQuery(b));
    SHOW("hipEventSynchronize(b)", hipEventSynchronize(b));
    ms = -1.0f;
    SHOW("hipEventElapsedTime(a, b)", hipEventElapsedTime(&ms, a, b));
    printf("elapsed >= 60ms: %s\n", conf_yes(ms >= 60.0f - 0.001f));
    printf("elapsed < 10s: %s\n", conf_yes(ms < 10000.0f));

    printf("-- both records still pending\n");
    MUST(conf_launch_sleep(s, 60 * CONF_MS));
    SHOW("hipEventRecord(a, s)", hipEventRecord(a, s));
    MUST(conf_launch_sleep(s, 50 * CONF_MS));
    SHOW("hipEventRecord(b, s)", hipEventRecord(b, s));
    SHOW("right after: hipEventElapsedTime(a, b)", hipEventElapsedTime(&ms, a, b));
    SHOW("hipEventSynchronize(a)", hipEventSynchronize(a));
    SHOW("a done, b pending: hipEventElapsedTime(a, b)", hipEventElapsedTime(&ms, a, b));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    ms = -1.0f;
    SHOW("hipEventElapsedTime(a, b)", hipEventElapsedTime(&ms, a, b));
    printf("elapsed >= 50ms: %s\n", conf_yes(ms >= 50.0f - 0.001f));

    printf("-- argument errors (a and b complete)\n");
    SHOW("hipEventElapsedTime(NULL ms, a, b)", hipEventElapsedTime(NULL, a, b));
    SHOW("hipEventElapsedTime(NULL, b)", hipEventElapsedTime(&ms, NULL, b));
    SHOW("hipEventElapsedTime(a, NULL)", hipEventElapsedTime(&ms, a, NULL));
    SHOW("hipEventRecord(dt, s)", hipEventRecord(dt, s));
    SHOW("hipEventSynchronize(dt)", hipEventSynchronize(dt));
    SHOW("hipEventElapsedTime(a, disable-timing)", hipEventElapsedTime(&ms, a, dt));
    SHOW("hipEventElapsedTime(disable-timing, b)", hipEventElapsedTime(&ms, dt, b));
    SHOW("hipEventElapsedTime(a, never recorded)", hipEventElapsedTime(&ms, a, never));
    SHOW("hipEventElapsedTime(never recorded, b)", hipEventElapsedTime(&ms, never, b));

    MUST(hipEventDestroy(a));
    MUST(hipEventDestroy(b));
    MUST(hipEventDestroy(dt));
    MUST(hipEventDestroy(never));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
