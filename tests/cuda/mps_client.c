/*
 * mps_client.c - a CUDA driver program as an MPS client sees itself, for mps.sh: the stream
 * priority that its cuStreamCreate got (gpuprio gives created streams the priority of the
 * process's gpuprio priority) and the SMs the driver lets it use (gpuprio settles an MPS client's
 * share before the driver starts). Linked against the fake driver (fake_cuda.c), whose MPS mode
 * is chosen by FAKE_CUDA_MPS.
 *
 *   mps_client [FIFO [KERNEL_MS]]
 *
 * Prints "stream priority P" (the first of two streams created with cuStreamCreate(..., 0)) and
 * "sms N" (cuCtxGetExecAffinity, SM count), then runs a kernel on each stream, so that both
 * queues join the device's board. With FIFO it then prints "ready" and blocks until a line (or
 * end of file) comes through FIFO, so that the test can look at the board with `gpuprio top`
 * while the process lives; with KERNEL_MS as well, it meanwhile runs kernels of that many
 * milliseconds on its first stream, one after the other, each a graph launch (a load of long
 * kernels). Exits 0; a failed call prints FATAL and exits 1.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuda_must.h"

/* The fake driver's "kernel" (a host function as the CUfunction): adds params[1] to *params[0]. */
static void add_kernel(void **params)
{
    *(int *)params[0] += *(int *)params[1];
}

/* A kernel of params[0]'s milliseconds: the fake driver runs it on the launching thread. */
static void long_kernel(void **params)
{
    long ms = *(long *)params[0];
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static atomic_bool released, release_failed;

/* Waits for a line (or end of file) through FIFO: 0, or -1 when it cannot be read. */
static int wait_for_line(const char *fifo)
{
    FILE *f = fopen(fifo, "r");
    if (!f) {
        printf("FATAL: cannot open %s\n", fifo);
        return -1;
    }
    char line[64];
    int r = !fgets(line, sizeof line, f) && ferror(f) ? -1 : 0;
    if (r)
        printf("FATAL: cannot read %s\n", fifo);
    fclose(f);
    return r;
}

static void *release_on_line(void *fifo)
{
    atomic_store(&release_failed, wait_for_line(fifo) != 0);
    atomic_store(&released, true);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "usage: mps_client [FIFO [KERNEL_MS]]\n");
        return 2;
    }
    long kernel_ms = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
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

    if (argc >= 2) {
        printf("ready\n");
        fflush(stdout);
        if (kernel_ms <= 0 && wait_for_line(argv[1]))
            return 1;
    }
    if (kernel_ms > 0) {
        pthread_t waiter;
        if (pthread_create(&waiter, NULL, release_on_line, argv[1])) {
            printf("FATAL: no thread to wait on %s\n", argv[1]);
            return 1;
        }
        /* A graph of the kernel: the fake driver runs a launched graph on a thread of its own,
         * so its time is the GPU time gpuprio learns (a plain kernel runs within its launch). */
        void *long_params[] = {&kernel_ms};
        CUDA_KERNEL_NODE_PARAMS node_params = one_thread_node(long_kernel, long_params);
        CUgraph graph;
        CUgraphNode node;
        CUgraphExec exec;
        MUST(cuGraphCreate(&graph, 0));
        MUST(cuGraphAddKernelNode(&node, graph, NULL, 0, &node_params));
        MUST(cuGraphInstantiateWithFlags(&exec, graph, 0));
        while (!atomic_load(&released)) {
            MUST(cuGraphLaunch(exec, streams[0]));
            MUST(cuStreamSynchronize(streams[0]));
        }
        pthread_join(waiter, NULL);
        MUST(cuGraphExecDestroy(exec));
        MUST(cuGraphDestroy(graph));
    }
    for (int i = 0; i < 2; i++)
        MUST(cuStreamDestroy(streams[i]));
    MUST(cuDevicePrimaryCtxRelease(dev));
    return atomic_load(&release_failed) ? 1 : 0; /* its FATAL line printed */
}
