/*
 * launch_rate.c - what a launch costs on a real GPU, through the CUDA driver API: empty-kernel
 * launches per second (asynchronous, synchronized every 1024) and the launch + synchronize
 * round trip, per thread, each thread on its own stream. Run it with and without
 * LD_PRELOAD=libgpuprio-cuda.so (bench/gpu/run.sh does, side by side).
 *
 *   launch_rate rate|roundtrip THREADS CALLS [low|high]
 *
 * The optional last argument creates one idle stream of the device's least (low) or greatest
 * (high) priority before the workers' streams, which have the default priority: with "low"
 * gpuprio follows the workers' commands with completion markers, with "high" it also holds
 * them to the in-flight window (the throttled path). The empty kernel is PTX, loaded at run
 * time, so no nvcc is needed.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
                          ".visible .entry empty()\n{\n\tret;\n}\n";

static CUcontext ctx;
static CUfunction fn;
static int roundtrip;
static long calls;

#define CHECK(call)                                                                                \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            cuGetErrorName(r_, &s_);                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct worker {
    pthread_barrier_t *start;
    double t0, t1;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    CUstream s;
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 100; i++)
        CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    CHECK(cuStreamSynchronize(s));
    pthread_barrier_wait(w->start);
    w->t0 = now_s();
    for (long i = 0; i < calls; i++) {
        CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
        if (roundtrip || i % 1024 == 1023)
            CHECK(cuStreamSynchronize(s));
    }
    CHECK(cuStreamSynchronize(s));
    w->t1 = now_s();
    CHECK(cuStreamDestroy(s));
    return NULL;
}

int main(int argc, char **argv)
{
    if ((argc != 4 && argc != 5) || (strcmp(argv[1], "rate") && strcmp(argv[1], "roundtrip")) ||
        (argc == 5 && strcmp(argv[4], "low") && strcmp(argv[4], "high"))) {
        fprintf(stderr, "usage: %s rate|roundtrip THREADS CALLS [low|high]\n", argv[0]);
        return 2;
    }
    roundtrip = strcmp(argv[1], "roundtrip") == 0;
    int threads = atoi(argv[2]);
    calls = atol(argv[3]);
    if (threads < 1 || threads > 64 || calls < 1)
        return 2;
    CUdevice dev;
    CUmodule mod;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&fn, mod, "empty"));
    CUstream idle = NULL;
    if (argc == 5) {
        int least, greatest;
        CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
        CHECK(cuStreamCreateWithPriority(&idle, CU_STREAM_NON_BLOCKING,
                                         strcmp(argv[4], "high") ? least : greatest));
    }
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    pthread_t tid[64];
    struct worker w[64];
    for (int i = 0; i < threads; i++) {
        w[i].start = &start;
        pthread_create(&tid[i], NULL, work, &w[i]);
    }
    double first = 1e30, last = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        first = w[i].t0 < first ? w[i].t0 : first;
        last = w[i].t1 > last ? w[i].t1 : last;
    }
    double per_call_us = (last - first) * 1e6 / (double)calls;
    printf("%s threads=%d idle-stream=%s: %.0f calls/s, %.3f us per call per thread\n", argv[1],
           threads, argc == 5 ? argv[4] : "none", (double)calls * threads / (last - first),
           per_call_us);
    if (idle)
        CHECK(cuStreamDestroy(idle));
    return 0;
}
