/*
 * ctx_reset.c - a CUDA driver-API program that destroys its context between phases of work, over
 * the fake driver (fake_cuda.c), for reset.sh: what it prints must not change under gpuprio, and
 * gpuprio must never touch a stream, event or host registration of a context that died (the fake
 * reports each such use on stderr, and counts them: the last line printed).
 *
 *   ctx_reset MODE [--shim]   PHASES phases of KERNELS kernels each on a created stream (and a
 *                             few on the null stream), with the context torn down between phases:
 *       reset     cuDevicePrimaryCtxReset, then the primary context retained and set again (the
 *                 H100 case of issue 37: the same handle comes back);
 *       destroy   each phase in a context of its own, cuCtxCreate'd and cuCtxDestroy'ed;
 *       release   the primary context's last cuDevicePrimaryCtxRelease, then retained again.
 *     --shim: it runs under gpuprio; then it also says on stderr how many of its stream waits
 *     (gpuprio's gates) the fake saw, for reset.sh, which checks that gates were put after the
 *     first teardown too.
 *   ctx_reset burst MS        the high-priority neighbour: bursts of five kernels of 2 ms on a
 *                             stream of its own, 20 ms apart, for MS milliseconds ("ready" on
 *                             stdout first).
 *
 * A fake kernel is a host function run at once by the launching thread (fake_cuda.c); each of
 * these sleeps a little, so that a phase overlaps the neighbour's burst.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_must.h"

#define PHASES 3
#define KERNELS 100

int fake_cuda_gate_waits(void);
int fake_cuda_stale_uses(void);

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* acc = acc * 31 + i, after a short sleep (the kernel's "run time"). */
static void step(void **params)
{
    unsigned long long *acc = params[0];
    unsigned i = *(unsigned *)params[1];
    sleep_us(*(long *)params[2]);
    *acc = *acc * 31 + i;
}

static void launch(CUstream s, unsigned long long *acc, unsigned i, long us)
{
    void *params[] = {acc, &i, &us};
    MUST(cuLaunchKernel((CUfunction)(void *)step, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
}

static void burst(long ms)
{
    CUcontext ctx;
    CUstream s;
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&s, 0));
    unsigned long long acc = 0;
    printf("ready\n");
    fflush(stdout);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0;; i++) {
        launch(s, &acc, i, 2000);
        if (i % 5 == 4) { /* bursts of 10 ms, 20 ms apart: the neighbour runs between them */
            MUST(cuStreamSynchronize(s));
            sleep_us(20000);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
            break;
    }
    MUST(cuStreamSynchronize(s));
    MUST(cuStreamDestroy(s));
    MUST(cuDevicePrimaryCtxRelease(0));
}

/* A context current to the thread for a phase: the primary one, or a created one. */
static CUcontext begin_phase(const char *mode)
{
    CUcontext ctx;
    if (strcmp(mode, "destroy") == 0) {
        MUST(cuCtxCreate(&ctx, NULL, 0, 0));
    } else {
        MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
        MUST(cuCtxSetCurrent(ctx));
    }
    return ctx;
}

static void end_phase(const char *mode, CUcontext ctx)
{
    if (strcmp(mode, "destroy") == 0)
        MUST(cuCtxDestroy(ctx));
    else if (strcmp(mode, "reset") == 0)
        MUST(cuDevicePrimaryCtxReset(0)); /* retained again by the next phase */
    else
        MUST(cuDevicePrimaryCtxRelease(0)); /* the last: it destroys the context */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ctx_reset reset|destroy|release [--shim] | burst MS\n");
        return 2;
    }
    MUST(cuInit(0));
    if (strcmp(argv[1], "burst") == 0) {
        burst(argc > 2 ? atol(argv[2]) : 1000);
        return 0;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "reset") && strcmp(mode, "destroy") && strcmp(mode, "release")) {
        fprintf(stderr, "ctx_reset: unknown mode %s\n", mode);
        return 2;
    }
    bool shim = argc > 2 && strcmp(argv[2], "--shim") == 0;
    int gates_before = 0;
    for (int phase = 0; phase < PHASES; phase++) {
        CUcontext ctx = begin_phase(mode);
        CUstream s;
        MUST(cuStreamCreate(&s, 0));
        unsigned long long acc = (unsigned long long)phase, null_acc = 0;
        for (unsigned i = 0; i < KERNELS; i++) {
            launch(s, &acc, i, 200);
            if (i % 10 == 0)
                launch(NULL, &null_acc, i, 0);
        }
        MUST(cuStreamSynchronize(s));
        MUST(cuCtxSynchronize());
        printf("phase %d: %llu %llu\n", phase, acc, null_acc);
        if (phase == 1)
            gates_before = fake_cuda_gate_waits();
        /* The stream is not destroyed: it dies with its context. */
        end_phase(mode, ctx);
    }
    if (shim)
        fprintf(stderr, "ctx_reset: gates %d after the first teardown, %d in all\n",
                fake_cuda_gate_waits() - gates_before, fake_cuda_gate_waits());
    printf("stale uses: %d\n", fake_cuda_stale_uses());
    return 0;
}
