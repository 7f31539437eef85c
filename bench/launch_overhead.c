/*
 * launch_overhead.c - what the shim's observe-only path costs per call, on the simulator.
 *
 * Each thread makes CALLS calls on its own stream, of one kind: empty-kernel launches
 * (hipLaunchKernel of a kernel that takes no simulated time) or event records. The program
 * prints calls per second and nanoseconds per call. Run it with and without
 * LD_PRELOAD=libgpuprio-hip.so (bench/launch_overhead.sh does both, side by side); the
 * difference per call is the shim's overhead. The simulator's own cost per call is included on
 * both sides, so only the difference means anything.
 *
 * Usage: launch_overhead [launch|record] THREADS CALLS
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

static void *worker(void *arg)
{
    hipStream_t s;
    hipEvent_t e;
    dim3 one = {1, 1, 1};
    check(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags");
    check(hipEventCreateWithFlags(&e, hipEventDisableTiming), "hipEventCreateWithFlags");
    pthread_barrier_wait(arg);
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
    check(hipEventDestroy(e), "hipEventDestroy");
    check(hipStreamDestroy(s), "hipStreamDestroy");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "launch") && strcmp(argv[1], "record"))) {
        fprintf(stderr, "usage: %s launch|record THREADS CALLS\n", argv[0]);
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

    pthread_t tids[64];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&tids[i], NULL, worker, &start);
    pthread_barrier_wait(&start);
    uint64_t t0 = hipsimNowNs();
    for (int i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    double secs = (double)(hipsimNowNs() - t0) / 1e9;
    double total = (double)calls_per_thread * threads;
    printf("%s threads=%d calls=%.0f: %.0f calls/s, %.0f ns per call per thread\n", argv[1],
           threads, total, total / secs, secs * 1e9 / (double)calls_per_thread);
    pthread_barrier_destroy(&start);
    return 0;
}
