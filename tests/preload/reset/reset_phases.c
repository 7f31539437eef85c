/*
 * reset_phases.c - a HIP program that resets its device between phases of work, on the simulated
 * device (tests/sim), for reset.sh: what it prints must not change under gpuprio, and gpuprio must
 * never use a stream, event or host registration that hipDeviceReset destroyed (the simulator
 * reports each such use on stderr and counts them: the last line printed).
 *
 *   reset_phases phases      3 phases of 100 kernels of 200 us on a created stream (and every
 *                            tenth on the null stream too), with hipDeviceReset between phases; the
 *                            created stream is not destroyed: it dies with the reset.
 *   reset_phases other       device 0 reset again and again while a thread puts 3000 kernels of
 *                            30 us on a created stream of device 1 (HIPSIM_DEVICES=2), 100 at a
 *                            time: resetting one device must leave what another works with alone.
 *   reset_phases burst MS [DEVICE]
 *                            the high-priority neighbour: bursts of five kernels of 2 ms on a
 *                            stream of its own on DEVICE (0 unless given), 20 ms apart, for MS
 *                            milliseconds ("ready" on stdout first).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hipsim.h"

#define PHASES 3
#define KERNELS 100

#define MUST(call)                                                                                 \
    do {                                                                                           \
        hipError_t must_r = (call);                                                                \
        if (must_r != hipSuccess) {                                                                \
            printf("FATAL: %s -> %d\n", #call, (int)must_r);                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* acc = acc * 31 + i, taking `ns` of the device. */
static uint64_t step(hipsimLaunch *l)
{
    unsigned long long *acc = *(unsigned long long **)l->args[0];
    unsigned i = *(unsigned *)l->args[1];
    *acc = *acc * 31 + i;
    return *(uint64_t *)l->args[2];
}

static const void *kernel;

static void launch(hipStream_t s, unsigned long long *acc, unsigned i, uint64_t ns)
{
    void *args[] = {&acc, &i, &ns};
    dim3 one = {1, 1, 1};
    MUST(hipLaunchKernel(kernel, one, one, args, 0, s));
}

static uint64_t now_ms(void)
{
    return hipsimNowNs() / 1000000;
}

static void burst(uint64_t ms, int device)
{
    hipStream_t s;
    unsigned long long acc = 0;
    MUST(hipSetDevice(device));
    MUST(hipStreamCreate(&s));
    printf("ready\n");
    fflush(stdout);
    uint64_t end = now_ms() + ms;
    for (unsigned i = 0; now_ms() < end; i++) {
        launch(s, &acc, i, 2000000);
        if (i % 5 == 4) { /* bursts of 10 ms, 20 ms apart: the neighbour runs between them */
            MUST(hipStreamSynchronize(s));
            struct timespec gap = {0, 20000000};
            nanosleep(&gap, NULL);
        }
    }
    MUST(hipStreamSynchronize(s));
}

static atomic_bool other_done;

static void *work_on_device_1(void *arg)
{
    unsigned long long *acc = arg;
    hipStream_t s;
    MUST(hipSetDevice(1));
    MUST(hipStreamCreate(&s));
    for (unsigned i = 0; i < 3000; i++) {
        launch(s, acc, i, 30000);
        if (i % 100 == 99) /* its launches go on while device 0 is reset */
            MUST(hipStreamSynchronize(s));
    }
    MUST(hipStreamDestroy(s));
    atomic_store(&other_done, true);
    return NULL;
}

/* Device 0 is reset while device 1 works: nothing of device 0 runs meanwhile. */
static void other(void)
{
    unsigned long long acc = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, work_on_device_1, &acc) != 0)
        exit(2);
    while (!atomic_load(&other_done)) {
        MUST(hipDeviceReset());
        struct timespec gap = {0, 1000000};
        nanosleep(&gap, NULL);
    }
    pthread_join(t, NULL);
    printf("device 1: %llu\n", acc);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {sizeof(void *), sizeof(unsigned), sizeof(uint64_t)};
    kernel = hipsimRegisterKernel("step", step, 3, sizes);
    if (argc > 1 && strcmp(argv[1], "burst") == 0) {
        burst(argc > 2 ? strtoull(argv[2], NULL, 10) : 1000, argc > 3 ? atoi(argv[3]) : 0);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "other") == 0) {
        other();
        printf("stale uses: %llu\n", (unsigned long long)hipsimStaleUses());
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "phases") != 0) {
        fprintf(stderr, "usage: reset_phases phases | other | burst MS [DEVICE]\n");
        return 2;
    }
    for (int phase = 0; phase < PHASES; phase++) {
        hipStream_t s;
        MUST(hipStreamCreate(&s));
        unsigned long long acc = (unsigned long long)phase, null_acc = 0;
        for (unsigned i = 0; i < KERNELS; i++) {
            launch(s, &acc, i, 200000);
            if (i % 10 == 0)
                launch(NULL, &null_acc, i, 0);
        }
        MUST(hipStreamSynchronize(s));
        MUST(hipDeviceSynchronize());
        printf("phase %d: %llu %llu\n", phase, acc, null_acc);
        MUST(hipDeviceReset());
    }
    printf("stale uses: %llu\n", (unsigned long long)hipsimStaleUses());
    return 0;
}
