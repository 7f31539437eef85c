/*
 * hip_hipblaslt.h - the part of hipBLASLt's C interface gpuprio uses, declared by gpuprio
 * itself: the build must not need hipblaslt.h (a C++ header, which Debian 12 does not have), and
 * gpuprio never links or loads hipBLASLt (it calls the application's, found at run time).
 *
 * The types have hipblaslt.h's layout on AMD's platform (handles and descriptors are pointers,
 * enumerations 32-bit, the algorithm 16 bytes and a size); the functions' parameters come from
 * hipblaslt_api.def, the constants from hipblaslt_consts.def. hipblaslt_check.cpp compiles both
 * against hipblaslt.h wherever the build is given it (GPUPRIO_HIPBLASLT_INCLUDE_DIR).
 */
#ifndef GPUPRIO_HIP_HIPBLASLT_H
#define GPUPRIO_HIP_HIPBLASLT_H

#include <stddef.h>
#include <stdint.h>

struct ihipStream_t; /* hipStream_t */

typedef int32_t hiphal_lt_status; /* hipblasStatus_t */
typedef void *hiphal_lt_handle;
typedef struct hiphal_lt_desc_opaque {
    uint64_t data[4];
} hiphal_lt_desc_opaque;
typedef struct hiphal_lt_layout_opaque {
    uint64_t data[4];
} hiphal_lt_layout_opaque;
typedef struct hiphal_lt_algo {
    uint8_t data[16];
    size_t max_workspace_bytes;
} hiphal_lt_algo;

/* The parameter types of hipblaslt_api.def, as gpuprio declares them. */
#ifndef HLT_HANDLE
#define HLT_HANDLE hiphal_lt_handle
#define HLT_DESC hiphal_lt_desc_opaque *
#define HLT_LAYOUT hiphal_lt_layout_opaque *
#define HLT_ALGO hiphal_lt_algo
#define HLT_STREAM struct ihipStream_t *
#define HLT_DESC_ATTR uint32_t
#define HLT_LAYOUT_ATTR uint32_t
#define HLT_DATA_TYPE uint32_t
#endif

enum {
#define HLT_CONST(ours, theirs, value) ours = value,
#define HLT_CONST6 HLT_CONST
#include "hipblaslt_consts.def"
#undef HLT_CONST6
#undef HLT_CONST
};

#define HLT_API(name, exported, params, args) typedef hiphal_lt_status(*hiphal_pfn_##name) params;
#include "hipblaslt_api.def"
#undef HLT_API

/*
 * hipBLASLt's check of an algorithm on a problem, hipblaslt_ext::matmulIsAlgoSupported: a C++
 * function of hipblaslt-ext.hpp (the C interface has no cublasLtMatmulAlgoCheck), found by its
 * mangled name; its two references are pointers in the C++ ABI. It rewrites the problem saved in
 * the algorithm, so it is only ever given a copy. hipblaslt_check.cpp checks the type, and the test
 * hip.hipblaslt_mangled the name.
 */
#define HIPHAL_LT_IS_ALGO_SUPPORTED                                                                 \
    "_ZN13hipblaslt_ext21matmulIsAlgoSupportedEPvP27hipblasLtMatmulDescOpaque_tPKvP29hipblasLtMatr" \
    "ixLayoutOpaque_tS6_S4_S6_S6_R22_hipblasLtMatmulAlgo_tRm"
typedef hiphal_lt_status (*hiphal_pfn_is_algo_supported)(
    hiphal_lt_handle handle, hiphal_lt_desc_opaque *desc, const void *alpha,
    hiphal_lt_layout_opaque *a, hiphal_lt_layout_opaque *b, const void *beta,
    hiphal_lt_layout_opaque *c, hiphal_lt_layout_opaque *d, hiphal_lt_algo *algo,
    size_t *workspace_size);

#endif /* GPUPRIO_HIP_HIPBLASLT_H */
