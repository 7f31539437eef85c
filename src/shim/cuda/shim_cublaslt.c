/*
 * shim_cublaslt.c - cublasLtMatmul, cublasGemmEx and cublasGemmStridedBatchedEx, exported by
 * libgpuprio-cuda.so so that a lower-priority stream's long GEMM can run as slices of its output,
 * each short enough that a higher priority waits for one slice instead of the whole GEMM
 * (docs/design.md, "Long kernels: GEMM slices"); and cublasSetWorkspace_v2, cublasSetStream_v2
 * and cublasDestroy_v2, forwarded after noting each handle's workspace, which a translated
 * cublasGemmEx needs (cuda_gemmex.h).
 *
 * The shim decides only whether slicing can help: GPUPRIO_GEMM_SLICE_US is set, no stream
 * capture is in progress, and the stream's queue is held by gates below a higher priority
 * (XQ_GATE_DEVICE: Level 2, what `gpuprio top` shows as level 2); or, with GPUPRIO_GRAPH_GATE_US
 * set too, the call's own stream captures (its slices become nodes of the graph, each with a wait
 * node before it in the graph's gated copy). The slices' kernels reach the driver through the
 * shim's own wrappers, so each is admitted and gated like any launch. What
 * slices exactly and how is the HAL's (src/hal/cuda/cuda_gemm.c). Everything else forwards the
 * application's call unchanged to its own cublasLtMatmul, found next after the shim; gpuprio
 * never loads cuBLASLt, and a process without it cannot have made the call (it then gets
 * CUBLAS_STATUS_NOT_INITIALIZED, as from a library that is not set up).
 */
#include "cuda_compat.h"

#include <pthread.h>
#include <stdatomic.h>

#include "xq_admission.h"
#include "core.h"
#include "cuda_cublaslt.h"
#include "cuda_gemm.h"
#include "cuda_gemm_clock.h"
#include "cuda_gemmex.h"
#include "cuda_blas_real.h"
#include "cuda_graph_gate.h"
#include "cuda_node_time.h"
#include "gp_options.h"
#include "gpuprio.h"
#include "sched_board.h"
#include "xqueue.h"

#define GP_EXPORT __attribute__((visibility("default")))

static struct cudahal_gemm_when when_of(struct CUstream_st *stream, uint64_t target_ns)
{
    struct cudahal_gemm_when w = {.device = -1, .target_ns = target_ns};
    core_resolve(); /* the driver, for the stream's queue */
    w.capturing = xq_capturing();
    struct xqueue *q = core_queue_of((uintptr_t)stream, false);
    int priority = GPUPRIO_PRIORITY_NORMAL; /* a stream without a queue: the process's */
    if (q) {
        w.device = q->device;
        w.gated = (atomic_load(&xq_st(q)->gate) & XQ_GATE_DEVICE) != 0;
        priority = atomic_load(&xq_st(q)->priority);
    } else {
        gp_opt_priority(GP_OPT_PRIORITY, &priority);
    }
    /* Into its own stream's capture, with graph gates on: sliced there, a wait node before each
     * slice in the graph's gated copy. Not at high priority or above: the graph is then most
     * likely replayed by the work the others wait for, which slices would only slow down. The
     * legacy stream never captures. */
    w.into_capture = w.capturing && gp_opt_uint(GP_OPT_GRAPH_GATE_US) &&
                     priority < GPUPRIO_PRIORITY_HIGH && stream && stream != CU_STREAM_LEGACY &&
                     cudahal_graph_ops.stream_capturing((uintptr_t)stream) == 1;
    return w;
}

/* The entry point cublaslt_api.def marks exported (cublasLtMatmul, whose parameter names the
 * wrapper below uses: another would need a wrapper of its own). */
static cudahal_lt_status slices_cublasLtMatmul(cudahal_pfn_cublasLtMatmul real,
                                               const struct cudahal_gemm_call *c)
{
    uint64_t target_ns = 1000 * gp_opt_uint(GP_OPT_GEMM_SLICE_US);
    if (!target_ns || core_depth)
        return cudahal_gemm_matmul(real, c, &(struct cudahal_gemm_when){.device = -1});
    struct cudahal_gemm_when w = when_of(c->stream, target_ns);
    return cudahal_gemm_matmul(real, c, &w);
}

/* What slicing did, said once at exit (GPUPRIO_LOG=info). */
__attribute__((destructor)) static void say_counts(void)
{
    gemm_tally_say(&cudahal_gemm_tally);
}

/* What slicing did on device, shown while the process runs: in its record on the device's board
 * (gpuprio top, metrics), on each change of a count. */
static void show_counts(int device)
{
    struct gemm_counts n;
    gemm_tally_device(&cudahal_gemm_tally, device, &n);
    sb_record_gemm(device, &n);
}

static void forget_counts(void)
{
    gemm_tally_forget(&cudahal_gemm_tally);
}

/* A forked child keeps none of its parent's counts (lifecycle.c: none of its scheduling state
 * either): its record and its line at exit say its own calls. Nor its forms read before, learned
 * times, handles' workspaces or notes of captured nodes, whose locks a thread of the parent may
 * have held at the fork (a child would wait for them for good at its first GEMM, or capture or
 * graph instantiation). */
__attribute__((constructor)) static void show_counts_on_change(void)
{
    gemm_tally_on_counted(&cudahal_gemm_tally, show_counts);
    pthread_atfork(NULL, NULL, forget_counts);
    pthread_atfork(NULL, NULL, cudahal_gemm_forget_forms);
    pthread_atfork(NULL, NULL, cudahal_gemm_clock_forget_all);
    pthread_atfork(NULL, NULL, cudahal_gemmex_workspaces_forget_all);
    pthread_atfork(NULL, NULL, cudahal_node_time_forget_all);
}

#define LT_EXPORT_0(name, params, args)
#define LT_DECLARE_0(name, params)
#define LT_DECLARE_1(name, params) GP_EXPORT cudahal_lt_status name params;
#define LT_API(name, exported, params, args) LT_DECLARE_##exported(name, params)
#include "cublaslt_api.def"
#undef LT_API
#define LT_EXPORT_1(name, params, args)                                                            \
    GP_EXPORT cudahal_lt_status name params                                                        \
    {                                                                                              \
        cudahal_pfn_##name real = cudahal_gemm_real(__builtin_return_address(0));                  \
        if (!real)                                                                                 \
            return CUDAHAL_LT_NOT_INITIALIZED;                                                     \
        return slices_##name(                                                                      \
            real, &(const struct cudahal_gemm_call){lightHandle, computeDesc, alpha, A, B, beta,   \
                                                    C, D, Adesc, Bdesc, Cdesc, Ddesc, algo,        \
                                                    workspace, workspaceSizeInBytes, stream});     \
    }
#define LT_API(name, exported, params, args) LT_EXPORT_##exported(name, params, args)
#include "cublaslt_api.def"
#undef LT_API

/* ---- cuBLAS ---- */

#define BLAS_DECLARE_0(fn, params)
#define BLAS_DECLARE_1(fn, params)                                                                 \
    GP_EXPORT cudahal_lt_status fn params;                                                         \
    static struct cudahal_blas_entry entry_##fn = {                                                \
        .name = #fn, .stem = "libcublas", .library = "cuBLAS"};
#define BLAS_API(fn, exported, params, args) BLAS_DECLARE_##exported(fn, params)
#include "cublas_api.def"
#undef BLAS_API

/* The application's own name for this wrapper's caller (used in the wrapper itself). */
#define BLAS_REAL(name)                                                                            \
    ((cudahal_pfn_##name)cudahal_blas_real(&entry_##name, __builtin_return_address(0)))

GP_EXPORT cudahal_lt_status cublasGemmEx(cudahal_blas_handle handle, int32_t transa, int32_t transb,
                                         int m, int n, int k, const void *alpha, const void *A,
                                         uint32_t Atype, int lda, const void *B, uint32_t Btype,
                                         int ldb, const void *beta, void *C, uint32_t Ctype,
                                         int ldc, int32_t computeType, int32_t algo)
{
    cudahal_pfn_cublasGemmEx real = BLAS_REAL(cublasGemmEx);
    if (!real)
        return CUDAHAL_LT_NOT_INITIALIZED;
    uint64_t target_ns = 1000 * gp_opt_uint(GP_OPT_GEMM_SLICE_US);
    if (!target_ns || core_depth)
        return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                    Ctype, ldc, computeType, algo);
    struct cudahal_gemmex_call c = {handle, transa,      transb, m,     n,   k,    alpha, A,
                                    Atype,  lda,         B,      Btype, ldb, beta, C,     Ctype,
                                    ldc,    computeType, algo,   false, 0,   0,    0,     0};
    return cudahal_gemmex((union cudahal_gemmex_real){.gemm = real}, &c, target_ns, when_of);
}

GP_EXPORT cudahal_lt_status cublasGemmStridedBatchedEx(
    cudahal_blas_handle handle, int32_t transa, int32_t transb, int m, int n, int k,
    const void *alpha, const void *A, uint32_t Atype, int lda, long long strideA, const void *B,
    uint32_t Btype, int ldb, long long strideB, const void *beta, void *C, uint32_t Ctype, int ldc,
    long long strideC, int batchCount, int32_t computeType, int32_t algo)
{
    cudahal_pfn_cublasGemmStridedBatchedEx real = BLAS_REAL(cublasGemmStridedBatchedEx);
    if (!real)
        return CUDAHAL_LT_NOT_INITIALIZED;
    uint64_t target_ns = 1000 * gp_opt_uint(GP_OPT_GEMM_SLICE_US);
    if (!target_ns || core_depth)
        return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                    strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
    struct cudahal_gemmex_call c = {handle, transa, transb,  m,       n,       k,
                                    alpha,  A,      Atype,   lda,     B,       Btype,
                                    ldb,    beta,   C,       Ctype,   ldc,     computeType,
                                    algo,   true,   strideA, strideB, strideC, batchCount};
    return cudahal_gemmex((union cudahal_gemmex_real){.batched = real}, &c, target_ns, when_of);
}

/* Whether handles' workspaces are noted: only translated calls read them, so with slicing off
 * (fixed for the process) these calls, which PyTorch makes before every matmul, only forward. */
static bool recording(void)
{
    return gp_opt_uint(GP_OPT_GEMM_SLICE_US) != 0;
}

GP_EXPORT cudahal_lt_status cublasSetWorkspace_v2(cudahal_blas_handle handle, void *workspace,
                                                  size_t workspaceSizeInBytes)
{
    cudahal_pfn_cublasSetWorkspace_v2 real = BLAS_REAL(cublasSetWorkspace_v2);
    if (!real)
        return CUDAHAL_LT_NOT_INITIALIZED;
    cudahal_lt_status st = real(handle, workspace, workspaceSizeInBytes);
    if (!recording())
        return st;
    if (st == CUDAHAL_LT_SUCCESS)
        cudahal_gemmex_workspace_set(handle, workspace, workspaceSizeInBytes);
    else
        cudahal_gemmex_workspace_forget(handle);
    return st;
}

/* cuBLAS's documentation of cublasSetStream() says that it resets the handle's workspace to the
 * default pool, unconditionally: forgotten, even when the call fails. */
GP_EXPORT cudahal_lt_status cublasSetStream_v2(cudahal_blas_handle handle,
                                               struct CUstream_st *streamId)
{
    cudahal_pfn_cublasSetStream_v2 real = BLAS_REAL(cublasSetStream_v2);
    if (!real)
        return CUDAHAL_LT_NOT_INITIALIZED;
    if (recording())
        cudahal_gemmex_workspace_forget(handle);
    return real(handle, streamId);
}

GP_EXPORT cudahal_lt_status cublasDestroy_v2(cudahal_blas_handle handle)
{
    cudahal_pfn_cublasDestroy_v2 real = BLAS_REAL(cublasDestroy_v2);
    if (!real)
        return CUDAHAL_LT_NOT_INITIALIZED;
    if (recording())
        cudahal_gemmex_workspace_forget(handle);
    return real(handle);
}
