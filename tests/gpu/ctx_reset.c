/*
 * ctx_reset.c - a CUDA driver-API program that tears its context down between phases, for the GPU
 * pass (run.sh, "reset"): the case of issue 37, which died with SIGSEGV under gpuprio at low
 * priority next to a bursting high-priority process. What it prints must be the same with and
 * without gpuprio, and it must exit 0.
 *
 *   ctx_reset MODE PTX   3 phases; each loads PTX (ctx_kernels.cu, the kernel "step") in its
 *                        context, allocates an accumulator, creates a stream, runs 100 kernels of
 *                        200 us on it and every tenth also on the null stream, copies the results
 *                        back and prints them; then the context is torn down, with the stream, the
 *                        module and the memory still in it:
 *     reset    cuDevicePrimaryCtxReset; the next phase retains the primary context and sets it
 *              current again (the same handle comes back);
 *     destroy  each phase in a context of its own: cuCtxCreate, then cuCtxDestroy;
 *     release  the primary context's last cuDevicePrimaryCtxRelease; retained again next phase.
 *
 * Builds with cc -I/usr/local/cuda/include ctx_reset.c -lcuda (C11, the driver API only).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHASES 3
#define KERNELS 100
#define SPIN_NS 200000ull

#define MUST(call)                                                                                 \
    do {                                                                                           \
        CUresult must_r = (call);                                                                  \
        if (must_r != CUDA_SUCCESS) {                                                              \
            const char *must_name = "?";                                                           \
            cuGetErrorName(must_r, &must_name);                                                    \
            printf("FATAL: %s -> %s\n", #call, must_name);                                         \
            fflush(stdout);                                                                        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void launch(CUfunction f, CUstream s, CUdeviceptr acc, unsigned i, unsigned long long ns)
{
    void *params[] = {&acc, &i, &ns};
    MUST(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
}

int main(int argc, char **argv)
{
    if (argc != 3 ||
        (strcmp(argv[1], "reset") && strcmp(argv[1], "destroy") && strcmp(argv[1], "release"))) {
        fprintf(stderr, "usage: ctx_reset reset|destroy|release PTX\n");
        return 2;
    }
    const char *mode = argv[1];
    CUdevice dev;
    MUST(cuInit(0));
    MUST(cuDeviceGet(&dev, 0));
    for (int phase = 0; phase < PHASES; phase++) {
        CUcontext ctx;
        if (strcmp(mode, "destroy") == 0) {
#if CUDA_VERSION >= 13000
            MUST(cuCtxCreate(&ctx, NULL, 0, dev));
#else
            MUST(cuCtxCreate(&ctx, 0, dev));
#endif
        } else {
            MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
            MUST(cuCtxSetCurrent(ctx));
        }
        CUmodule mod;
        CUfunction f;
        CUdeviceptr acc, null_acc;
        CUstream s;
        MUST(cuModuleLoad(&mod, argv[2]));
        MUST(cuModuleGetFunction(&f, mod, "step"));
        MUST(cuMemAlloc(&acc, sizeof(unsigned long long)));
        MUST(cuMemAlloc(&null_acc, sizeof(unsigned long long)));
        MUST(cuMemsetD32(acc, (unsigned)phase, 2));
        MUST(cuMemsetD32(null_acc, 0, 2));
        MUST(cuStreamCreate(&s, CU_STREAM_DEFAULT));
        for (unsigned i = 0; i < KERNELS; i++) {
            launch(f, s, acc, i, SPIN_NS);
            if (i % 10 == 0)
                launch(f, NULL, null_acc, i, 0);
        }
        MUST(cuStreamSynchronize(s));
        MUST(cuCtxSynchronize());
        unsigned long long a = 0, b = 0;
        MUST(cuMemcpyDtoH(&a, acc, sizeof a));
        MUST(cuMemcpyDtoH(&b, null_acc, sizeof b));
        printf("phase %d: %llu %llu\n", phase, a, b);
        fflush(stdout);
        /* The stream, module and memory are left to die with the context. */
        if (strcmp(mode, "destroy") == 0)
            MUST(cuCtxDestroy(ctx));
        else if (strcmp(mode, "reset") == 0)
            MUST(cuDevicePrimaryCtxReset(dev));
        else
            MUST(cuDevicePrimaryCtxRelease(dev));
    }
    printf("done\n");
    return 0;
}
