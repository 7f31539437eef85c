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
#include "cuda_gemm_clock.h"
#include "gemm_plan.h"
#include "gemm_tally.h"

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

/* The entry points whose calls are sliced (cublasLtMatmul's own, cublasGemmEx's and
 * cublasGemmStridedBatchedEx's translated by cuda_gemmex.c), each counted on its own:
 * X(NAME, function). */
#define CUDAHAL_GEMM_ENTRIES(X)                                                                    \
    X(LT, "cublasLtMatmul") X(GEMMEX, "cublasGemmEx") X(BATCHED, "cublasGemmStridedBatchedEx")
enum cudahal_gemm_entry {
#define CUDAHAL_GEMM_ENTRY_ENUM(name, function) CUDAHAL_GEMM_FROM_##name,
    CUDAHAL_GEMM_ENTRIES(CUDAHAL_GEMM_ENTRY_ENUM)
#undef CUDAHAL_GEMM_ENTRY_ENUM
        CUDAHAL_GEMM_ENTRY_COUNT
};

/* What the shim knows of the call's stream and the settings. */
struct cudahal_gemm_when {
    enum cudahal_gemm_entry entry; /* where the application's call came in */
    bool gated;                    /* its queue is held by gates below a higher priority */
    bool capturing;                /* a stream capture is in progress in the process */
    bool into_capture;  /* the call's own stream captures, and graph gates are on: its slices go
                         * into the capture (planned by its learned time, whatever gated says) */
    int device;         /* its queue's device, or -1 */
    uint64_t target_ns; /* GPUPRIO_GEMM_SLICE_US */
};

/* The functions of the cuBLASLt whose descriptors slicing reads. */
struct cudahal_lt_api {
#define LT_API(name, exported, params, args) cudahal_pfn_##name name;
#include "cublaslt_api.def"
#undef LT_API
};

/* The cublasLtMatmul that a call from site (a return address) reaches without gpuprio
 * (cuda_blas_real.h); NULL when the process has none. */
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

/* That cuBLASLt, of the major version gpuprio's declarations were checked against, or NULL. */
const struct cudahal_lt_api *cudahal_gemm_lt(void);

/*
 * For a call of another entry point (w->entry) translated into cuBLASLt's terms (c, through
 * real, with an algorithm pinned; its layouts may be of a strided batch, cut between items
 * first), whose whole GPU time learned_ns that entry point learned by its own key: issues it in
 * slices when the plan and exactness allow, timed under that key when timed is not NULL (the
 * clock asked for this call), and returns true with *st as cudahal_gemm_matmul would; else
 * issues nothing and returns false with *why (the caller forwards the original call, timed if
 * asked, and counts it, cudahal_gemm_count_whole).
 */
bool cudahal_gemm_slice_translated(cudahal_pfn_cublasLtMatmul real,
                                   const struct cudahal_gemm_call *c,
                                   const struct cudahal_gemm_when *w, uint64_t learned_ns,
                                   const struct cudahal_gemm_key *timed,
                                   enum gemm_whole_reason *why, cudahal_lt_status *st);

/* The reason to count a call left whole for why: in a capture, one not learned yet is counted as
 * captured (it is never timed there, and every replay runs it whole however long it is). */
enum gemm_whole_reason cudahal_gemm_captured_why(const struct cudahal_gemm_when *w,
                                                 enum gemm_whole_reason why);

/* Counts a call of entry on device (its queue's, or -1) left whole for why, where it matters: a
 * long call (learned_ns over target_ns), or one slicing cannot judge (its form, a capture, the
 * library's check). */
void cudahal_gemm_count_whole(enum cudahal_gemm_entry entry, int device, enum gemm_whole_reason why,
                              uint64_t learned_ns, uint64_t target_ns);

/* What became of the long calls of each entry point (CUDAHAL_GEMM_ENTRIES' order). */
extern struct gemm_tally cudahal_gemm_tally;

/* The forms read before forgotten, and their lock made anew: in a forked child, where a thread of
 * the parent may have held it (and left an entry half written). */
void cudahal_gemm_forget_forms(void);

#endif /* GPUPRIO_CUDA_GEMM_H */
