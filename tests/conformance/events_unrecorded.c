/*
 * events_unrecorded.c - events that were never recorded, event creation flags, and
 * hipEventRecordWithFlags.
 *
 * A never-recorded event counts as complete: hipEventQuery and hipEventSynchronize succeed
 * (fault "event-query-unrecorded" makes the query hipErrorNotReady), waiting on it is a no-op,
 * and it has no time (hipEventElapsedTime: hipErrorInvalidHandle).
 */
#include "conf.h"

static void create_with(const char *label, unsigned flags)
{
    hipEvent_t e = NULL;
    hipError_t r = SHOW(label, hipEventCreateWithFlags(&e, flags));
    if (r == hipSuccess)
        MUST(hipEventDestroy(e));
}

int main(void)
{
    conf_init();
    hipStream_t s;
    hipEvent_t never, never2, done;
    float ms = -1.0f;
    int *d = NULL;
    MUST(hipStreamCreate(&s));
    MUST(hipMalloc((void **)&d, sizeof(int)));
    MUST(hipMemset(d, 0, sizeof(int)));

    printf("-- a never-recorded event\n");
    SHOW("hipEventCreate(never)", hipEventCreate(&never));
    SHOW("hipEventCreate(never2)", hipEventCreate(&never2));
    SHOW("hipEventQuery(never)", hipEventQuery(never));
    SHOW("hipEventSynchronize(never)", hipEventSynchronize(never));
    SHOW("hipEventElapsedTime(never, never2)", hipEventElapsedTime(&ms, never, never2));

    /* Waiting on it is a no-op: later work runs at once. */
    SHOW("hipStreamWaitEvent(s, never, 0)", hipStreamWaitEvent(s, never, 0));
    MUST(conf_launch_fill(s, d, 5, 1, 0));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    printf("kernel after the wait wrote: %d\n", conf_read_int(d));

    /* Elapsed time with one recorded, complete event and one never recorded. */
    SHOW("hipEventCreate(done)", hipEventCreate(&done));
    SHOW("hipEventRecord(done, s)", hipEventRecord(done, s));
    SHOW("hipEventSynchronize(done)", hipEventSynchronize(done));
    SHOW("hipEventElapsedTime(done, never)", hipEventElapsedTime(&ms, done, never));
    SHOW("hipEventElapsedTime(never, done)", hipEventElapsedTime(&ms, never, done));
    SHOW("hipEventElapsedTime(done, done)", hipEventElapsedTime(&ms, done, done));
    printf("ms = %.1f\n", (double)ms);

    /* A never-recorded event is still "complete" after other events run. */
    MUST(conf_launch_sleep(s, 50 * CONF_MS));
    SHOW("while s is busy: hipEventQuery(never)", hipEventQuery(never));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));

    printf("-- hipEventCreateWithFlags\n");
    create_with("flags hipEventDefault", hipEventDefault);
    create_with("flags hipEventBlockingSync", hipEventBlockingSync);
    create_with("flags hipEventDisableTiming", hipEventDisableTiming);
    create_with("flags hipEventInterprocess", hipEventInterprocess);
    create_with("flags hipEventInterprocess|hipEventDisableTiming",
                hipEventInterprocess | hipEventDisableTiming);
    create_with("flags hipEventReleaseToDevice", hipEventReleaseToDevice);
    create_with("flags hipEventReleaseToSystem", hipEventReleaseToSystem);
    create_with("flags hipEventBlockingSync|hipEventDisableTiming",
                hipEventBlockingSync | hipEventDisableTiming);
    create_with("flags 0x8", 0x8);
    create_with("flags 0x100", 0x100);

    printf("-- hipEventRecordWithFlags\n");
    hipEvent_t a, b;
    MUST(hipEventCreate(&a));
    MUST(hipEventCreate(&b));
    SHOW("hipEventRecordWithFlags(a, s, hipEventRecordDefault)",
         hipEventRecordWithFlags(a, s, hipEventRecordDefault));
    MUST(conf_launch_sleep(s, 50 * CONF_MS));
    SHOW("hipEventRecordWithFlags(b, s, hipEventRecordExternal)",
         hipEventRecordWithFlags(b, s, hipEventRecordExternal));
    SHOW("right after: hipEventQuery(b)", hipEventQuery(b));
    SHOW("hipEventSynchronize(b)", hipEventSynchronize(b));
    SHOW("hipEventQuery(a)", hipEventQuery(a));
    SHOW("hipEventQuery(b)", hipEventQuery(b));
    SHOW("hipEventElapsedTime(a, b)", hipEventElapsedTime(&ms, a, b));
    printf("elapsed >= 50ms: %s\n", conf_yes(ms >= 50.0f - 0.001f));
    SHOW("hipEventRecordWithFlags(a, s, 0x4)", hipEventRecordWithFlags(a, s, 0x4));

    MUST(hipStreamSynchronize(s));
    MUST(hipEventDestroy(a));
    MUST(hipEventDestroy(b));
    MUST(hipEventDestroy(never));
    MUST(hipEventDestroy(never2));
    MUST(hipEventDestroy(done));
    MUST(hipFree(d));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
