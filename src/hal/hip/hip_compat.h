/*
 * hip_compat.h - the HIP API as ROCm 6/7 exports it, on top of Debian's ROCm 5.2.3 headers.
 *
 * gpuprio is built and tested against Debian's libamdhip64-dev (ROCm 5.2.3) because it installs
 * without a GPU. The runtime it must interpose on in the field is ROCm 6 or 7, which exports a
 * few entry points the 5.2.3 headers do not declare. They are declared here, with the prototypes
 * of the upstream headers, so that the simulator, the conformance programs and the shim agree on
 * them. `hip_ext.h` is C++-only in 5.2.3, so its launch entry points are declared here too.
 */
#ifndef GPUPRIO_HIP_COMPAT_H
#define GPUPRIO_HIP_COMPAT_H

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The legacy null stream by name, usable even where 0 means the per-thread stream (_spt). */
#ifndef hipStreamLegacy
#define hipStreamLegacy ((hipStream_t)1)
#endif

/* hipGetProcAddress (hip_6.1) and hipGetDriverEntryPoint (hip_7.1). */
#define HIP_GET_PROC_ADDRESS_DEFAULT 0x0
#define HIP_GET_PROC_ADDRESS_LEGACY_STREAM 0x1
#define HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 0x2
typedef enum hipDriverProcAddressQueryResult {
    HIP_GET_PROC_ADDRESS_SUCCESS = 0,
    HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} hipDriverProcAddressQueryResult;
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             hipDriverProcAddressQueryResult *symbolStatus);

/* hipExtGetLastError (hip_6.0): the error of the thread's last call, even a success. */
hipError_t hipExtGetLastError(void);

/* hipEventRecordWithFlags (hip_6.4). */
#define hipEventRecordDefault 0x0
#define hipEventRecordExternal 0x1
hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags);

/* hipLaunchKernelExC (hip_6.5). */
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

/* hip_ext.h launch entry points. The C name is hip_4.2 upstream; 5.2.3 has only the C++ one. */
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

/* Per-thread-default-stream forms the 5.2.3 headers lack. */
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

/* hipStreamGetDevice is exported since hip_4.2 but first declared in later headers. */
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device);

#ifdef __cplusplus
}
#endif

#endif /* GPUPRIO_HIP_COMPAT_H */
