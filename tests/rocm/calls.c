/*
 * calls.c - HIP calls of every version node the headers in use declare, each printed with its
 * result, for the real-runtime stage (scripts/test-rocm.sh, docs/testing-stages.md).
 *
 * The stage runs these in roots with Debian's real HIP 6.4.3 and 7.2.4 runtimes and no GPU,
 * without and with the shim built on Debian 12 preloaded, and requires the same output and exit
 * status. Without a GPU almost every call answers hipErrorNoDevice, so this cannot show
 * scheduling; it shows that one shim binary binds to each runtime's symbols in their version
 * nodes (hip_6.4, hip_6.5, hip_7.1, hip_7.2 among them), forwards every call, passes results and
 * the last-error state through, and leaves the process's exit alone. Pointers are never printed:
 * under the shim, lookups answer with its wrappers.
 */
#include "calls.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library's own declarations for what the headers in use lack: hip_ext.h declares
 * hipExtModuleLaunchKernel and hipHccModuleLaunchKernel for C++ only, and 6.4 and 7.x export both
 * under their C names (hip_4.2). */
#include "hip_compat.h"

static int calls;

#define SHOW(call) (calls++, printf("%-44s -> %d\n", #call, (int)(call)))

int show_calls(void)
{
    int count = -1, version = -1;
    hipStream_t stream = NULL;
    hipEvent_t event = NULL;
    dim3 one = {1, 1, 1};

    printf("headers: HIP %d.%d\n", HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
    SHOW(hipGetDeviceCount(&count));
    printf("count = %d\n", count);
    SHOW(hipRuntimeGetVersion(&version));
    printf("runtime version = %d\n", version);
    SHOW(hipStreamCreate(&stream));
    SHOW(hipStreamCreateWithPriority(&stream, 0, -1));
    SHOW(hipEventCreate(&event));
    SHOW(hipEventRecord(event, NULL));
    SHOW(hipLaunchKernel((const void *)show_calls, one, one, NULL, 0, NULL));
    SHOW(hipLaunchKernel_spt((const void *)show_calls, one, one, NULL, 0, hipStreamLegacy));
    SHOW(hipModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    SHOW(hipMemsetAsync(NULL, 0, 0, NULL));
    SHOW(hipStreamWaitEvent(NULL, event, 0));
    SHOW(hipStreamSynchronize(NULL));
    SHOW(hipStreamQuery(NULL));
    SHOW(hipDeviceSynchronize());
    SHOW(hipPeekAtLastError());
    SHOW(hipGetLastError());
    SHOW(hipGetLastError());

    /* Graphs: what gpuprio intercepts of them (hip_api.def's GRAPH_* kinds), on no graph. */
    {
        hipGraphExec_t exec = NULL;
        hipGraphNode_t node = NULL;
        hipGraphExecUpdateResult update = hipGraphExecUpdateSuccess;
        SHOW(hipGraphInstantiate(&exec, NULL, &node, NULL, 0));
        SHOW(hipGraphInstantiateWithFlags(&exec, NULL, 0));
        SHOW(hipGraphLaunch(NULL, NULL));
        SHOW(hipGraphExecKernelNodeSetParams(NULL, NULL, NULL));
        SHOW(hipGraphExecUpdate(NULL, NULL, &node, &update));
        SHOW(hipGraphExecMemcpyNodeSetParams(NULL, NULL, NULL));
        SHOW(hipGraphExecMemcpyNodeSetParams1D(NULL, NULL, NULL, NULL, 0, hipMemcpyDefault));
        SHOW(hipGraphExecMemcpyNodeSetParamsFromSymbol(NULL, NULL, NULL, NULL, 0, 0,
                                                       hipMemcpyDefault));
        SHOW(hipGraphExecMemcpyNodeSetParamsToSymbol(NULL, NULL, NULL, NULL, 0, 0,
                                                     hipMemcpyDefault));
        SHOW(hipGraphExecMemsetNodeSetParams(NULL, NULL, NULL));
        SHOW(hipGraphExecHostNodeSetParams(NULL, NULL, NULL));
        SHOW(hipGraphExecChildGraphNodeSetParams(NULL, NULL, NULL));
        SHOW(hipGraphExecEventRecordNodeSetEvent(NULL, NULL, NULL));
        SHOW(hipGraphExecEventWaitNodeSetEvent(NULL, NULL, NULL));
        SHOW(hipGraphExecDestroy(NULL));
    }
#if GP_HIP_AT_LEAST(6, 4)
    SHOW(hipGraphUpload(NULL, NULL));
    SHOW(hipGraphLaunch_spt(NULL, NULL));
    SHOW(hipGraphNodeSetEnabled(NULL, NULL, 0));
    SHOW(hipGraphExecNodeSetParams(NULL, NULL, NULL));
    SHOW(hipDrvGraphExecMemcpyNodeSetParams(NULL, NULL, NULL, NULL));
    SHOW(hipDrvGraphExecMemsetNodeSetParams(NULL, NULL, NULL, NULL));
    SHOW(hipGraphExecBatchMemOpNodeSetParams(NULL, NULL, NULL));
#endif
    /* Left out (hip_5.3 names, exported by 7.2's library only): 7.2.4's export of each tail-jumps
     * through a NULL entry of its dispatch table, a SIGSEGV at address 0 whatever the arguments,
     * without the shim, so no form of the call can be compared. */
    /* hipGraphExecExternalSemaphoresSignalNodeSetParams: NULL table entry in 7.2.4 (SIGSEGV) */
    /* hipGraphExecExternalSemaphoresWaitNodeSetParams: NULL table entry in 7.2.4 (SIGSEGV) */
#if GP_HIP_AT_LEAST(6, 1)
    {
        void *fn = NULL;
        hipDriverProcAddressQueryResult status = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        SHOW(hipGetProcAddress("hipStreamQuery", &fn, HIP_VERSION_MAJOR * 100, 0, &status));
        printf("hipGetProcAddress: status %d, %s\n", (int)status, fn ? "found" : "NULL");
        if (fn)
            SHOW(((hipError_t(*)(hipStream_t))fn)(NULL));
    }
#endif
#if GP_HIP_AT_LEAST(6, 4)
    SHOW(hipExtModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, NULL, NULL, 0));
    SHOW(hipHccModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, NULL, NULL));
    SHOW(hipEventRecordWithFlags(event, NULL, 0));
    SHOW(hipStreamBatchMemOp(NULL, 0, NULL, 0));
#endif
#if GP_HIP_AT_LEAST(6, 5)
    {
        hipLaunchConfig_t config;
        HIP_LAUNCH_CONFIG driver_config;
        memset(&config, 0, sizeof config);
        memset(&driver_config, 0, sizeof driver_config);
        config.gridDim = config.blockDim = one;
        driver_config.gridDimX = driver_config.gridDimY = driver_config.gridDimZ = 1;
        driver_config.blockDimX = driver_config.blockDimY = driver_config.blockDimZ = 1;
        SHOW(hipLaunchKernelExC(&config, (const void *)show_calls, NULL));
        SHOW(hipDrvLaunchKernelEx(&driver_config, NULL, NULL, NULL));
    }
#endif
#if GP_HIP_AT_LEAST(7, 1)
    {
        unsigned long long id = 0;
        hipStreamAttrValue value;
        hipMemLocation location;
        size_t fail_index = 0;
        memset(&value, 0, sizeof value);
        memset(&location, 0, sizeof location);
        SHOW(hipStreamGetId(NULL, &id));
        SHOW(hipStreamSetAttribute(NULL, hipStreamAttributePriority, &value));
        SHOW(hipStreamGetAttribute(NULL, hipStreamAttributePriority, &value));
        SHOW(hipMemsetD2D8Async(NULL, 0, 0, 0, 0, NULL));
        SHOW(hipMemsetD2D32(NULL, 0, 0, 0, 0));
        SHOW(hipMemPrefetchAsync_v2(NULL, 0, location, 0, NULL));
        SHOW(hipMemcpyBatchAsync(NULL, NULL, NULL, 0, NULL, NULL, 0, &fail_index, NULL));
    }
#endif
#if GP_HIP_AT_LEAST(7, 2)
    SHOW(hipStreamCopyAttributes(NULL, NULL));
#endif
    SHOW(hipGetLastError());
    return calls;
}

static void *exit_from_thread(void *arg)
{
    (void)arg;
    exit(9);
}

int finish(const char *mode)
{
    fflush(stdout);
    if (strcmp(mode, "return") == 0)
        return 3;
    if (strcmp(mode, "exit") == 0)
        exit(5);
    if (strcmp(mode, "thread") == 0) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, exit_from_thread, NULL) != 0)
            return -1;
        for (;;) { /* until the other thread's exit() ends the process */
            int count;
            (void)hipGetDeviceCount(&count);
        }
    }
    if (strcmp(mode, "signal") == 0) {
        raise(SIGTERM);
        return -1;
    }
    fprintf(stderr, "unknown mode %s (return, exit, thread, signal)\n", mode);
    return -1;
}
