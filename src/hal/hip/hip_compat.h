/*
 * hip_compat.h - the HIP API as ROCm 6/7 exports it, on top of whichever HIP headers are in use.
 *
 * gpuprio builds against the HIP headers it finds (Debian 12's ROCm 5.2.3, sid's 6.4.3,
 * experimental's 7.2.4, or AMD's packages; docs/testing.md), and the runtime it interposes on in
 * the field may be newer than those headers. What the headers in use lack is declared here, with
 * the prototypes of the upstream headers, so that the simulator, the conformance programs and the
 * shim agree on it. `hip_ext.h` is C++-only, so its launch entry points are declared here too.
 *
 * Each block is guarded by the headers' own version (hip/hip_version.h, GP_HIP_AT_LEAST): it is
 * left out from the HIP version whose headers declare it, taken as the version node of its
 * function (versions/hip-version-nodes.tsv) where the headers declared it with that node, or else
 * (headers that came earlier or later than the node) the oldest tested headers that have it.
 * Checked against 5.2.3, 6.4.3 and 7.2.4; headers in between are untested (an identical
 * prototype declared again is valid C, so a guard later than the headers' first version is
 * harmless; an earlier one is an error). Names that no tested headers declare are declared
 * unguarded.
 */
#ifndef GPUPRIO_HIP_COMPAT_H
#define GPUPRIO_HIP_COMPAT_H

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <stddef.h>
#include <stdint.h>

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

/* Whether the HIP headers in use are version major.minor or newer. */
#define GP_HIP_AT_LEAST(major, minor)                                                              \
    (HIP_VERSION_MAJOR > (major) || (HIP_VERSION_MAJOR == (major) && HIP_VERSION_MINOR >= (minor)))

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Prototypes that changed between versions, as the headers in use declare them. From 7.0 the
 * host source of hipMemcpyHtoD and hipMemcpyHtoDAsync is `const void *` (`void *` before).
 */
#if GP_HIP_AT_LEAST(7, 0)
#define GP_HIP_HTOD_CONST const
#else
#define GP_HIP_HTOD_CONST
#endif
/* hipDrvGraphExecMemsetNodeSetParams's parameters: 6.x's HIP_MEMSET_NODE_PARAMS, which 7.0
 * replaced with hipMemsetParams (of the same layout). */
#if GP_HIP_AT_LEAST(7, 0)
#define GP_HIP_MEMSET_NODE_PARAMS hipMemsetParams
#else
#define GP_HIP_MEMSET_NODE_PARAMS HIP_MEMSET_NODE_PARAMS
#endif

/* hipStreamBatchMemOp (hip_6.4). */
#if !GP_HIP_AT_LEAST(6, 4)
typedef enum hipStreamBatchMemOpType {
    hipStreamMemOpWaitValue32 = 0x1,
    hipStreamMemOpWriteValue32 = 0x2,
    hipStreamMemOpWaitValue64 = 0x4,
    hipStreamMemOpWriteValue64 = 0x5,
    hipStreamMemOpBarrier = 0x6,
    hipStreamMemOpFlushRemoteWrites = 0x3
} hipStreamBatchMemOpType;
typedef union hipStreamBatchMemOpParams_union {
    hipStreamBatchMemOpType operation;
    struct hipStreamMemOpWaitValueParams_t {
        hipStreamBatchMemOpType operation;
        hipDeviceptr_t address;
        union {
            uint32_t value;
            uint64_t value64;
        };
        unsigned int flags;
        hipDeviceptr_t alias;
    } waitValue;
    struct hipStreamMemOpWriteValueParams_t {
        hipStreamBatchMemOpType operation;
        hipDeviceptr_t address;
        union {
            uint32_t value;
            uint64_t value64;
        };
        unsigned int flags;
        hipDeviceptr_t alias;
    } writeValue;
    struct hipStreamMemOpFlushRemoteWritesParams_t {
        hipStreamBatchMemOpType operation;
        unsigned int flags;
    } flushRemoteWrites;
    struct hipStreamMemOpMemoryBarrierParams_t {
        hipStreamBatchMemOpType operation;
        unsigned int flags;
    } memoryBarrier;
    uint64_t pad[6];
} hipStreamBatchMemOpParams;
#endif

/* hipGraphAddBatchMemOpNode and its node's calls (hip_6.4). */
#if !GP_HIP_AT_LEAST(6, 4)
typedef struct hipBatchMemOpNodeParams {
    hipCtx_t ctx;
    unsigned int count;
    hipStreamBatchMemOpParams *paramArray;
    unsigned int flags;
} hipBatchMemOpNodeParams;
#endif

/* hipGraphAddMemAllocNode (hip_5.5). */
#if !GP_HIP_AT_LEAST(5, 5)
typedef struct hipMemAllocNodeParams {
    hipMemPoolProps poolProps;
    const hipMemAccessDesc *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    void *dptr;
} hipMemAllocNodeParams;
#endif

/*
 * Graph instantiation's flags (hip_6.1). The 5.2.3 hipGraphInstantiateFlags has only
 * hipGraphInstantiateFlagAutoFreeOnLaunch; an enum cannot be extended, so the newer flags are
 * constants of an enum of their own, with upstream's values.
 */
#if !GP_HIP_AT_LEAST(6, 1)
enum {
    hipGraphInstantiateFlagUpload = 2,
    hipGraphInstantiateFlagDeviceLaunch = 4,
    hipGraphInstantiateFlagUseNodePriority = 8
};
#endif

/* The legacy null stream by name, usable even where 0 means the per-thread stream (_spt). */
#ifndef hipStreamLegacy
#define hipStreamLegacy ((hipStream_t)1)
#endif

/* An application's stream handle as the runtime's calls that take a stream object need it:
 * hipStreamLegacy as 0, the same (legacy null) stream. ROCm/clr's hipStreamGetDevice, and its
 * hipStreamWaitEvent on an event recorded with it, take 0x1 for a stream object. */
static inline hipStream_t hiphal_stream_object(hipStream_t stream)
{
    return stream == hipStreamLegacy ? NULL : stream;
}

/*
 * hipGetProcAddress's flags (upstream's values): no tested headers define them (7.2.4 names the
 * same values hipEnable*, for hipGetDriverEntryPoint).
 */
#ifndef HIP_GET_PROC_ADDRESS_DEFAULT
#define HIP_GET_PROC_ADDRESS_DEFAULT 0x0
#endif
#ifndef HIP_GET_PROC_ADDRESS_LEGACY_STREAM
#define HIP_GET_PROC_ADDRESS_LEGACY_STREAM 0x1
#endif
#ifndef HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 0x2
#endif

/* hipGetProcAddress (hip_6.1). */
#if !GP_HIP_AT_LEAST(6, 1)
typedef enum hipDriverProcAddressQueryResult {
    HIP_GET_PROC_ADDRESS_SUCCESS = 0,
    HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} hipDriverProcAddressQueryResult;
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             hipDriverProcAddressQueryResult *symbolStatus);
#endif

/* hipExtGetLastError (hip_6.0): the error of the thread's last call, even a success. */
#if !GP_HIP_AT_LEAST(6, 0)
hipError_t hipExtGetLastError(void);
#endif

/* hipEventRecordWithFlags (hip_6.4). */
#if !GP_HIP_AT_LEAST(6, 4)
#define hipEventRecordDefault 0x0
#define hipEventRecordExternal 0x1
hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags);
#endif

/* hipLaunchKernelExC (hip_6.5); the attribute's layout is upstream's (an id, a 64-byte union). */
#if !GP_HIP_AT_LEAST(6, 5)
typedef struct hipLaunchAttribute {
    int id;
    char pad[4];
    char value[64];
} hipLaunchAttribute;
typedef struct hipLaunchConfig_t {
    dim3 gridDim;
    dim3 blockDim;
    size_t dynamicSmemBytes;
    hipStream_t stream;
    hipLaunchAttribute *attrs;
    unsigned int numAttrs;
} hipLaunchConfig_t;
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t *config, const void *fPtr, void **args);
#endif

/*
 * hip_ext.h's launch entry points: hip_ext.h is C++-only. Both are exported under their C names
 * (hip_4.2; 5.2.3 exports hipHccModuleLaunchKernel under its C++ name only) and their C++ names.
 */
hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
                                    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
                                    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes,
                                    hipStream_t hStream, void **kernelParams, void **extra,
                                    hipEvent_t startEvent, hipEvent_t stopEvent);
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
                                    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
                                    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes,
                                    hipStream_t hStream, void **kernelParams, void **extra,
                                    hipEvent_t startEvent, hipEvent_t stopEvent, uint32_t flags);
#define HIP_EXT_MODULE_LAUNCH_KERNEL_CXX                                                           \
    "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"
#define HIP_HCC_MODULE_LAUNCH_KERNEL_CXX                                                           \
    "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_"
/*
 * hip_impl::hipLaunchKernelGGLImpl(uintptr_t function, const dim3 &grid, const dim3 &block,
 * uint32_t shared, hipStream_t, void **args): exported by ROCm 5 (hip_4.2; gone from >= 5.6 maps)
 * for hipLaunchKernelGGL in code built against older headers. It returns nothing; errors go to
 * the thread's last error.
 */
#define HIP_LAUNCH_KERNEL_GGL_IMPL_CXX                                                             \
    "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv"

/* Per-thread-default-stream forms (hip_5.2, hip_5.3) the 5.2.3 headers lack. */
#if !GP_HIP_AT_LEAST(5, 3)
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream);
hipError_t hipMemsetAsync_spt(void *dst, int value, size_t sizeBytes, hipStream_t stream);
hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void *userData);
hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback,
                                    void *userData, unsigned int flags);
hipError_t hipGraphLaunch_spt(hipGraphExec_t graphExec, hipStream_t stream);
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t *pGraph);
hipError_t hipStreamIsCapturing_spt(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus);
hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus,
                                       unsigned long long *pId);

/* hipGraphUpload (hip_5.3). */
hipError_t hipGraphUpload(hipGraphExec_t graphExec, hipStream_t stream);
#endif

/*
 * hipStreamGetDevice is exported since hip_4.2 but declared by none of the 5.2.3 headers: left
 * out from the oldest tested headers that have it, 6.4.
 */
#if !GP_HIP_AT_LEAST(6, 4)
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GPUPRIO_HIP_COMPAT_H */
