/*
 * fake_cublas.h - what tests/cuda's programs call of the fake cuBLAS (fake_cublas.c) beyond what
 * gpuprio declares (src/hal/cuda/cuda_cublas.h): handles and their settings, with cuBLAS's own
 * names and ABI, and the fake's record of every cublasGemmEx and cublasGemmStridedBatchedEx call.
 */
#ifndef GPUPRIO_TEST_FAKE_CUBLAS_H
#define GPUPRIO_TEST_FAKE_CUBLAS_H

#include <stdint.h>

#include "cuda_cublas.h"

#define BLAS_API(name, exported, params, args) cudahal_lt_status name params;
#include "cublas_api.def"
#undef BLAS_API

cudahal_lt_status cublasCreate_v2(cudahal_blas_handle *handle);
cudahal_lt_status cublasSetPointerMode_v2(cudahal_blas_handle handle, int32_t mode);
cudahal_lt_status cublasSetAtomicsMode(cudahal_blas_handle handle, int32_t mode);
cudahal_lt_status cublasSetMathMode(cudahal_blas_handle handle, uint32_t mode);
cudahal_lt_status cublasSetSmCountTarget(cudahal_blas_handle handle, int count);

/* One cublasGemmEx or cublasGemmStridedBatchedEx call as the fake received it. */
struct fake_gemmex_call {
    struct cudahal_gemmex_call args;
    struct CUstream_st *stream; /* the handle's at the call */
    cudahal_lt_status status;
};

/* The calls recorded since the last reset (at most FAKE_BLAS_CALLS are kept). */
#define FAKE_BLAS_CALLS 64
int fake_cublas_calls(void);
const struct fake_gemmex_call *fake_cublas_call(int i);
void fake_cublas_reset(void);

/* The getter of cublas_api.def named `name` fails (CUBLAS_STATUS_INTERNAL_ERROR) until called
 * again with NULL. */
void fake_cublas_fail(const char *name);

#endif /* GPUPRIO_TEST_FAKE_CUBLAS_H */
