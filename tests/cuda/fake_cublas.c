/*
 * fake_cublas.c - a stand-in cuBLAS for CI, built as libcublas.so.13 beside the fake driver and
 * the fake cuBLASLt it links (as cuBLAS links its cuBLASLt), for the tests of gpuprio's slices
 * of cublasGemmEx (tests/cuda/gemmex_slices.c).
 *
 * Handles hold what cublasGemmEx reads (stream, workspace, pointer, atomics and math modes, SM
 * count target, with cuBLAS's defaults) and begin as a fake cuBLASLt handle does, so that a handle
 * may be passed as one. They come from a small pool, the lowest free slot first, so that a handle
 * created after one was destroyed is the same pointer (what a user-space allocator may well do).
 * cublasGemmEx and cublasGemmStridedBatchedEx compute float GEMMs on host memory with the fake
 * cuBLASLt's own arithmetic (fake_cublaslt_gemm, item by item: the same bits as cublasLtMatmul),
 * refuse other types, and record every call; cublasSetStream_v2 resets the handle's workspace to
 * the library's own, as cuBLAS does. Into a capturing stream they compute nothing but leave a
 * kernel node that computes the call at each replay (fake_cublaslt_capture).
 */
#include "fake_cublas.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cublaslt.h"

#define EXPORT __attribute__((visibility("default")))
enum { NOT_INITIALIZED = 1, INVALID_VALUE = 7, INTERNAL_ERROR = 14, NOT_SUPPORTED = 15 };

struct cudahal_blas_context {
    unsigned lt_magic; /* FAKE_LT_HANDLE_MAGIC: usable as a cuBLASLt handle */
    bool used;
    struct CUstream_st *stream;
    void *workspace;
    size_t workspace_size;
    int32_t pointer_mode, atomics;
    uint32_t math;
    int sm_target;
};

#define HANDLES 8
static struct cudahal_blas_context handles[HANDLES];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_gemmex_call calls[FAKE_BLAS_CALLS];
static int ncalls;
static const char *failing;

static bool live(cudahal_blas_handle h)
{
    return h && h >= handles && h < handles + HANDLES && h->used;
}

static cudahal_lt_status query(const char *name, cudahal_blas_handle h, const void *out)
{
    if (!live(h) || !out)
        return NOT_INITIALIZED;
    return failing && !strcmp(failing, name) ? INTERNAL_ERROR : CUDAHAL_LT_SUCCESS;
}

EXPORT void fake_cublas_fail(const char *name)
{
    failing = name;
}

EXPORT int fake_cublas_calls(void)
{
    return ncalls;
}

EXPORT const struct fake_gemmex_call *fake_cublas_call(int i)
{
    return i >= 0 && i < ncalls && i < FAKE_BLAS_CALLS ? &calls[i] : NULL;
}

EXPORT void fake_cublas_reset(void)
{
    pthread_mutex_lock(&mu);
    ncalls = 0;
    pthread_mutex_unlock(&mu);
}

EXPORT cudahal_lt_status cublasCreate_v2(cudahal_blas_handle *handle)
{
    if (!handle)
        return INVALID_VALUE;
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < HANDLES && handles[i].used)
        i++;
    if (i < HANDLES)
        handles[i] = (struct cudahal_blas_context){.lt_magic = FAKE_LT_HANDLE_MAGIC, .used = true};
    pthread_mutex_unlock(&mu);
    *handle = i < HANDLES ? &handles[i] : NULL;
    return i < HANDLES ? CUDAHAL_LT_SUCCESS : 3;
}

EXPORT cudahal_lt_status cublasDestroy_v2(cudahal_blas_handle handle)
{
    if (!live(handle))
        return NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    memset(handle, 0, sizeof *handle);
    pthread_mutex_unlock(&mu);
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasSetStream_v2(cudahal_blas_handle handle, struct CUstream_st *stream)
{
    if (!live(handle))
        return NOT_INITIALIZED;
    handle->stream = stream;
    handle->workspace = NULL; /* the library's own pool again */
    handle->workspace_size = 0;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasGetStream_v2(cudahal_blas_handle handle, struct CUstream_st **stream)
{
    cudahal_lt_status st = query("cublasGetStream_v2", handle, stream);
    if (!st)
        *stream = handle->stream;
    return st;
}

EXPORT cudahal_lt_status cublasSetWorkspace_v2(cudahal_blas_handle handle, void *workspace,
                                               size_t size)
{
    if (!live(handle))
        return NOT_INITIALIZED;
    if (size && !workspace)
        return INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_size = size;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasSetPointerMode_v2(cudahal_blas_handle handle, int32_t mode)
{
    if (!live(handle))
        return NOT_INITIALIZED;
    handle->pointer_mode = mode;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasGetPointerMode_v2(cudahal_blas_handle handle, int32_t *mode)
{
    cudahal_lt_status st = query("cublasGetPointerMode_v2", handle, mode);
    if (!st)
        *mode = handle->pointer_mode;
    return st;
}

EXPORT cudahal_lt_status cublasSetAtomicsMode(cudahal_blas_handle handle, int32_t mode)
{
    if (!live(handle))
        return NOT_INITIALIZED;
    handle->atomics = mode;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasGetAtomicsMode(cudahal_blas_handle handle, int32_t *mode)
{
    cudahal_lt_status st = query("cublasGetAtomicsMode", handle, mode);
    if (!st)
        *mode = handle->atomics;
    return st;
}

EXPORT cudahal_lt_status cublasSetMathMode(cudahal_blas_handle handle, uint32_t mode)
{
    if (!live(handle))
        return NOT_INITIALIZED;
    handle->math = mode;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasGetMathMode(cudahal_blas_handle handle, uint32_t *mode)
{
    cudahal_lt_status st = query("cublasGetMathMode", handle, mode);
    if (!st)
        *mode = handle->math;
    return st;
}

EXPORT cudahal_lt_status cublasSetSmCountTarget(cudahal_blas_handle handle, int count)
{
    if (!live(handle))
        return NOT_INITIALIZED;
    if (count < 0)
        return INVALID_VALUE;
    handle->sm_target = count;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasGetSmCountTarget(cudahal_blas_handle handle, int *count)
{
    cudahal_lt_status st = query("cublasGetSmCountTarget", handle, count);
    if (!st)
        *count = handle->sm_target;
    return st;
}

/* A checked call, each item at its strides. */
static void compute(const struct cudahal_gemmex_call *a)
{
    int items = a->batched ? a->batch_count : 1;
    for (int i = 0; i < items; i++) /* N, else T (real types) */
        fake_cublaslt_gemm(a->transa == CUDAHAL_LT_OP_N ? CUDAHAL_LT_OP_N : CUDAHAL_LT_OP_T,
                           a->transb == CUDAHAL_LT_OP_N ? CUDAHAL_LT_OP_N : CUDAHAL_LT_OP_T,
                           (uint64_t)a->m, (uint64_t)a->n, (uint64_t)a->k, *(const float *)a->alpha,
                           (const float *)a->A + i * a->stride_a, a->lda,
                           (const float *)a->B + i * a->stride_b, a->ldb, *(const float *)a->beta,
                           (float *)a->C + i * a->stride_c, a->ldc);
}

/* A call captured: its arguments and scalars, kept for every replay. */
struct captured {
    struct cudahal_gemmex_call call;
    float alpha, beta;
};

static void run_captured(void *arg)
{
    compute(&((struct captured *)arg)->call);
}

/* Into its stream's capture: false when that failed. */
static bool capture(const struct cudahal_gemmex_call *a, struct CUstream_st *stream)
{
    struct captured *k = malloc(sizeof *k);
    if (!k)
        return false;
    *k = (struct captured){*a, *(const float *)a->alpha, *(const float *)a->beta};
    k->call.alpha = &k->alpha;
    k->call.beta = &k->beta;
    if (fake_cublaslt_capture(stream, run_captured, k))
        return true;
    free(k);
    return false;
}

/* Both GEMM entry points: checks, computes (each item at its strides) and records. */
static cudahal_lt_status gemm(const struct cudahal_gemmex_call *a)
{
    struct fake_gemmex_call c = {*a, NULL, CUDAHAL_LT_SUCCESS};
    int items = a->batched ? a->batch_count : 1;
    if (!live(a->handle))
        c.status = NOT_INITIALIZED;
    else if (a->m <= 0 || a->n <= 0 || a->k <= 0 || !a->alpha || !a->beta || !a->A || !a->B ||
             !a->C || a->ldc < a->m || items < 0)
        c.status = INVALID_VALUE;
    else if (a->Atype != CUDAHAL_LT_R_32F || a->Btype != CUDAHAL_LT_R_32F ||
             a->Ctype != CUDAHAL_LT_R_32F)
        c.status = NOT_SUPPORTED;
    if (live(a->handle))
        c.stream = a->handle->stream;
    if (c.status == CUDAHAL_LT_SUCCESS && fake_cublaslt_stream_captures(c.stream)) {
        if (!capture(a, c.stream))
            c.status = INTERNAL_ERROR;
    } else if (c.status == CUDAHAL_LT_SUCCESS) {
        compute(a);
    }
    pthread_mutex_lock(&mu);
    if (ncalls < FAKE_BLAS_CALLS)
        calls[ncalls] = c;
    ncalls++;
    pthread_mutex_unlock(&mu);
    return c.status;
}

EXPORT cudahal_lt_status cublasGemmEx(cudahal_blas_handle handle, int32_t transa, int32_t transb,
                                      int m, int n, int k, const void *alpha, const void *A,
                                      uint32_t Atype, int lda, const void *B, uint32_t Btype,
                                      int ldb, const void *beta, void *C, uint32_t Ctype, int ldc,
                                      int32_t compute, int32_t algo)
{
    return gemm(&(struct cudahal_gemmex_call){
        handle, transa, transb, m,     n,   k,       alpha, A,     Atype, lda, B, Btype,
        ldb,    beta,   C,      Ctype, ldc, compute, algo,  false, 0,     0,   0, 0});
}

EXPORT cudahal_lt_status cublasGemmStridedBatchedEx(
    cudahal_blas_handle handle, int32_t transa, int32_t transb, int m, int n, int k,
    const void *alpha, const void *A, uint32_t Atype, int lda, long long strideA, const void *B,
    uint32_t Btype, int ldb, long long strideB, const void *beta, void *C, uint32_t Ctype, int ldc,
    long long strideC, int batchCount, int32_t compute, int32_t algo)
{
    return gemm(&(struct cudahal_gemmex_call){
        handle, transa,  transb, m,     n,       k,       alpha,   A,
        Atype,  lda,     B,      Btype, ldb,     beta,    C,       Ctype,
        ldc,    compute, algo,   true,  strideA, strideB, strideC, batchCount});
}
