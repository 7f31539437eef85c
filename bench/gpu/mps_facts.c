/*
 * mps_facts.c - what the CUDA driver tells a process about MPS (docs/mps.md), no gpuprio code:
 * the MPS attribute (CU_DEVICE_ATTRIBUTE_MPS_ENABLED, 133), whether SM-count execution affinity
 * is supported (only under Volta+ MPS), the stream priority range, and the SMs the primary context
 * may use (cuCtxGetExecAffinity) when CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is given: in the
 * environment from the start ("env"), or set by the process after cuInit and before the primary
 * context exists ("late", argument PERCENT): which is what a preloaded library could do.
 *
 * Build: gcc -O2 -I/usr/local/cuda/include bench/gpu/mps_facts.c -o mps_facts -lcuda
 * Run:   ./mps_facts [PERCENT]
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CKD(x)                                                                                     \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            cuGetErrorString(r_, &s_);                                                             \
            printf("%s: %s\n", #x, s_);                                                            \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    CKD(cuInit(0));
    CUdevice d;
    CKD(cuDeviceGet(&d, 0));
    int mps = -1, sms = 0, affinity = -1;
    CUresult r = cuDeviceGetAttribute(&mps, (CUdevice_attribute)133, d);
    CKD(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d));
    CUresult ra = cuDeviceGetExecAffinitySupport(&affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT, d);
    printf("MPS attribute: %d (%s); SM-count affinity supported: %d (%s); SMs: %d\n", mps,
           r == CUDA_SUCCESS ? "ok" : "error", affinity, ra == CUDA_SUCCESS ? "ok" : "error", sms);
    const char *env = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (argc > 1)
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", argv[1], 1);
    CUcontext ctx;
    CKD(cuDevicePrimaryCtxRetain(&ctx, d));
    CKD(cuCtxSetCurrent(ctx));
    CUexecAffinityParam p = {0};
    r = cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
    int least = 0, greatest = 0;
    CKD(cuCtxGetStreamPriorityRange(&least, &greatest));
    printf("percentage: env %s, late %s; primary context SMs: %u (%s); stream priorities %d..%d\n",
           env ? env : "-", argc > 1 ? argv[1] : "-", p.param.smCount.val,
           r == CUDA_SUCCESS ? "ok" : "error", least, greatest);
    cuDevicePrimaryCtxRelease(d);
    return 0;
}
