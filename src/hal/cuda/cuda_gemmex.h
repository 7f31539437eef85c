/*
 * cuda_gemmex.h - a cublasGemmEx or cublasGemmStridedBatchedEx call, forwarded unchanged or,
 * when a lower priority's long GEMM would be sliced, translated into cuBLASLt's terms and issued
 * as slices by cuda_gemm.c (docs/design.md, "Long kernels: GEMM slices").
 *
 * cuBLAS chooses its kernel inside cublasGemmEx, and a new call per slice lets it choose again
 * (run 22: not exact). So a call that would be sliced is issued through the cuBLASLt that cuBLAS
 * itself uses: a matmul descriptor and layouts equal to the call's, a preference with the
 * handle's workspace and the pointers' alignments, cublasLtMatmulAlgoGetHeuristic's first
 * algorithm pinned on every slice, the handle's workspace and stream. The slices are then exact
 * relative to that algorithm's whole call; that they equal cublasGemmEx's result rests on the
 * heuristic choosing what cublasGemmEx chooses, which was so on an H200 with cuBLAS 13 (59 of 60
 * shapes; the one miss had a larger workspace than the handle's), not on a documented contract.
 *
 * Translated only when every setting that cublasGemmEx reads is one the translation carries:
 * pointer mode host, atomics not allowed, math mode CUBLAS_DEFAULT_MATH, no SM count target
 * (cublasSetSmCountTarget: the heuristic and the kernels would assume the whole device), algorithm
 * CUBLAS_GEMM_DEFAULT(_TENSOR_OP), transposes N or T, types of the table in cuda_gemmex.c, a
 * workspace set on the handle (cublasSetWorkspace_v2, seen by the shim; cublasSetStream_v2,
 * which resets it to cuBLAS's own pool, and cublasDestroy_v2 forget it). A strided batch is
 * translated into layouts with its count and strides (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and
 * STRIDED_BATCH_OFFSET) and cut between its items or within them (gemm_plan.h): one item, as cuBLAS
 * ignores strides then, is a plain GEMM; a stride of 0 or less (a broadcast), or items that
 * overlap, stay whole. Anything else, and any query that fails, forwards the call unchanged.
 */
#ifndef GPUPRIO_CUDA_GEMMEX_H
#define GPUPRIO_CUDA_GEMMEX_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_cublas.h"
#include "cuda_gemm.h"

/* What the shim knows of a stream's queue (cuda_gemm.h), for a target of target_ns. */
typedef struct cudahal_gemm_when (*cudahal_gemm_when_fn)(struct CUstream_st *stream,
                                                         uint64_t target_ns);

/* The application's function that a call came to: c->batched says which. */
union cudahal_gemmex_real {
    cudahal_pfn_cublasGemmEx gemm;
    cudahal_pfn_cublasGemmStridedBatchedEx batched;
};

/*
 * Makes the call through real (the application's cublasGemmEx or cublasGemmStridedBatchedEx):
 * whole and unchanged, or in slices when slicing is on (target_ns), the stream's queue allows
 * (when_of) and the translation holds. Returns what the whole call or the slices returned
 * (cudahal_gemm_matmul's rules).
 */
cudahal_lt_status cudahal_gemmex(union cudahal_gemmex_real real,
                                 const struct cudahal_gemmex_call *c, uint64_t target_ns,
                                 cudahal_gemm_when_fn when_of);

/* What the application set on its handles, after the real call succeeded: a workspace
 * (remembered for the handle), a stream or the handle's end (the workspace forgotten). */
void cudahal_gemmex_workspace_set(cudahal_blas_handle handle, void *workspace, size_t size);
void cudahal_gemmex_workspace_forget(cudahal_blas_handle handle);
/* Every handle's workspace forgotten (its calls whole until it is set again) and their lock made
 * anew: in a forked child, where a thread of the parent may have held it, mid-write. */
void cudahal_gemmex_workspaces_forget_all(void);

#endif /* GPUPRIO_CUDA_GEMMEX_H */
