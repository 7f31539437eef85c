/*
 * hip_compat_shim.h - the rest of the HIP API that the shim intercepts and that the HIP headers in
 * use may not declare, on top of hal/hip/hip_compat.h.
 *
 * hip_api.def lists every entry point the shim wraps; some of them are newer than 5.2.3 (hip_5.3
 * up to hip_7.2 in versions/hip-version-nodes.tsv). Their prototypes and the types those
 * prototypes need are copied here, in C11, with the layout of the upstream headers:
 *   - ROCm/rocm-systems projects/hip/include/hip/hip_runtime_api.h (commit 003a5d10)
 *   - ROCm/rocm-systems projects/hip/include/hip/driver_types.h (commit 12b6b91e)
 *   - ROCm/clr hipamd/include/hip/amd_detail/amd_hip_runtime_pt_api.h (commit 0c33dfa0)
 * Only the shape matters to the shim (it forwards arguments untouched), but sizes and alignments
 * are kept as upstream so that a wrapper reading a field (a launch config's stream) reads the
 * right bytes.
 *
 * Like hip_compat.h, each block is guarded by the version of the headers in use
 * (GP_HIP_AT_LEAST): it is left out from the HIP version whose headers declare it (the version
 * node of its function, or the oldest tested headers that have it). hipGetProcAddress_spt and
 * hipMemPrefetchBatchAsync are exported by 7.2 but declared by none of the tested headers.
 */
#ifndef GPUPRIO_HIP_COMPAT_SHIM_H
#define GPUPRIO_HIP_COMPAT_SHIM_H

#include "hip_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ------------------------------------------------------------------------------- */

/* hipGetDriverEntryPoint (hip_7.1). */
#if !GP_HIP_AT_LEAST(7, 1)
typedef enum hipDriverEntryPointQueryResult {
    hipDriverEntryPointSuccess = 0,
    hipDriverEntryPointSymbolNotFound = 1,
    hipDriverEntryPointVersionNotSufficent = 2
} hipDriverEntryPointQueryResult;
#define hipEnableDefault 0x0
#define hipEnableLegacyStream 0x1
#define hipEnablePerThreadDefaultStream 0x2
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

/* hipStreamBeginCaptureToGraph (hip_6.1). */
#if !GP_HIP_AT_LEAST(6, 1)
typedef struct hipGraphEdgeData {
    unsigned char from_port;
    unsigned char reserved[5];
    unsigned char to_port;
    unsigned char type;
} hipGraphEdgeData;
#endif

/*
 * Stream attributes (hipStreamGetAttribute/SetAttribute, hip_7.1): upstream's hipStreamAttrID and
 * hipStreamAttrValue are macros for the launch-attribute enum and union. The 5.2.3
 * hipKernelNodeAttrID/hipKernelNodeAttrValue are left alone (upstream later made them macros for
 * the same types). hip_compat.h's hipLaunchAttribute keeps its byte-compatible layout.
 * The launch-attribute enum and union are in the 6.4.3 headers, the rest from 7.1 on.
 */
#if !GP_HIP_AT_LEAST(7, 1)
typedef enum hipSynchronizationPolicy {
    hipSyncPolicyAuto = 1,
    hipSyncPolicySpin = 2,
    hipSyncPolicyYield = 3,
    hipSyncPolicyBlockingSync = 4
} hipSynchronizationPolicy;
typedef struct hipLaunchMemSyncDomainMap {
    unsigned char default_;
    unsigned char remote;
} hipLaunchMemSyncDomainMap;
typedef enum hipLaunchMemSyncDomain {
    hipLaunchMemSyncDomainDefault = 0,
    hipLaunchMemSyncDomainRemote = 1
} hipLaunchMemSyncDomain;
#endif
#if !GP_HIP_AT_LEAST(6, 4)
typedef enum hipClusterSchedulingPolicy {
    hipClusterSchedulingPolicyDefault = 0,
    hipClusterSchedulingPolicySpread = 1,
    hipClusterSchedulingPolicyLoadBalancing = 2
} hipClusterSchedulingPolicy;
typedef enum hipLaunchAttributeID {
    hipLaunchAttributeIgnore = 0,
    hipLaunchAttributeAccessPolicyWindow = 1,
    hipLaunchAttributeCooperative = 2,
    hipLaunchAttributeSynchronizationPolicy = 3,
    hipLaunchAttributeClusterDimension = 4,
    hipLaunchAttributeClusterSchedulingPolicyPreference = 5,
    hipLaunchAttributePriority = 8,
    hipLaunchAttributeMemSyncDomainMap = 9,
    hipLaunchAttributeMemSyncDomain = 10,
    hipLaunchAttributeExtDynDataPrefetch = 1024,
    hipLaunchAttributeMax
} hipLaunchAttributeID;
struct hipExtDynDataPrefetchConfig; /* only pointed to */
typedef union hipLaunchAttributeValue {
    char pad[64];
    hipAccessPolicyWindow accessPolicyWindow;
    int cooperative;
    int priority;
    hipSynchronizationPolicy syncPolicy;
    hipLaunchMemSyncDomainMap memSyncDomainMap;
    hipLaunchMemSyncDomain memSyncDomain;
    struct {
        unsigned int x;
        unsigned int y;
        unsigned int z;
    } clusterDim;
    hipClusterSchedulingPolicy clusterSchedulingPolicyPreference;
    const struct hipExtDynDataPrefetchConfig *dynDataPrefetch;
} hipLaunchAttributeValue;
#endif
#if !GP_HIP_AT_LEAST(7, 1)
#define hipStreamAttrID hipLaunchAttributeID
#define hipStreamAttrValue hipLaunchAttributeValue
#define hipStreamAttributeAccessPolicyWindow hipLaunchAttributeAccessPolicyWindow
#define hipStreamAttributeSynchronizationPolicy hipLaunchAttributeSynchronizationPolicy
#define hipStreamAttributeMemSyncDomainMap hipLaunchAttributeMemSyncDomainMap
#define hipStreamAttributeMemSyncDomain hipLaunchAttributeMemSyncDomain
#define hipStreamAttributePriority hipLaunchAttributePriority
#endif

/* hipDrvLaunchKernelEx (hip_6.5). hipLaunchAttribute comes from hip_compat.h. */
#if !GP_HIP_AT_LEAST(6, 5)
typedef struct HIP_LAUNCH_CONFIG_st {
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    hipStream_t hStream;
    hipLaunchAttribute *attrs;
    unsigned int numAttrs;
} HIP_LAUNCH_CONFIG;
#endif

/* hipModuleLaunchCooperativeKernelMultiDevice (hip_5.5). */
#if !GP_HIP_AT_LEAST(5, 5)
typedef struct hipFunctionLaunchParams_t {
    hipFunction_t function;
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    hipStream_t hStream;
    void **kernelParams;
} hipFunctionLaunchParams;
#endif

/* hipMemcpyBatchAsync, hipMemcpy3DBatchAsync (hip_7.1). */
#if !GP_HIP_AT_LEAST(7, 1)
typedef enum hipMemcpySrcAccessOrder {
    hipMemcpySrcAccessOrderInvalid = 0x0,
    hipMemcpySrcAccessOrderStream = 0x1,
    hipMemcpySrcAccessOrderDuringApiCall = 0x2,
    hipMemcpySrcAccessOrderAny = 0x3,
    hipMemcpySrcAccessOrderMax = 0x7FFFFFFF
} hipMemcpySrcAccessOrder;
typedef struct hipMemcpyAttributes {
    hipMemcpySrcAccessOrder srcAccessOrder;
    hipMemLocation srcLocHint;
    hipMemLocation dstLocHint;
    unsigned int flags;
} hipMemcpyAttributes;
typedef enum hipMemcpy3DOperandType {
    hipMemcpyOperandTypePointer = 0x1,
    hipMemcpyOperandTypeArray = 0x2,
    hipMemcpyOperandTypeMax = 0x7FFFFFFF
} hipMemcpy3DOperandType;
typedef struct hipOffset3D {
    size_t x;
    size_t y;
    size_t z;
} hipOffset3D;
typedef struct hipMemcpy3DOperand {
    hipMemcpy3DOperandType type;
    union {
        struct {
            void *ptr;
            size_t rowLength;
            size_t layerHeight;
            hipMemLocation locHint;
        } ptr;
        struct {
            hipArray_t array;
            hipOffset3D offset;
        } array;
    } op;
} hipMemcpy3DOperand;
typedef struct hipMemcpy3DBatchOp {
    hipMemcpy3DOperand src;
    hipMemcpy3DOperand dst;
    hipExtent extent;
    hipMemcpySrcAccessOrder srcAccessOrder;
    unsigned int flags;
} hipMemcpy3DBatchOp;

/* hipMemcpy3DPeer, hipMemcpy3DPeerAsync (hip_7.1). */
typedef struct hipMemcpy3DPeerParms {
    hipArray_t srcArray;
    hipPos srcPos;
    hipPitchedPtr srcPtr;
    int srcDevice;
    hipArray_t dstArray;
    hipPos dstPos;
    hipPitchedPtr dstPtr;
    int dstDevice;
    hipExtent extent;
} hipMemcpy3DPeerParms;
#endif

/*
 * hipGraphInstantiateWithParams (hip_6.1). The 5.2.3 hipGraphInstantiateFlags has only
 * hipGraphInstantiateFlagAutoFreeOnLaunch; an enum cannot be extended, so the newer flags are
 * constants of an enum of their own, with upstream's values.
 */
#if !GP_HIP_AT_LEAST(6, 1)
enum {
    hipGraphInstantiateFlagUpload = 2,
    hipGraphInstantiateFlagDeviceLaunch = 4,
    hipGraphInstantiateFlagUseNodePriority = 8
};
typedef enum hipGraphInstantiateResult {
    hipGraphInstantiateSuccess = 0,
    hipGraphInstantiateError = 1,
    hipGraphInstantiateInvalidStructure = 2,
    hipGraphInstantiateNodeOperationNotSupported = 3,
    hipGraphInstantiateMultipleDevicesNotSupported = 4
} hipGraphInstantiateResult;
typedef struct hipGraphInstantiateParams {
    hipGraphNode_t errNode_out;
    unsigned long long flags;
    hipGraphInstantiateResult result_out;
    hipStream_t uploadStream;
} hipGraphInstantiateParams;
#endif

/* ---- Prototypes -------------------------------------------------------------------------- */

/* Function-pointer lookup (hip_7.2, declared by no tested headers; hip_7.1). */
hipError_t hipGetProcAddress_spt(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                                 hipDriverProcAddressQueryResult *symbolStatus);
#if !GP_HIP_AT_LEAST(7, 1)
hipError_t hipGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                  hipDriverEntryPointQueryResult *driverStatus);
hipError_t hipGetDriverEntryPoint_spt(const char *symbol, void **funcPtr, unsigned long long flags,
                                      hipDriverEntryPointQueryResult *status);
#endif

/* Stream properties (hip_7.1, hip_7.2). */
#if !GP_HIP_AT_LEAST(7, 1)
hipError_t hipStreamGetId(hipStream_t stream, unsigned long long *streamId);
hipError_t hipStreamSetAttribute(hipStream_t stream, hipStreamAttrID attr,
                                 const hipStreamAttrValue *value);
hipError_t hipStreamGetAttribute(hipStream_t stream, hipStreamAttrID attr,
                                 hipStreamAttrValue *value_out);
hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src);
#endif

/* Stream memory operations (hip_6.4). */
#if !GP_HIP_AT_LEAST(6, 4)
hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count,
                               hipStreamBatchMemOpParams *paramArray, unsigned int flags);
#endif

/* Capture (hip_6.1, hip_5.3). */
#if !GP_HIP_AT_LEAST(6, 1)
hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph,
                                        const hipGraphNode_t *dependencies,
                                        const hipGraphEdgeData *dependencyData,
                                        size_t numDependencies, hipStreamCaptureMode mode);
#endif
#if !GP_HIP_AT_LEAST(5, 3)
hipError_t hipStreamGetCaptureInfo_v2_spt(hipStream_t stream,
                                          hipStreamCaptureStatus *captureStatus_out,
                                          unsigned long long *id_out, hipGraph_t *graph_out,
                                          const hipGraphNode_t **dependencies_out,
                                          size_t *numDependencies_out);
#endif

/* Graph instantiation that may upload on a stream (hip_6.1). */
#if !GP_HIP_AT_LEAST(6, 1)
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                                         hipGraphInstantiateParams *instantiateParams);
#endif

/* Graph nodes (hip_5.3, hip_5.5, hip_6.4). */
#if !GP_HIP_AT_LEAST(5, 3)
hipError_t hipGraphNodeSetEnabled(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                  unsigned int isEnabled);
hipError_t hipGraphNodeGetEnabled(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                  unsigned int *isEnabled);
#endif
#if !GP_HIP_AT_LEAST(5, 5)
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                   const hipGraphNode_t *pDependencies, size_t numDependencies,
                                   hipMemAllocNodeParams *pNodeParams);
hipError_t hipGraphAddMemFreeNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                  const hipGraphNode_t *pDependencies, size_t numDependencies,
                                  void *dev_ptr);
#endif
#if !GP_HIP_AT_LEAST(6, 4)
hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t *phGraphNode, hipGraph_t hGraph,
                                     const hipGraphNode_t *dependencies, size_t numDependencies,
                                     const hipBatchMemOpNodeParams *nodeParams);
hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t hNode,
                                           hipBatchMemOpNodeParams *nodeParams_out);
hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t hNode,
                                           hipBatchMemOpNodeParams *nodeParams);
hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                               const hipBatchMemOpNodeParams *nodeParams);
#endif

/* Launches (hip_5.5, hip_6.5). */
#if !GP_HIP_AT_LEAST(5, 5)
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX,
                                            unsigned int gridDimY, unsigned int gridDimZ,
                                            unsigned int blockDimX, unsigned int blockDimY,
                                            unsigned int blockDimZ, unsigned int sharedMemBytes,
                                            hipStream_t stream, void **kernelParams);
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams *launchParamsList,
                                                       unsigned int numDevices, unsigned int flags);
#endif
#if !GP_HIP_AT_LEAST(6, 5)
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG *config, hipFunction_t f, void **params,
                                void **extra);
#endif

/* Prefetch (hip_7.1; hip_7.2, declared by no tested headers). */
#if !GP_HIP_AT_LEAST(7, 1)
hipError_t hipMemPrefetchAsync_v2(const void *dev_ptr, size_t count, hipMemLocation location,
                                  unsigned int flags, hipStream_t stream);
#endif
hipError_t hipMemPrefetchBatchAsync(void **dev_ptrs, size_t *sizes, size_t count,
                                    hipMemLocation *prefetch_locs, size_t *prefetch_loc_idxs,
                                    size_t num_prefetch_locs, unsigned long long flags,
                                    hipStream_t stream);

/* Copies (hip_6.2, hip_7.1). */
#if !GP_HIP_AT_LEAST(6, 2)
hipError_t hipMemcpyAtoD(hipDeviceptr_t dstDevice, hipArray_t srcArray, size_t srcOffset,
                         size_t ByteCount);
hipError_t hipMemcpyDtoA(hipArray_t dstArray, size_t dstOffset, hipDeviceptr_t srcDevice,
                         size_t ByteCount);
hipError_t hipMemcpyAtoA(hipArray_t dstArray, size_t dstOffset, hipArray_t srcArray,
                         size_t srcOffset, size_t ByteCount);
hipError_t hipMemcpyAtoHAsync(void *dstHost, hipArray_t srcArray, size_t srcOffset,
                              size_t ByteCount, hipStream_t stream);
hipError_t hipMemcpyHtoAAsync(hipArray_t dstArray, size_t dstOffset, const void *srcHost,
                              size_t ByteCount, hipStream_t stream);
hipError_t hipMemcpy2DArrayToArray(hipArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                   hipArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                   size_t width, size_t height, hipMemcpyKind kind);
#endif
#if !GP_HIP_AT_LEAST(7, 1)
hipError_t hipMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count,
                               hipMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                               size_t *failIdx, hipStream_t stream);
hipError_t hipMemcpy3DBatchAsync(size_t numOps, struct hipMemcpy3DBatchOp *opList, size_t *failIdx,
                                 unsigned long long flags, hipStream_t stream);
hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms *p);
hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms *p, hipStream_t stream);
#endif

/* 2D memsets (hip_7.1). */
#if !GP_HIP_AT_LEAST(7, 1)
hipError_t hipMemsetD2D8(hipDeviceptr_t dst, size_t dstPitch, unsigned char value, size_t width,
                         size_t height);
hipError_t hipMemsetD2D8Async(hipDeviceptr_t dst, size_t dstPitch, unsigned char value,
                              size_t width, size_t height, hipStream_t stream);
hipError_t hipMemsetD2D16(hipDeviceptr_t dst, size_t dstPitch, unsigned short value, size_t width,
                          size_t height);
hipError_t hipMemsetD2D16Async(hipDeviceptr_t dst, size_t dstPitch, unsigned short value,
                               size_t width, size_t height, hipStream_t stream);
hipError_t hipMemsetD2D32(hipDeviceptr_t dst, size_t dstPitch, unsigned int value, size_t width,
                          size_t height);
hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t dstPitch, unsigned int value,
                               size_t width, size_t height, hipStream_t stream);
#endif

/* Per-thread-default-stream forms (hip_5.3) that neither 5.2.3 nor hip_compat.h declares. */
#if !GP_HIP_AT_LEAST(5, 3)
hipError_t hipMemcpyFromArray_spt(void *dst, hipArray_const_t src, size_t wOffsetSrc,
                                  size_t hOffset, size_t count, hipMemcpyKind kind);
hipError_t hipMemcpy2DAsync_spt(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, hipMemcpyKind kind,
                                hipStream_t stream);
hipError_t hipMemcpy2DToArrayAsync_spt(hipArray_t dst, size_t wOffset, size_t hOffset,
                                       const void *src, size_t spitch, size_t width, size_t height,
                                       hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy2DFromArrayAsync_spt(void *dst, size_t dpitch, hipArray_const_t src,
                                         size_t wOffsetSrc, size_t hOffsetSrc, size_t width,
                                         size_t height, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy3DAsync_spt(const hipMemcpy3DParms *p, hipStream_t stream);
hipError_t hipMemcpyToSymbolAsync_spt(const void *symbol, const void *src, size_t sizeBytes,
                                      size_t offset, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpyFromSymbolAsync_spt(void *dst, const void *symbol, size_t sizeBytes,
                                        size_t offset, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemset2DAsync_spt(void *dst, size_t pitch, int value, size_t width, size_t height,
                                hipStream_t stream);
hipError_t hipMemset3DAsync_spt(hipPitchedPtr pitchedDevPtr, int value, hipExtent extent,
                                hipStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GPUPRIO_HIP_COMPAT_SHIM_H */
