/*
 * fake_hipblaslt.h - what the fake hipBLASLt (fake_hipblaslt.c) records, for the tests of
 * gpuprio's hipBLASLt slices (hiplt_slices.c).
 */
#ifndef GPUPRIO_FAKE_HIPBLASLT_H
#define GPUPRIO_FAKE_HIPBLASLT_H

#include <stdbool.h>

#include "hip_hipblaslt.h"

#define FAKE_HLT_CALLS 64
/* The fake's tile (rows x columns of D): the order of each element's k sum depends on the
 * parity of its tile within the call (fake_hipblaslt.c). */
#define FAKE_HLT_TILE_M 256
#define FAKE_HLT_TILE_N 128
/* What a heuristic would give: an algorithm whose first word is this (the rest zero). */
#define FAKE_HLT_ALGO_MAGIC 0xa1607a1du
/* Extra descriptor attributes the fake knows (hipBLASLt's ids). */
#define FAKE_HLT_DESC_BIAS_DATA_TYPE 4
#define FAKE_HLT_EPILOGUE_RELU_AUX 130

/* One hipblasLtMatmul call as the fake received it. */
struct fake_hlt_call {
    hiphal_lt_handle handle;
    hiphal_lt_desc_opaque *desc;
    const void *alpha, *A, *B, *beta, *C;
    void *D;
    hiphal_lt_layout_opaque *Adesc, *Bdesc, *Cdesc, *Ddesc;
    const hiphal_lt_algo *algo;
    void *workspace;
    size_t workspace_size;
    struct ihipStream_t *stream;
    uint64_t m, n; /* D's layout's */
    hiphal_lt_status status;
};

int fake_hipblaslt_calls(void);
const struct fake_hlt_call *fake_hipblaslt_call(int i);
/* hipblaslt_ext::matmulIsAlgoSupported calls since the last reset. */
int fake_hipblaslt_checks(void);
void fake_hipblaslt_reset(void);

#endif /* GPUPRIO_FAKE_HIPBLASLT_H */
