/*
 * activation.c - what a scheduled client's call costs when its queue becomes active, next to
 * queues that never run (PyTorch creates its pools of streams whole: about 145 per process).
 *
 * One process of a group, on a simulated device that the group shares (HIPSIM_SHARED):
 * it creates IDLE streams that never run anything and one stream it uses. Process 0 is the
 * client (GPUPRIO_PRIORITY=high, set by activation.sh): it launches one empty kernel, waits
 * for it, sleeps GAP_US so that its queue goes idle (well past the grace window), and does that
 * CALLS times, timing each launch call: under gpuprio, each one activates the queue (the
 * scheduling lock, a decision over the device, the board). The other processes (low priority)
 * warm their stream up once and stay idle, so they take part in every decision. Prints the
 * client's P50 and P99 in microseconds.
 *
 * Usage: activation client|other IDLE CALLS GAP_US   (an other stays until the file named by
 * ACTIVATION_DONE exists)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hipsim.h"

static uint64_t empty(hipsimLaunch *l)
{
    (void)l;
    return 0;
}

static void check(hipError_t err, const char *what)
{
    if (err != hipSuccess) {
        fprintf(stderr, "activation: %s: %s\n", what, hipGetErrorName(err));
        exit(1);
    }
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: activation client|other IDLE CALLS GAP_US\n");
        return 2;
    }
    bool client = strcmp(argv[1], "client") == 0;
    int idle = atoi(argv[2]), calls = atoi(argv[3]);
    long gap_us = atol(argv[4]);
    const void *kernel = hipsimRegisterKernel("empty", empty, 0, NULL);
    hipStream_t s;
    check(hipStreamCreate(&s), "hipStreamCreate");
    for (int i = 0; i < idle; i++) {
        hipStream_t unused;
        check(hipStreamCreate(&unused), "hipStreamCreate (idle)");
    }
    dim3 one = {1, 1, 1};
    check(hipLaunchKernel(kernel, one, one, NULL, 0, s), "warm-up launch");
    check(hipStreamSynchronize(s), "hipStreamSynchronize");
    if (!client) {
        const char *done = getenv("ACTIVATION_DONE");
        printf("ready\n");
        fflush(stdout);
        struct timespec poll = {0, 10000000};
        while (done && access(done, F_OK) != 0)
            nanosleep(&poll, NULL);
        return 0;
    }
    uint64_t *took = calloc((size_t)calls, sizeof *took);
    if (!took)
        return 1;
    struct timespec gap = {gap_us / 1000000, gap_us % 1000000 * 1000};
    for (int i = 0; i < calls; i++) {
        nanosleep(&gap, NULL);
        uint64_t t0 = hipsimNowNs();
        check(hipLaunchKernel(kernel, one, one, NULL, 0, s), "hipLaunchKernel");
        took[i] = hipsimNowNs() - t0;
        check(hipStreamSynchronize(s), "hipStreamSynchronize");
    }
    qsort(took, (size_t)calls, sizeof *took, by_value);
    printf("%.1f %.1f\n", (double)took[calls / 2] / 1e3, (double)took[calls * 99 / 100] / 1e3);
    return 0;
}
