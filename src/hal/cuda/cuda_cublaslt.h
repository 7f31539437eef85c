/*
 * cuda_cublaslt.h - the part of cuBLASLt's interface gpuprio uses, declared by gpuprio itself:
 * the build must not need cublasLt.h (CI machines have the CUDA driver's header only), and
 * gpuprio never links or loads cuBLASLt (it calls the application's, found at run time).
 *
 * The types have cublasLt.h's layout and calling convention (handles and descriptors are
 * pointers, enumerations 32-bit, the algorithm 64 bytes); the functions' parameters come from
 * cublaslt_api.def, the constants from cublaslt_consts.def, the tiles from cublaslt_tiles.def.
 * cublaslt_check.c compiles all three against cublasLt.h wherever the build finds it.
 */
#ifndef GPUPRIO_CUDA_CUBLASLT_H
#define GPUPRIO_CUDA_CUBLASLT_H

#include <stddef.h>
#include <stdint.h>

struct CUstream_st; /* cudaStream_t and CUstream */

typedef int32_t cudahal_lt_status; /* cublasStatus_t */
typedef struct cudahal_lt_context *cudahal_lt_handle;
typedef struct cudahal_lt_desc_opaque {
    uint64_t data[32];
} cudahal_lt_desc_opaque;
typedef struct cudahal_lt_layout_opaque {
    uint64_t data[8];
} cudahal_lt_layout_opaque;
typedef struct cudahal_lt_pref_opaque {
    uint64_t data[8];
} cudahal_lt_pref_opaque;
typedef struct cudahal_lt_algo {
    uint64_t data[8];
} cudahal_lt_algo;
typedef struct cudahal_lt_heuristic {
    cudahal_lt_algo algo;
    size_t workspaceSize;
    cudahal_lt_status state;
    float wavesCount;
    int reserved[4];
} cudahal_lt_heuristic;

/* The parameter types of cublaslt_api.def, as gpuprio declares them. */
#ifndef LT_HANDLE
#define LT_HANDLE cudahal_lt_handle
#define LT_DESC cudahal_lt_desc_opaque *
#define LT_LAYOUT cudahal_lt_layout_opaque *
#define LT_ALGO cudahal_lt_algo
#define LT_HEURISTIC cudahal_lt_heuristic
#define LT_STREAM struct CUstream_st *
#define LT_DESC_ATTR uint32_t
#define LT_LAYOUT_ATTR uint32_t
#define LT_CONFIG_ATTR uint32_t
#define LT_DATA_TYPE uint32_t
#define LT_COMPUTE int32_t
#define LT_PREF cudahal_lt_pref_opaque *
#define LT_PREF_ATTR uint32_t
#endif

enum {
#define LT_CONST(ours, theirs, value) ours = value,
#include "cublaslt_consts.def"
#undef LT_CONST
};

#define LT_API(name, exported, params, args) typedef cudahal_lt_status(*cudahal_pfn_##name) params;
#include "cublaslt_api.def"
#undef LT_API

#endif /* GPUPRIO_CUDA_CUBLASLT_H */
