/*
 * cuda_cublas.h - the part of cuBLAS's interface gpuprio uses, declared by gpuprio itself, as
 * cuda_cublaslt.h does for cuBLASLt (the build must not need cublas_api.h; gpuprio never links
 * or loads cuBLAS). Handles are pointers and enumerations 32-bit, as in cublas_api.h; the
 * functions' parameters come from cublas_api.def, the constants (CUDAHAL_BLAS_*) from
 * cublaslt_consts.def; cublaslt_check.c compiles both against the header wherever it is found.
 *
 * A cuBLAS handle holds a cuBLASLt context and may be passed as one (cuBLAS's documentation of
 * cublasLtHandle_t): cuda_gemmex.c issues a translated cublasGemmEx with the application's handle.
 */
#ifndef GPUPRIO_CUDA_CUBLAS_H
#define GPUPRIO_CUDA_CUBLAS_H

#include <stdbool.h>

#include "cuda_cublaslt.h"

typedef struct cudahal_blas_context *cudahal_blas_handle;

#ifndef BLAS_HANDLE
#define BLAS_HANDLE cudahal_blas_handle
#define BLAS_OP int32_t
#define BLAS_DATA_TYPE uint32_t
#define BLAS_COMPUTE int32_t
#define BLAS_ALGO int32_t
#define BLAS_STREAM struct CUstream_st *
#define BLAS_POINTER_MODE int32_t
#define BLAS_ATOMICS_MODE int32_t
#define BLAS_MATH uint32_t
#endif

/* The arguments of one cublasGemmEx or cublasGemmStridedBatchedEx call, as the application
 * passed them (the shim's, and the fake cuBLAS's record of it); a cublasGemmEx call has batched
 * false and the fields after it 0. */
struct cudahal_gemmex_call {
    cudahal_blas_handle handle;
    int32_t transa, transb;
    int m, n, k;
    const void *alpha, *A;
    uint32_t Atype;
    int lda;
    const void *B;
    uint32_t Btype;
    int ldb;
    const void *beta;
    void *C;
    uint32_t Ctype;
    int ldc;
    int32_t compute, algo;
    bool batched; /* cublasGemmStridedBatchedEx's, with its strides (elements) and count */
    long long stride_a, stride_b, stride_c;
    int batch_count;
};

#define BLAS_API(name, exported, params, args)                                                     \
    typedef cudahal_lt_status(*cudahal_pfn_##name) params;
#include "cublas_api.def"
#undef BLAS_API

#endif /* GPUPRIO_CUDA_CUBLAS_H */
