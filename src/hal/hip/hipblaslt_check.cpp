/*
 * hipblaslt_check.cpp - compile-time check of gpuprio's hipBLASLt declarations (hip_hipblaslt.h)
 * against hipblaslt.h (a C++ header), built only where the build is given its directory
 * (GPUPRIO_HIPBLASLT_INCLUDE_DIR). Nothing here runs:
 *
 *   1. Every entry of hipblaslt_api.def is redeclared with the header's types: a parameter list
 *      that differs from the header's prototype is a "conflicting declaration" error (the
 *      functions are extern "C", so they cannot overload).
 *   2. gpuprio's types have the header's sizes and layout, and hipblaslt_ext::matmulIsAlgoSupported
 *      the type that hip_hipblaslt.h calls it with (references as pointers). The object refers to
 *      that function, so that the test hip.hipblaslt_mangled finds the name it is called by.
 *   3. Every constant of hipblaslt_consts.def has the header's value.
 */
#include <cstddef>
#include <type_traits>

#include <hipblaslt/hipblaslt-ext.hpp>
#include <hipblaslt/hipblaslt.h>

#define HLT_HANDLE hipblasLtHandle_t
#define HLT_DESC hipblasLtMatmulDesc_t
#define HLT_LAYOUT hipblasLtMatrixLayout_t
#define HLT_ALGO hipblasLtMatmulAlgo_t
#define HLT_STREAM hipStream_t
#define HLT_DESC_ATTR hipblasLtMatmulDescAttributes_t
#define HLT_LAYOUT_ATTR hipblasLtMatrixLayoutAttribute_t
#define HLT_DATA_TYPE hipDataType

/* 1. Prototypes. */
extern "C" {
#define HLT_API(name, exported, params, args) hipblasStatus_t name params;
#include "hipblaslt_api.def"
#undef HLT_API
}

#include "hip_hipblaslt.h"

/* 2. Types. */
#define SAME_SIZE(ours, theirs) static_assert(sizeof(ours) == sizeof(theirs), #ours " != " #theirs);
SAME_SIZE(hiphal_lt_status, hipblasStatus_t)
SAME_SIZE(hiphal_lt_handle, hipblasLtHandle_t)
SAME_SIZE(hiphal_lt_desc_opaque, hipblasLtMatmulDescOpaque_t)
SAME_SIZE(hiphal_lt_layout_opaque, hipblasLtMatrixLayoutOpaque_t)
SAME_SIZE(hiphal_lt_algo, hipblasLtMatmulAlgo_t)
SAME_SIZE(uint32_t, hipblasLtMatmulDescAttributes_t)
SAME_SIZE(uint32_t, hipblasLtMatrixLayoutAttribute_t)
SAME_SIZE(uint32_t, hipDataType)
SAME_SIZE(int32_t, hipblasOperation_t)
SAME_SIZE(int32_t, hipblasLtPointerMode_t)
SAME_SIZE(uint32_t, hipblasLtEpilogue_t)
static_assert(offsetof(hiphal_lt_algo, max_workspace_bytes) ==
                  offsetof(hipblasLtMatmulAlgo_t, max_workspace_bytes),
              "algo: max_workspace_bytes");
static_assert(
    std::is_same<decltype(&hipblaslt_ext::matmulIsAlgoSupported),
                 hipblasStatus_t (*)(hipblasLtHandle_t, hipblasLtMatmulDesc_t, const void *,
                                     hipblasLtMatrixLayout_t, hipblasLtMatrixLayout_t, const void *,
                                     hipblasLtMatrixLayout_t, hipblasLtMatrixLayout_t,
                                     hipblasLtMatmulAlgo_t &, size_t &)>::value,
    "hipblaslt_ext::matmulIsAlgoSupported is not what hiphal_pfn_is_algo_supported calls");
extern void *const hiphal_lt_checked_is_algo_supported;
void *const hiphal_lt_checked_is_algo_supported = (void *)&hipblaslt_ext::matmulIsAlgoSupported;

/* 3. Values. */
#define HLT_CONST(ours, theirs, value)                                                             \
    static_assert((int)ours == (int)(theirs) && (int)(theirs) == (value), #ours " is not " #theirs);
#if HIP_VERSION_MAJOR >= 6
#define HLT_CONST6 HLT_CONST
#else /* HIP 5's headers declare no such hipDataType: hipblaslt.h takes hipblas-common's */
#define HLT_CONST6(ours, theirs, value) static_assert((int)ours == (value), #ours);
#endif
#include "hipblaslt_consts.def"
#undef HLT_CONST6
#undef HLT_CONST
