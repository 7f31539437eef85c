/*
 * hip_gemm.h - a hipblasLtMatmul call, forwarded whole or as slices of its output
 * (docs/design.md, "Long kernels: GEMM slices", "On ROCm: hipBLASLt").
 *
 * The rules are cuda_gemm.h's for cuBLASLt, read through hipBLASLt's attribute getters: the
 * algorithm the application chose for every slice, column-major layouts without batches, an
 * epilogue that acts on each element alone (a bias only where the cut leaves it in place, along
 * n), scalar scales and no amax, C equal to D or apart from it, D apart from A and B. The plan
 * (src/preempt/gemm_plan.h) cuts at multiples of 1024 and of GEMM_PLAN_UNKNOWN_TILE (hipBLASLt
 * does not say its tile), and hipBLASLt itself checks the algorithm on each distinct slice
 * (hipblaslt_ext::matmulIsAlgoSupported, on a copy of it) before the first is issued. Anything
 * else, or any failure while preparing, forwards the application's call unchanged.
 */
#ifndef GPUPRIO_HIP_GEMM_H
#define GPUPRIO_HIP_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_plan.h"
#include "gemm_tally.h"
#include "hip_hipblaslt.h"

/* The arguments of one hipblasLtMatmul call, as the application passed them. */
struct hiphal_gemm_call {
    hiphal_lt_handle handle;
    hiphal_lt_desc_opaque *desc;
    const void *alpha, *A, *B, *beta, *C;
    void *D;
    hiphal_lt_layout_opaque *Adesc, *Bdesc, *Cdesc, *Ddesc;
    const hiphal_lt_algo *algo;
    void *workspace;
    size_t workspace_size;
    struct ihipStream_t *stream;
};

/* What the shim knows of the call's stream and the settings. */
struct hiphal_gemm_when {
    bool gated;         /* its queue is held by gates below a higher priority */
    bool capturing;     /* a stream capture is in progress in the process */
    int device;         /* its queue's device, or -1 */
    uint64_t target_ns; /* GPUPRIO_GEMM_SLICE_US, 0 where slicing is off */
};

/* The hipblasLtMatmul that a call from site (a return address) reaches without gpuprio;
 * NULL when the process has none. */
hiphal_pfn_hipblasLtMatmul hiphal_gemm_real(const void *site);

/*
 * Makes the call through real (the application's hipblasLtMatmul): whole, with the caller's
 * arguments, or in slices when w allows and exactness holds. Returns what real returned: the
 * whole call's status, or the first slice's that failed (no later slice is issued), or success.
 */
hiphal_lt_status hiphal_gemm_matmul(hiphal_pfn_hipblasLtMatmul real,
                                    const struct hiphal_gemm_call *c,
                                    const struct hiphal_gemm_when *w);

/* What became of the long calls (gemm_tally.h; its one entry point, hipblasLtMatmul). */
extern struct gemm_tally hiphal_gemm_tally;

#endif /* GPUPRIO_HIP_GEMM_H */
