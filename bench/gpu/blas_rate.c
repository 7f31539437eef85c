/*
 * blas_rate.c - what a small GEMM call costs the host on a real GPU, as PyTorch makes it: per
 * matmul, cublasSetStream_v2 and cublasSetWorkspace_v2 on its handle, then cublasGemmEx (bf16,
 * fp32 compute); or a cublasLtMatmul with an algorithm from the heuristic (a linear layer with a
 * bias). Run it with and without LD_PRELOAD=libgpuprio-cuda.so, side by side: the difference is
 * what gpuprio's BLAS entry points add to a call that is not sliced (GEMM slicing is on by
 * default, so every GEMM call of every process passes through them).
 *
 *   blas_rate gemmex|lt CALLS [SIZE]     (SIZE: m = n = k, default 64)
 *
 * Prints "blas_rate ENTRY SIZE: X us per call (best of 3 rounds of CALLS)": the time spent in the
 * calls themselves, issued 256 at a time with a synchronize between batches that is not counted
 * (the launch queue never fills, so no call waits for the GPU).
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call, ok)                                                                               \
    do {                                                                                           \
        int r_ = (int)(call);                                                                      \
        if (r_ != (ok)) {                                                                          \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, r_);                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "gemmex") && strcmp(argv[1], "lt"))) {
        fprintf(stderr, "usage: blas_rate gemmex|lt CALLS [SIZE]\n");
        return 2;
    }
    int lt = !strcmp(argv[1], "lt");
    long calls = atol(argv[2]);
    int size = argc > 3 ? atoi(argv[3]) : 64;
    if (calls <= 0 || size <= 0) {
        fprintf(stderr, "blas_rate: CALLS and SIZE must be positive\n");
        return 2;
    }
    size_t ws_size = 32u << 20, bytes = (size_t)size * size * 2;
    void *a, *b, *c, *ws;
    float *bias;
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    CK(cudaMalloc(&a, bytes), cudaSuccess);
    CK(cudaMalloc(&b, bytes), cudaSuccess);
    CK(cudaMalloc(&c, bytes), cudaSuccess);
    CK(cudaMalloc(&ws, ws_size), cudaSuccess);
    CK(cudaMalloc((void **)&bias, (size_t)size * 2), cudaSuccess);
    CK(cudaMemset(a, 0, bytes), cudaSuccess);
    CK(cudaMemset(b, 0, bytes), cudaSuccess);
    CK(cudaMemset(bias, 0, (size_t)size * 2), cudaSuccess);
    float alpha = 1, beta = 0;

    cublasHandle_t h;
    CK(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    cublasLtHandle_t lth;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t layout;
    cublasLtMatmulHeuristicResult_t heur;
    CK(cublasLtCreate(&lth), CUBLAS_STATUS_SUCCESS);
    CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
       CUBLAS_STATUS_SUCCESS);
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
       CUBLAS_STATUS_SUCCESS);
    CK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF, size, size, size), CUBLAS_STATUS_SUCCESS);
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &ws_size, sizeof ws_size),
       CUBLAS_STATUS_SUCCESS);
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lth, desc, layout, layout, layout, layout, pref, 1, &heur,
                                      &found),
       CUBLAS_STATUS_SUCCESS);
    if (!found) {
        fprintf(stderr, "blas_rate: no cuBLASLt algorithm for %d x %d x %d\n", size, size, size);
        return 1;
    }

    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        double spent = 0, t0 = 0;
        for (long i = 0; i < calls; i++) {
            if (i % 256 == 0) {
                CK(cudaStreamSynchronize(stream), cudaSuccess);
                t0 = now_s();
            }
            if (lt) {
                CK(cublasLtMatmul(lth, desc, &alpha, a, layout, b, layout, &beta, c, layout, c,
                                  layout, &heur.algo, ws, ws_size, stream),
                   CUBLAS_STATUS_SUCCESS);
            } else {
                CK(cublasSetStream(h, stream), CUBLAS_STATUS_SUCCESS);
                CK(cublasSetWorkspace(h, ws, ws_size), CUBLAS_STATUS_SUCCESS);
                CK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a,
                                CUDA_R_16BF, size, b, CUDA_R_16BF, size, &beta, c, CUDA_R_16BF,
                                size, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   CUBLAS_STATUS_SUCCESS);
            }
            if (i % 256 == 255 || i + 1 == calls)
                spent += now_s() - t0;
        }
        CK(cudaStreamSynchronize(stream), cudaSuccess);
        double us = spent / (double)calls * 1e6;
        if (us < best)
            best = us;
    }
    printf("blas_rate %s %d: %.3f us per call (best of 3 rounds of %ld)\n", argv[1], size, best,
           calls);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(lth);
    cublasDestroy(h);
    return 0;
}
