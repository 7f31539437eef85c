/*
 * fake_cublaslt.h - what tests/cuda's programs call of the fake cuBLASLt (fake_cublaslt.c) beyond
 * what gpuprio declares (src/hal/cuda/cuda_cublaslt.h): the functions that make handles,
 * descriptors, layouts and algorithms, with cuBLASLt's own names and ABI, and the fake's record
 * of every cublasLtMatmul call.
 */
#ifndef GPUPRIO_TEST_FAKE_CUBLASLT_H
#define GPUPRIO_TEST_FAKE_CUBLASLT_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_cublaslt.h"

#define LT_API(name, exported, params, args) cudahal_lt_status name params;
#include "cublaslt_api.def"
#undef LT_API

cudahal_lt_status cublasLtCreate(cudahal_lt_handle *handle);
cudahal_lt_status cublasLtDestroy(cudahal_lt_handle handle);
cudahal_lt_status cublasLtMatmulAlgoInit(cudahal_lt_handle handle, int32_t compute_type,
                                         uint32_t scale_type, uint32_t a_type, uint32_t b_type,
                                         uint32_t c_type, uint32_t d_type, int algo_id,
                                         cudahal_lt_algo *algo);
cudahal_lt_status cublasLtMatmulAlgoConfigSetAttribute(cudahal_lt_algo *algo, uint32_t attr,
                                                       const void *buf, size_t size);

/* One cublasLtMatmul call as the fake received it, the dimensions of its D, and each layout's
 * items and batch stride (A, B, C, D) at the call. */
struct fake_lt_call {
    cudahal_lt_handle handle;
    cudahal_lt_desc_opaque *desc;
    const void *alpha, *A, *B, *beta, *C, *bias;
    void *D;
    cudahal_lt_layout_opaque *Adesc, *Bdesc, *Cdesc, *Ddesc;
    const cudahal_lt_algo *algo;
    void *workspace;
    size_t workspace_size;
    struct CUstream_st *stream;
    uint64_t m, n;
    cudahal_lt_status status;
    int32_t batch[4];
    int64_t stride[4];
};

/* The calls recorded since the last reset (at most FAKE_LT_CALLS are kept). */
#define FAKE_LT_CALLS 256
int fake_cublaslt_calls(void);
const struct fake_lt_call *fake_cublaslt_call(int i);
int fake_cublaslt_checks(void); /* cublasLtMatmulAlgoCheck calls */
void fake_cublaslt_reset(void);
/* Every cublasLtMatmul from now on takes ns more on the fake device's clock (a wait before the
 * kernel: a gate, a module loaded lazily). */
void fake_cublaslt_extra_ns(uint64_t ns);

/* From now on the algorithms need one byte of workspace per `elements` of D (0: none, as at
 * the start): cublasLtMatmulAlgoCheck says so, and cublasLtMatmul refuses a call that gives
 * less with CUBLAS_STATUS_INVALID_VALUE, as cuBLASLt documents (so a whole call can need more
 * than its slices). */
void fake_cublaslt_workspace_need(uint64_t elements);

/* The fake's compute type for float GEMMs (CUBLAS_COMPUTE_32F). */
#define FAKE_LT_COMPUTE_32F 68

/* What every handle begins with: a fake cuBLAS handle (fake_cublas.c) does too, so that it can be
 * passed as a cuBLASLt handle, as cuBLAS's documentation allows. */
#define FAKE_LT_HANDLE_MAGIC 0x17e4u

/* cublasLtMatmulAlgoGetHeuristic: the preference of its last call (maximum workspace, minimum
 * alignments of A, B, C, D), how many calls, and what the next calls answer: status (0: the
 * algorithm of id 21 with a 128x256 tile) and the workspace that algorithm needs. */
struct fake_lt_pref {
    uint64_t max_workspace;
    uint32_t align[4];
};
int fake_cublaslt_heuristics(void);
struct fake_lt_pref fake_cublaslt_last_pref(void);
void fake_cublaslt_heuristic_answers(cudahal_lt_status status, size_t workspace);

/* Whether stream captures; and, into its capture, a kernel node (through the driver) that calls
 * fn(arg) at each replay (false: none was made). fn and arg must outlive the graph. */
bool fake_cublaslt_stream_captures(struct CUstream_st *stream);
bool fake_cublaslt_capture(struct CUstream_st *stream, void (*fn)(void *), void *arg);

/* The fake's float GEMM, C = alpha op(A) op(B) + beta C, column-major, as cublasLtMatmul
 * computes it (for the fake cuBLAS's cublasGemmEx: both give the same bits). */
void fake_cublaslt_gemm(int transa, int transb, uint64_t m, uint64_t n, uint64_t k, float alpha,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                        float *C, int64_t ldc);

#endif /* GPUPRIO_TEST_FAKE_CUBLASLT_H */
