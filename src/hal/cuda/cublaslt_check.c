/*
 * cublaslt_check.c - compile-time check of gpuprio's cuBLASLt and cuBLAS declarations
 * (cuda_cublaslt.h, cuda_cublas.h) against cublasLt.h and the cublas_api.h it includes, built
 * only where the toolkit has the header. Nothing here runs:
 *
 *   1. Every entry of cublaslt_api.def and cublas_api.def is redeclared with the headers' types:
 *      a parameter list that differs from the header's prototype is a "conflicting types" error.
 *   2. gpuprio's types have the header's sizes and layout (so the shim's export and its calls,
 *      made with gpuprio's types, pass what the library expects).
 *   3. Every constant of cublaslt_consts.def and every tile of cublaslt_tiles.def has the
 *      header's value.
 */
#include <stddef.h>

/* The header declares some functions of no parameters as `f()`. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop

#define LT_HANDLE cublasLtHandle_t
#define LT_DESC cublasLtMatmulDesc_t
#define LT_LAYOUT cublasLtMatrixLayout_t
#define LT_ALGO cublasLtMatmulAlgo_t
#define LT_HEURISTIC cublasLtMatmulHeuristicResult_t
#define LT_STREAM cudaStream_t
#define LT_DESC_ATTR cublasLtMatmulDescAttributes_t
#define LT_LAYOUT_ATTR cublasLtMatrixLayoutAttribute_t
#define LT_CONFIG_ATTR cublasLtMatmulAlgoConfigAttributes_t
#define LT_DATA_TYPE cudaDataType
#define LT_COMPUTE cublasComputeType_t
#define LT_PREF cublasLtMatmulPreference_t
#define LT_PREF_ATTR cublasLtMatmulPreferenceAttributes_t

/* 1. Prototypes. */
#define LT_API(name, exported, params, args) cublasStatus_t name params;
#include "cublaslt_api.def"
#undef LT_API

#define BLAS_HANDLE cublasHandle_t
#define BLAS_OP cublasOperation_t
#define BLAS_DATA_TYPE cudaDataType
#define BLAS_COMPUTE cublasComputeType_t
#define BLAS_ALGO cublasGemmAlgo_t
#define BLAS_STREAM cudaStream_t
#define BLAS_POINTER_MODE cublasPointerMode_t
#define BLAS_ATOMICS_MODE cublasAtomicsMode_t
#define BLAS_MATH cublasMath_t
#define BLAS_API(name, exported, params, args) cublasStatus_t name params;
#include "cublas_api.def"
#undef BLAS_API

#include "cuda_cublas.h"

/* 2. Types. */
#define SAME_SIZE(ours, theirs)                                                                    \
    _Static_assert(sizeof(ours) == sizeof(theirs), #ours " != " #theirs);
SAME_SIZE(cudahal_lt_status, cublasStatus_t)
SAME_SIZE(cudahal_lt_handle, cublasLtHandle_t)
SAME_SIZE(cudahal_blas_handle, cublasHandle_t)
SAME_SIZE(cudahal_lt_desc_opaque, cublasLtMatmulDescOpaque_t)
SAME_SIZE(cudahal_lt_layout_opaque, cublasLtMatrixLayoutOpaque_t)
SAME_SIZE(cudahal_lt_algo, cublasLtMatmulAlgo_t)
SAME_SIZE(cudahal_lt_pref_opaque, cublasLtMatmulPreferenceOpaque_t)
SAME_SIZE(cudahal_lt_heuristic, cublasLtMatmulHeuristicResult_t)
SAME_SIZE(uint32_t, cublasLtMatmulDescAttributes_t)
SAME_SIZE(uint32_t, cublasLtMatrixLayoutAttribute_t)
SAME_SIZE(uint32_t, cublasLtMatmulAlgoConfigAttributes_t)
SAME_SIZE(uint32_t, cudaDataType)
SAME_SIZE(int32_t, cublasOperation_t)
SAME_SIZE(int32_t, cublasGemmAlgo_t)
SAME_SIZE(int32_t, cublasPointerMode_t)
SAME_SIZE(int32_t, cublasAtomicsMode_t)
SAME_SIZE(uint32_t, cublasMath_t)
SAME_SIZE(int32_t, cublasComputeType_t)
SAME_SIZE(uint32_t, cublasLtMatmulPreferenceAttributes_t)
#define SAME_OFFSET(field)                                                                         \
    _Static_assert(offsetof(cudahal_lt_heuristic, field) ==                                        \
                       offsetof(cublasLtMatmulHeuristicResult_t, field),                           \
                   "heuristic result: " #field);
SAME_OFFSET(workspaceSize)
SAME_OFFSET(state)
SAME_OFFSET(wavesCount)

/* 3. Values. */
#define LT_CONST(ours, theirs, value)                                                              \
    _Static_assert((int)ours == (int)(theirs) && (theirs) == (value), #ours " is not " #theirs);
#include "cublaslt_consts.def"
#undef LT_CONST
#define LT_TILE(id, rows, cols)                                                                    \
    _Static_assert(CUBLASLT_MATMUL_TILE_##rows##x##cols == (id), "tile " #rows "x" #cols);
#include "cublaslt_tiles.def"
#undef LT_TILE
