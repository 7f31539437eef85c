/*
 * shim_cublaslt.c - cublasLtMatmul, exported by libgpuprio-cuda.so so that a lower-priority
 * stream's long GEMM can run as slices of its output, each short enough that a higher priority
 * waits for one slice instead of the whole GEMM (docs/design.md, "Long kernels: GEMM slices").
 *
 * The shim decides only whether slicing can help: GPUPRIO_GEMM_SLICE_US is set, no stream
 * capture is in progress, and the stream's queue is held by gates below a higher priority
 * (XQ_GATE_DEVICE: Level 2, what `gpuprio top` shows as level 2). The slices' kernels reach the
 * driver through the shim's own wrappers, so each is admitted and gated like any launch. What
 * slices exactly and how is the HAL's (src/hal/cuda/cuda_gemm.c). Everything else forwards the
 * application's call unchanged to its own cublasLtMatmul, found next after the shim; gpuprio
 * never loads cuBLASLt, and a process without it cannot have made the call (it then gets
 * CUBLAS_STATUS_NOT_INITIALIZED, as from a library that is not set up).
 */
#include "cuda_compat.h"

#include <stdatomic.h>

#include "xq_admission.h"
#include "core.h"
#include "cuda_cublaslt.h"
#include "cuda_gemm.h"
#include "gp_options.h"
#include "xqueue.h"

#define GP_EXPORT __attribute__((visibility("default")))

static struct cudahal_gemm_when when_of(struct CUstream_st *stream, uint64_t target_ns)
{
    struct cudahal_gemm_when w = {.device = -1, .target_ns = target_ns};
    core_resolve(); /* the driver, for the stream's queue */
    w.capturing = xq_capturing();
    struct xqueue *q = core_queue_of((uintptr_t)stream, false);
    if (q) {
        w.device = q->device;
        w.gated = (atomic_load(&xq_st(q)->gate) & XQ_GATE_DEVICE) != 0;
    }
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
    cudahal_gemm_say_counts();
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
