/*
 * launch_overhead.c - what the shim's observe-only path costs per call, on the simulator.
 *
 * Each thread makes CALLS calls on its own stream, of one kind: empty-kernel launches
 * (hipLaunchKernel of a kernel that takes no simulated time) or event records. The program
 * prints calls per second and nanoseconds per call. Run it with and without
 * LD_PRELOAD=libgpuprio-hip.so (bench/launch_overhead.sh does both, side by side); the
 * difference per call is the shim's overhead. The simulator's own cost per call is included on
 * both sides, so only the difference means anything. launch_overhead_stub is the same program
 * on a runtime whose calls do nothing (stub_runtime.c): there the difference is the shim alone.
 *
 * The optional fourth argument adds one idle stream of another priority, created before the
 * workers' streams (which have the default priority): "low" makes gpuprio follow the workers'
 * queues with completion markers (priorities differ on the device: the tracked path), "high"
 * also throttles them to the in-flight window below the idle stream.
 *
 * Usage: launch_overhead launch|record THREADS CALLS [low|high]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipsim.h"

static const void *empty_kernel;
static int record_mode;
static long calls_per_thread;

static uint64_t empty(hipsimLaunch *l)
{
    (void)l;
    return 0;
}

static void check(hipError_t err, const char *what)
{
    if (err != hipSuccess) {
        fprintf(stderr, "%s: %s\n", what, hipGetErrorName(err));
        exit(1);
    }
}

/* Each worker times its own loop: a main thread descheduled after the start barrier would
 * otherwise miss the start. */
struct worker {
    pthread_barrier_t *start;
    uint64_t t0, t1;
};

static void *worker(void *arg)
{
    struct worker *w = arg;
    hipStream_t s;
    hipEvent_t e;
    dim3 one = {1, 1, 1};
    check(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags");
    check(hipEventCreateWithFlags(&e, hipEventDisableTiming), "hipEventCreateWithFlags");
    pthread_barrier_wait(w->start);
    w->t0 = hipsimNowNs();
    for (long i = 0; i < calls_per_thread; i++) {
        if (record_mode)
            check(hipEventRecord(e, s), "hipEventRecord");
        else
            check(hipLaunchKernel(empty_kernel, one, one, NULL, 0, s), "hipLaunchKernel");
        /* Keep the queue short, so memory use and the simulator's queues stay flat. */
        if (i % 1024 == 1023)
            check(hipStreamSynchronize(s), "hipStreamSynchronize");
    }
    check(hipStreamSynchronize(s), "hipStreamSynchronize");
    w->t1 = hipsimNowNs();
    check(hipEventDestroy(e), "hipEventDestroy");
    check(hipStreamDestroy(s), "hipStreamDestroy");
    return NULL;
}

int main(int argc, char **argv)
{
    if ((argc != 4 && argc != 5) || (strcmp(argv[1], "launch") && strcmp(argv[1], "record")) ||
        (argc == 5 && strcmp(argv[4], "low") && strcmp(argv[4], "high"))) {
        fprintf(stderr, "usage: %s launch|record THREADS CALLS [low|high]\n", argv[0]);
        return 2;
    }
    record_mode = strcmp(argv[1], "record") == 0;
    int threads = atoi(argv[2]);
    calls_per_thread = atol(argv[3]);
    if (threads < 1 || threads > 64 || calls_per_thread < 1) {
        fprintf(stderr, "THREADS must be 1..64 and CALLS positive\n");
        return 2;
    }
    empty_kernel = hipsimRegisterKernel("empty", empty, 0, NULL);
    check(hipSetDevice(0), "hipSetDevice");
    hipStream_t idle = NULL;
    if (argc == 5) {
        int least, greatest;
        check(hipDeviceGetStreamPriorityRange(&least, &greatest),
              "hipDeviceGetStreamPriorityRange");
        check(hipStreamCreateWithPriority(&idle, hipStreamNonBlocking,
                                          strcmp(argv[4], "high") ? least : greatest),
              "hipStreamCreateWithPriority");
    }

    pthread_t tids[64];
    struct worker workers[64];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (int i = 0; i < threads; i++) {
        workers[i].start = &start;
        pthread_create(&tids[i], NULL, worker, &workers[i]);
    }
    uint64_t first = UINT64_MAX, last = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tids[i], NULL);
        first = workers[i].t0 < first ? workers[i].t0 : first;
        last = workers[i].t1 > last ? workers[i].t1 : last;
    }
    double secs = (double)(last - first) / 1e9;
    double total = (double)calls_per_thread * threads;
    printf("%s threads=%d calls=%.0f idle-stream=%s: %.0f calls/s, %.1f ns per call per thread\n",
           argv[1], threads, total, argc == 5 ? argv[4] : "none", total / secs,
           secs * 1e9 / (double)calls_per_thread);
    if (idle)
        check(hipStreamDestroy(idle), "hipStreamDestroy");
    pthread_barrier_destroy(&start);
    return 0;
}
