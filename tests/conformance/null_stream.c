/*
 * null_stream.c - the legacy null stream's implicit synchronisation.
 *
 * A command on the null stream starts only after the work queued earlier on blocking streams,
 * and a command on a blocking stream starts only after the work queued earlier on the null
 * stream. Non-blocking streams are unordered with it. Each ordering is shown with a probe (a host
 * function, which takes no compute slot and so would run at once if nothing held it back, and a
 * kernel) that records whether a flag set at the end of the earlier work (a kernel held until the
 * program has looked, conf.h) was already set.
 */
#include "conf.h"

static atomic_int flag, obs_h, obs_k;
static conf_hset set_flag = {&flag, 1};
static conf_hprobe probe_h = {&flag, &obs_h};
static conf_hold work;

/* Timers on work: a synchronize that ought to wait for it gets it released soon; one that ought
 * not to wait has it released only after 2 s, so a wrong wait shows instead of hanging. */
#define SOON 20
#define LATE 2000

static void reset(void)
{
    conf_release(&work);
    MUST(hipDeviceSynchronize());
    atomic_store(&flag, 0);
    atomic_store(&obs_h, -1);
    atomic_store(&obs_k, -1);
}

/* On s: a held kernel, then a host function that sets flag. */
static void long_work(hipStream_t s)
{
    MUST(conf_launch_hold(s, &work));
    MUST(hipLaunchHostFunc(s, conf_host_set, &set_flag));
}

/* On s: a host function and a kernel that record the flag they see. */
static void probes(hipStream_t s)
{
    MUST(hipLaunchHostFunc(s, conf_host_probe, &probe_h));
    MUST(conf_launch_probe(s, &flag, &obs_k));
}

static void print_probes(const char *who)
{
    printf("%s host function saw the earlier work done: %s\n", who,
           conf_yes(atomic_load(&obs_h) == 1));
    printf("%s kernel saw the earlier work done: %s\n", who, conf_yes(atomic_load(&obs_k) == 1));
}

int main(void)
{
    conf_init();
    hipStream_t sb, snb;
    hipEvent_t e0, e1;
    int *d = NULL;
    MUST(hipStreamCreateWithFlags(&sb, hipStreamDefault));
    MUST(hipStreamCreateWithFlags(&snb, hipStreamNonBlocking));
    MUST(hipEventCreate(&e0));
    MUST(hipEventCreate(&e1));
    MUST(hipMalloc((void **)&d, sizeof(int)));
    MUST(hipMemset(d, 0, sizeof(int)));

    printf("-- null stream after earlier blocking-stream work\n");
    reset();
    long_work(sb);
    probes(0);
    MUST(hipEventRecord(e0, 0));
    conf_sleep_ms(20);
    SHOW("after 20 ms: hipEventQuery(record on null)", hipEventQuery(e0));
    conf_release_after(&work, SOON);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    print_probes("null-stream");

    printf("-- blocking stream after earlier null-stream work\n");
    reset();
    long_work(0);
    probes(sb);
    conf_sleep_ms(20);
    SHOW("after 20 ms: hipStreamQuery(blocking)", hipStreamQuery(sb));
    conf_release_after(&work, SOON);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    print_probes("blocking-stream");

    printf("-- hipStreamLegacy is the null stream\n");
    printf(
        "hipStreamLegacy has the identity of 0: %s\n",
        conf_yes(hipsimStreamId(hipStreamLegacy) == hipsimStreamId(0) && hipsimStreamId(0) != 0));
    reset();
    long_work(sb);
    probes(hipStreamLegacy);
    conf_release_after(&work, SOON);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    print_probes("hipStreamLegacy");
    reset();
    long_work(hipStreamLegacy);
    probes(sb);
    conf_release_after(&work, SOON);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    print_probes("blocking-after-legacy");

    printf("-- non-blocking stream work is not held back by a null-stream kernel\n");
    reset();
    MUST(conf_launch_hold(0, &work));
    MUST(hipMemsetAsync(d, 7, sizeof(int), snb));
    MUST(hipLaunchHostFunc(snb, conf_host_set, &set_flag));
    MUST(hipEventRecord(e1, snb));
    conf_release_after(&work, LATE);
    SHOW("hipStreamSynchronize(non-blocking)", hipStreamSynchronize(snb));
    SHOW("then hipStreamQuery(0)", hipStreamQuery(0));
    SHOW("then hipEventQuery(record on non-blocking)", hipEventQuery(e1));
    printf("non-blocking host function ran: %s\n", conf_yes(atomic_load(&flag) == 1));
    conf_release(&work);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    printf("memset value: 0x%08x\n", (unsigned)conf_read_int(d));

    printf("-- null-stream work is not held back by a non-blocking kernel\n");
    reset();
    MUST(conf_launch_hold(snb, &work));
    MUST(hipLaunchHostFunc(0, conf_host_set, &set_flag));
    MUST(hipEventRecord(e0, 0));
    conf_release_after(&work, LATE);
    SHOW("hipEventSynchronize(record on null)", hipEventSynchronize(e0));
    SHOW("then hipStreamQuery(non-blocking)", hipStreamQuery(snb));
    printf("null-stream host function ran: %s\n", conf_yes(atomic_load(&flag) == 1));
    conf_release(&work);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());

    printf("-- hipStreamSynchronize(0) and hipStreamQuery(0) cover blocking streams\n");
    reset();
    long_work(sb);
    SHOW("hipStreamQuery(0)", hipStreamQuery(0));
    SHOW("hipStreamQuery(hipStreamLegacy)", hipStreamQuery(hipStreamLegacy));
    conf_release_after(&work, SOON);
    SHOW("hipStreamSynchronize(0)", hipStreamSynchronize(0));
    printf("blocking stream's work done: %s\n", conf_yes(atomic_load(&flag) == 1));
    SHOW("then hipStreamQuery(blocking)", hipStreamQuery(sb));
    reset();
    long_work(sb);
    conf_release_after(&work, SOON);
    SHOW("hipStreamSynchronize(hipStreamLegacy)", hipStreamSynchronize(hipStreamLegacy));
    printf("blocking stream's work done: %s\n", conf_yes(atomic_load(&flag) == 1));

    printf("-- ... but not non-blocking streams\n");
    reset();
    long_work(snb);
    SHOW("hipStreamQuery(0)", hipStreamQuery(0));
    conf_release_after(&work, LATE);
    SHOW("hipStreamSynchronize(0)", hipStreamSynchronize(0));
    SHOW("then hipStreamQuery(non-blocking)", hipStreamQuery(snb));
    printf("non-blocking stream's work done: %s\n", conf_yes(atomic_load(&flag) == 1));
    conf_release(&work);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    SHOW("then hipStreamQuery(non-blocking)", hipStreamQuery(snb));
    printf("non-blocking stream's work done: %s\n", conf_yes(atomic_load(&flag) == 1));

    MUST(hipFree(d));
    MUST(hipEventDestroy(e0));
    MUST(hipEventDestroy(e1));
    MUST(hipStreamDestroy(sb));
    MUST(hipStreamDestroy(snb));
    return conf_done();
}
