/*
 * real_blas_user.c - a library that calls the real cuBLAS the way PyTorch's does (linked against
 * libcublas.so.13 and libcublasLt.so.13, versioned references, loaded RTLD_LOCAL by
 * real_blas_main.c), with arguments every cuBLAS refuses before it touches a device: the
 * statuses are the library's own, with or without a GPU (realblas.sh).
 */
#include <stddef.h>
#include <stdio.h>

typedef int status_t;
status_t cublasCreate_v2(void **handle);
status_t cublasDestroy_v2(void *handle);
status_t cublasSetStream_v2(void *handle, void *stream);
status_t cublasSetWorkspace_v2(void *handle, void *workspace, size_t size);
status_t cublasGemmEx(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
                      const void *A, int Atype, int lda, const void *B, int Btype, int ldb,
                      const void *beta, void *C, int Ctype, int ldc, int compute, int algo);
status_t cublasGemmStridedBatchedEx(void *handle, int transa, int transb, int m, int n, int k,
                                    const void *alpha, const void *A, int Atype, int lda,
                                    long long strideA, const void *B, int Btype, int ldb,
                                    long long strideB, const void *beta, void *C, int Ctype,
                                    int ldc, long long strideC, int batchCount, int compute,
                                    int algo);
status_t cublasLtMatmul(void *handle, void *desc, const void *alpha, const void *A, void *Adesc,
                        const void *B, void *Bdesc, const void *beta, const void *C, void *Cdesc,
                        void *D, void *Ddesc, const void *algo, void *workspace, size_t size,
                        void *stream);

void real_blas_run(void); /* what real_blas_main calls */

#define R_16BF 14
#define COMPUTE_32F 68
#define GEMM_DEFAULT_TENSOR_OP 99

void real_blas_run(void)
{
    void *handle = NULL;
    float one = 1, zero = 0;
    printf("cublasCreate_v2 %d\n", cublasCreate_v2(&handle));
    printf("cublasSetStream_v2 %d\n", cublasSetStream_v2(handle, NULL));
    printf("cublasSetWorkspace_v2 %d\n", cublasSetWorkspace_v2(handle, NULL, 0));
    /* m < 0: refused as an invalid value before anything runs. */
    printf("cublasGemmEx %d\n",
           cublasGemmEx(handle, 0, 0, -1, 4096, 4096, &one, NULL, R_16BF, 4096, NULL, R_16BF, 4096,
                        &zero, NULL, R_16BF, 4096, COMPUTE_32F, GEMM_DEFAULT_TENSOR_OP));
    /* m < 0, then a batch count < 0: refused likewise. */
    printf("cublasGemmStridedBatchedEx %d\n",
           cublasGemmStridedBatchedEx(handle, 0, 0, -1, 512, 4096, &one, NULL, R_16BF, 512,
                                      512 * 4096, NULL, R_16BF, 4096, 512 * 4096, &zero, NULL,
                                      R_16BF, 512, 512 * 512, 64, COMPUTE_32F,
                                      GEMM_DEFAULT_TENSOR_OP));
    printf("cublasGemmStridedBatchedEx %d\n",
           cublasGemmStridedBatchedEx(handle, 0, 0, 512, 512, 4096, &one, NULL, R_16BF, 512,
                                      512 * 4096, NULL, R_16BF, 4096, 512 * 4096, &zero, NULL,
                                      R_16BF, 512, 512 * 512, -1, COMPUTE_32F,
                                      GEMM_DEFAULT_TENSOR_OP));
    printf("cublasLtMatmul %d\n", cublasLtMatmul(NULL, NULL, &one, NULL, NULL, NULL, NULL, &zero,
                                                 NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL));
    printf("cublasDestroy_v2 %d\n", cublasDestroy_v2(handle));
}
