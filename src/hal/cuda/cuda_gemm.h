/*
 * cuda_gemm.h - a cublasLtMatmul call, forwarded whole or as slices of its output
 * (docs/design.md, "Long kernels: GEMM slices").
 *
 * What slices exactly is established here, from the call's own descriptors, before anything is
 * issued: the algorithm the application chose (so every slice runs the whole problem's kernel,
 * tile, split-K and reduction, and each output element is computed by the same instructions
 * over the same k order), column-major layouts without batches or planes, an epilogue that acts
 * on each element alone (with a bias per row, offset with the rows), scalar scales only, C equal
 * to D or apart from it, D apart from A and B. The plan (src/preempt/gemm_plan.h) then cuts at
 * multiples of 1024 and of the tile, and cuBLASLt itself checks the algorithm on each distinct
 * slice (cublasLtMatmulAlgoCheck) before the first is issued. Anything else, or any failure
 * while preparing, forwards the application's call unchanged.
 */
#ifndef GPUPRIO_CUDA_GEMM_H
#define GPUPRIO_CUDA_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_cublaslt.h"
#include "gemm_plan.h"

/* The arguments of one cublasLtMatmul call, as the application passed them. */
struct cudahal_gemm_call {
    cudahal_lt_handle handle;
    cudahal_lt_desc_opaque *desc;
    const void *alpha, *A, *B, *beta, *C;
    void *D;
    cudahal_lt_layout_opaque *Adesc, *Bdesc, *Cdesc, *Ddesc;
    const cudahal_lt_algo *algo;
    void *workspace;
    size_t workspace_size;
    struct CUstream_st *stream;
};

/* What the shim knows of the call's stream and the settings. */
struct cudahal_gemm_when {
    bool gated;         /* its queue is held by gates below a higher priority */
    bool capturing;     /* a stream capture is in progress in the process */
    int device;         /* its queue's device, or -1 */
    uint64_t target_ns; /* GPUPRIO_GEMM_SLICE_US */
};

/* What happened, for gpuprio's statistics. */
struct cudahal_gemm_counts {
    uint64_t sliced, slices;
    uint64_t whole[GEMM_WHOLE_COUNT]; /* calls left whole, by reason (long ones, or unsupported) */
};

/* The cublasLtMatmul that a call from site (a return address) reaches without gpuprio: the one
 * of the caller's own object and its dependencies, else the one of a loaded libcublasLt; NULL
 * when the process has none. */
cudahal_pfn_cublasLtMatmul cudahal_gemm_real(const void *site);

/* Whether calls to real may be sliced: it is the cuBLASLt whose functions slicing uses, of the
 * major version gpuprio's declarations were checked against. */
bool cudahal_gemm_sliceable_lib(cudahal_pfn_cublasLtMatmul real);

/*
 * Makes the call through real (the application's cublasLtMatmul): whole, with the caller's
 * arguments, or in slices when w allows and exactness holds. Returns what real returned: the
 * whole call's status, or the first slice's that failed (no later slice is issued), or success.
 */
cudahal_lt_status cudahal_gemm_matmul(cudahal_pfn_cublasLtMatmul real,
                                      const struct cudahal_gemm_call *c,
                                      const struct cudahal_gemm_when *w);

/* The counts so far; and said in one line at GPUPRIO_LOG=info (nothing when all are 0). */
void cudahal_gemm_counts(struct cudahal_gemm_counts *out);
void cudahal_gemm_say_counts(void);

#endif /* GPUPRIO_CUDA_GEMM_H */
