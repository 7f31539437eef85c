/*
 * mps_client.c - a CUDA driver program as an MPS client sees itself, for mps.sh: the stream
 * priority that its cuStreamCreate got (gpuprio gives created streams the priority of the
 * process's gpuprio priority) and the SMs the driver lets it use (gpuprio settles an MPS client's
 * share before the driver starts). Linked against the fake driver (fake_cuda.c), whose MPS mode
 * is chosen by FAKE_CUDA_MPS.
 *
 *   mps_client [FIFO]
 *
 * Prints "stream priority P" (the first of two streams created with cuStreamCreate(..., 0)) and
 * "sms N" (cuCtxGetExecAffinity, SM count), then runs a kernel on each stream, so that both
 * queues join the device's board. With FIFO it then prints "ready" and blocks until a line (or
 * end of file) comes through FIFO, so that the test can look at the board with `gpuprio top`
 * while the process lives. Exits 0; a failed call prints FATAL and exits 1.
 */
#include <stdio.h>

#include "cuda_must.h"

/* The fake driver's "kernel" (a host function as the CUfunction): adds params[1] to *params[0]. */
static void add_kernel(void **params)
{
    *(int *)params[0] += *(int *)params[1];
}

int main(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "usage: mps_client [FIFO]\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUstream streams[2];
    MUST(cuInit(0));
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
    MUST(cuCtxSetCurrent(ctx));
    for (int i = 0; i < 2; i++)
        MUST(cuStreamCreate(&streams[i], 0));

    int priority;
    MUST(cuStreamGetPriority(streams[0], &priority));
    printf("stream priority %d\n", priority);
    CUexecAffinityParam sms;
    MUST(cuCtxGetExecAffinity(&sms, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
    printf("sms %u\n", sms.param.smCount.val);

    int sum = 0, one = 1;
    void *params[] = {&sum, &one};
    for (int i = 0; i < 2; i++)
        MUST(cuLaunchKernel((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, streams[i], params,
                            NULL));
    for (int i = 0; i < 2; i++)
        MUST(cuStreamSynchronize(streams[i]));
    if (sum != 2) {
        printf("FATAL: the kernels added up to %d, not 2\n", sum);
        return 1;
    }

    if (argc == 2) {
        printf("ready\n");
        fflush(stdout);
        FILE *f = fopen(argv[1], "r");
        if (!f) {
            printf("FATAL: cannot open %s\n", argv[1]);
            return 1;
        }
        char line[64];
        if (!fgets(line, sizeof line, f) && ferror(f)) {
            printf("FATAL: cannot read %s\n", argv[1]);
            return 1;
        }
        fclose(f);
    }
    for (int i = 0; i < 2; i++)
        MUST(cuStreamDestroy(streams[i]));
    MUST(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
