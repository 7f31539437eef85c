/*
 * null_stream.cu - CUDA port of tests/conformance/null_stream.c: the legacy null stream's
 * implicit synchronisation. A command on the null stream starts only after the work queued
 * earlier on blocking streams, and a command on a blocking stream only after earlier null-stream
 * work; non-blocking streams are unordered with it. Each ordering is shown with probes (a host
 * function and a kernel) that record whether a flag, set at the end of the earlier 60 ms work,
 * was already set.
 */
#include "conf_cuda.h"

static volatile int *flag, *obs_h, *obs_k;
static conf_hset set_flag;
static conf_hprobe probe_h;

static void reset(void)
{
    MUST(cudaDeviceSynchronize());
    *flag = 0;
    *obs_h = -1;
    *obs_k = -1;
}

static void long_work(cudaStream_t s)
{
    k_sleep<<<1, 1, 0, s>>>(60 * CONF_MS);
    MUST(cudaGetLastError());
    MUST(cudaLaunchHostFunc(s, conf_host_set, &set_flag));
}

static void probes(cudaStream_t s)
{
    MUST(cudaLaunchHostFunc(s, conf_host_probe, &probe_h));
    k_probe<<<1, 1, 0, s>>>(conf_dev(flag), conf_dev(obs_k));
    MUST(cudaGetLastError());
}

static void print_probes(const char *who)
{
    printf("%s host function saw the earlier work done: %s\n", who, conf_yes(*obs_h == 1));
    printf("%s kernel saw the earlier work done: %s\n", who, conf_yes(*obs_k == 1));
}

int main(void)
{
    flag = conf_mapped<int>(1);
    obs_h = conf_mapped<int>(1);
    obs_k = conf_mapped<int>(1);
    set_flag = conf_hset{flag, 1};
    probe_h = conf_hprobe{flag, obs_h};
    cudaStream_t sb, snb;
    cudaEvent_t e0, e1;
    int *d = NULL;
    MUST(cudaStreamCreateWithFlags(&sb, cudaStreamDefault));
    MUST(cudaStreamCreateWithFlags(&snb, cudaStreamNonBlocking));
    MUST(cudaEventCreate(&e0));
    MUST(cudaEventCreate(&e1));
    MUST(cudaMalloc((void **)&d, sizeof(int)));
    MUST(cudaMemset(d, 0, sizeof(int)));

    printf("-- null stream after earlier blocking-stream work\n");
    reset();
    long_work(sb);
    probes(0);
    MUST(cudaEventRecord(e0, 0));
    conf_sleep_ms(20);
    SHOW("after 20 ms: cudaEventQuery(record on null)", cudaEventQuery(e0));
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());
    print_probes("null-stream");

    printf("-- blocking stream after earlier null-stream work\n");
    reset();
    long_work(0);
    probes(sb);
    conf_sleep_ms(20);
    SHOW("after 20 ms: cudaStreamQuery(blocking)", cudaStreamQuery(sb));
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());
    print_probes("blocking-stream");

    printf("-- cudaStreamLegacy is the null stream\n");
    reset();
    long_work(sb);
    probes(cudaStreamLegacy);
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());
    print_probes("cudaStreamLegacy");
    reset();
    long_work(cudaStreamLegacy);
    probes(sb);
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());
    print_probes("blocking-after-legacy");

    printf("-- non-blocking stream work is not held back by a null-stream kernel\n");
    reset();
    k_sleep<<<1, 1, 0, 0>>>(100 * CONF_MS);
    MUST(cudaMemsetAsync(d, 7, sizeof(int), snb));
    MUST(cudaLaunchHostFunc(snb, conf_host_set, &set_flag));
    MUST(cudaEventRecord(e1, snb));
    SHOW("cudaStreamSynchronize(non-blocking)", cudaStreamSynchronize(snb));
    SHOW("then cudaStreamQuery(0)", cudaStreamQuery(0));
    SHOW("then cudaEventQuery(record on non-blocking)", cudaEventQuery(e1));
    printf("non-blocking host function ran: %s\n", conf_yes(*flag == 1));
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());
    int h = 0;
    MUST(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    printf("memset value: 0x%08x\n", (unsigned)h);

    printf("-- null-stream work is not held back by a non-blocking kernel\n");
    reset();
    k_sleep<<<1, 1, 0, snb>>>(100 * CONF_MS);
    MUST(cudaLaunchHostFunc(0, conf_host_set, &set_flag));
    MUST(cudaEventRecord(e0, 0));
    SHOW("cudaEventSynchronize(record on null)", cudaEventSynchronize(e0));
    SHOW("then cudaStreamQuery(non-blocking)", cudaStreamQuery(snb));
    printf("null-stream host function ran: %s\n", conf_yes(*flag == 1));
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());

    printf("-- cudaStreamSynchronize(0) and cudaStreamQuery(0) cover blocking streams\n");
    reset();
    long_work(sb);
    SHOW("cudaStreamQuery(0)", cudaStreamQuery(0));
    SHOW("cudaStreamQuery(cudaStreamLegacy)", cudaStreamQuery(cudaStreamLegacy));
    SHOW("cudaStreamSynchronize(0)", cudaStreamSynchronize(0));
    printf("blocking stream's work done: %s\n", conf_yes(*flag == 1));
    SHOW("then cudaStreamQuery(blocking)", cudaStreamQuery(sb));
    reset();
    long_work(sb);
    SHOW("cudaStreamSynchronize(cudaStreamLegacy)", cudaStreamSynchronize(cudaStreamLegacy));
    printf("blocking stream's work done: %s\n", conf_yes(*flag == 1));

    printf("-- ... but not non-blocking streams\n");
    reset();
    long_work(snb);
    SHOW("cudaStreamQuery(0)", cudaStreamQuery(0));
    SHOW("cudaStreamSynchronize(0)", cudaStreamSynchronize(0));
    SHOW("then cudaStreamQuery(non-blocking)", cudaStreamQuery(snb));
    printf("non-blocking stream's work done: %s\n", conf_yes(*flag == 1));
    SHOW("cudaDeviceSynchronize", cudaDeviceSynchronize());
    SHOW("then cudaStreamQuery(non-blocking)", cudaStreamQuery(snb));
    printf("non-blocking stream's work done: %s\n", conf_yes(*flag == 1));

    MUST(cudaFree(d));
    MUST(cudaEventDestroy(e0));
    MUST(cudaEventDestroy(e1));
    MUST(cudaStreamDestroy(sb));
    MUST(cudaStreamDestroy(snb));
    return conf_done();
}
