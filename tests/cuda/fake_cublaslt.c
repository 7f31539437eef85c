/*
 * fake_cublaslt.c - a stand-in cuBLASLt for CI, built as libcublasLt.so.13 beside the fake
 * driver (fake_cuda.c), for the tests of gpuprio's GEMM slices (tests/cuda/gemm_slices.c).
 *
 * It implements what gpuprio and the tests call, with cuBLASLt's ABI and rules that matter to
 * slicing: descriptors are plain data inside their semi-opaque structs (so a copy is a
 * descriptor too), each attribute is read and written with its own size (a wrong size is
 * CUBLAS_STATUS_INVALID_VALUE, as is an attribute this version does not know: CUDA 12's atomics
 * ones), layouts are column-major unless told otherwise. cublasLtMatmul computes
 * D = epilogue(alpha * op(A) op(B) + beta * C) in float on host memory (A and B both float or
 * both int8, C and D float; the bias float, or bf16 where its type attribute says), the k sum in
 * one order, in each item of a strided batch (every layout of as many items, each at its
 * CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET), so that a sliced call equals the whole one bit
 * for bit exactly when every slice gets the right pointers, sizes and items; it records every
 * call (fake_cublaslt.h), and tells the fake driver's clock that it took one nanosecond per
 * multiply-add. Into a capturing stream it computes nothing: it launches a kernel (through the
 * driver, cuLaunchKernel, as cuBLASLt's kernels reach it) that computes the call, with a copy of
 * its descriptor, layouts and scalars, at every replay of the node the capture makes of it
 * (fake_cublaslt_capture, which the fake cuBLAS uses too). The heuristic answers
 * one algorithm (fake_cublaslt.h says which, and how to make it refuse) and records the
 * preference it was asked with; fake_cublaslt_gemm is the same arithmetic for the fake cuBLAS.
 *
 *   FAKE_CUBLASLT_VERSION=N      what cublasLtGetVersion says (default 130000: CUDA 13's,
 *                                the version gpuprio slices for)
 *   FAKE_CUBLASLT_CHECK_FAIL=1   cublasLtMatmulAlgoCheck refuses every algorithm
 *   FAKE_CUBLASLT_FAIL_AFTER=N   every cublasLtMatmul after the first N returns
 *                                CUBLAS_STATUS_EXECUTION_FAILED (13) and computes nothing
 *   FAKE_CUBLASLT_NO_MATH=1      GEMMs (its own and the fake cuBLAS's) write nothing, the clock
 *                                advanced as ever: for benchmarks of what a call costs the host
 *                                (bench/blas_cost.c), where the arithmetic would hide it
 */
#include "fake_cublaslt.h"

#include "cuda_compat.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define HANDLE_MAGIC FAKE_LT_HANDLE_MAGIC
#define PREF_MAGIC 0x9ef0u
#define DESC_MAGIC 0xde5cu
#define LAYOUT_MAGIC 0x1a70u
#define ALGO_MAGIC 0xa160u

enum { INVALID_VALUE = 7, EXECUTION_FAILED = 13, NOT_SUPPORTED = 15 };

void fake_cuda_advance_ns(uint64_t ns); /* fake_cuda.c */

struct cudahal_lt_context {
    unsigned magic;
};

/* ---- the record ---- */

static pthread_mutex_t record_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_lt_call calls[FAKE_LT_CALLS];
static int ncalls, nchecks, matmuls, nheuristics;
static struct fake_lt_pref last_pref;
static cudahal_lt_status heuristic_status;
static size_t heuristic_workspace;

EXPORT int fake_cublaslt_calls(void)
{
    return ncalls;
}

EXPORT const struct fake_lt_call *fake_cublaslt_call(int i)
{
    return i >= 0 && i < ncalls && i < FAKE_LT_CALLS ? &calls[i] : NULL;
}

EXPORT int fake_cublaslt_checks(void)
{
    return nchecks;
}

EXPORT int fake_cublaslt_heuristics(void)
{
    return nheuristics;
}

EXPORT struct fake_lt_pref fake_cublaslt_last_pref(void)
{
    return last_pref;
}

EXPORT void fake_cublaslt_heuristic_answers(cudahal_lt_status status, size_t workspace)
{
    heuristic_status = status;
    heuristic_workspace = workspace;
}

static _Atomic uint64_t extra_ns, workspace_per;

EXPORT void fake_cublaslt_workspace_need(uint64_t elements)
{
    atomic_store(&workspace_per, elements);
}

EXPORT void fake_cublaslt_extra_ns(uint64_t ns)
{
    atomic_store(&extra_ns, ns);
}

EXPORT void fake_cublaslt_reset(void)
{
    pthread_mutex_lock(&record_mu);
    ncalls = nchecks = nheuristics = 0;
    memset(&last_pref, 0, sizeof last_pref);
    pthread_mutex_unlock(&record_mu);
}

/* ---- handles ---- */

EXPORT cudahal_lt_status cublasLtCreate(cudahal_lt_handle *handle)
{
    if (!handle)
        return INVALID_VALUE;
    *handle = calloc(1, sizeof **handle);
    if (!*handle)
        return 3;
    (*handle)->magic = HANDLE_MAGIC;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtDestroy(cudahal_lt_handle handle)
{
    if (!handle || handle->magic != HANDLE_MAGIC)
        return CUDAHAL_LT_NOT_INITIALIZED;
    handle->magic = 0;
    free(handle);
    return CUDAHAL_LT_SUCCESS;
}

/* ---- descriptors: attribute id -> (slot, size); slot -1: unknown to this version ---- */

#define DESC_IDS 39
static const struct {
    int8_t slot;
    uint8_t size;
} desc_attrs[DESC_IDS] = {
    [0] = {0, 4},   [1] = {1, 4},   [2] = {2, 4},   [3] = {3, 4},   [4] = {4, 4},   [5] = {5, 4},
    [6] = {6, 4},   [7] = {7, 4},   [8] = {8, 8},   [9] = {-1, 0},  [10] = {-1, 0}, [11] = {9, 8},
    [12] = {-1, 0}, [13] = {-1, 0}, [14] = {-1, 0}, [15] = {10, 4}, [16] = {-1, 0}, [17] = {11, 8},
    [18] = {12, 8}, [19] = {13, 8}, [20] = {14, 8}, [21] = {15, 8}, [22] = {16, 4}, [23] = {17, 8},
    [24] = {18, 8}, [25] = {19, 1}, [26] = {20, 4}, [27] = {-1, 0}, [28] = {-1, 0}, [29] = {-1, 0},
    [30] = {-1, 0}, [31] = {21, 4}, [32] = {22, 4}, [33] = {23, 4}, [34] = {24, 4}, [35] = {25, 4},
    [36] = {26, 8}, [37] = {27, 4}, [38] = {28, 8},
};
struct fake_desc {
    uint64_t magic;
    uint64_t v[29];
};
_Static_assert(sizeof(struct fake_desc) <= sizeof(cudahal_lt_desc_opaque), "desc too big");

static struct fake_desc *desc_of(cudahal_lt_desc_opaque *d)
{
    struct fake_desc *f = (struct fake_desc *)d;
    return f && f->magic == DESC_MAGIC ? f : NULL;
}

static uint64_t desc_get(const struct fake_desc *f, unsigned id)
{
    return f->v[desc_attrs[id].slot];
}

EXPORT cudahal_lt_status cublasLtMatmulDescCreate(cudahal_lt_desc_opaque **desc,
                                                  int32_t compute_type, uint32_t scale_type)
{
    if (!desc)
        return INVALID_VALUE;
    struct fake_desc *f = calloc(1, sizeof(cudahal_lt_desc_opaque));
    if (!f)
        return 3;
    f->magic = DESC_MAGIC;
    f->v[0] = (uint32_t)compute_type;
    f->v[1] = scale_type;
    f->v[6] = CUDAHAL_LT_FILL_FULL;
    f->v[7] = CUDAHAL_LT_EPILOGUE_DEFAULT;
    f->v[16] = f->v[20] = (uint32_t)-1; /* aux and bias types: as D's */
    *desc = (cudahal_lt_desc_opaque *)f;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatmulDescDestroy(cudahal_lt_desc_opaque *desc)
{
    struct fake_desc *f = desc_of(desc);
    if (!f)
        return INVALID_VALUE;
    f->magic = 0;
    free(f);
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatmulDescSetAttribute(cudahal_lt_desc_opaque *desc, uint32_t attr,
                                                        const void *buf, size_t size)
{
    struct fake_desc *f = desc_of(desc);
    if (!f || attr >= DESC_IDS || desc_attrs[attr].slot < 0 || size != desc_attrs[attr].size ||
        !buf)
        return INVALID_VALUE;
    uint64_t v = 0;
    memcpy(&v, buf, size);
    f->v[desc_attrs[attr].slot] = v;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatmulDescGetAttribute(cudahal_lt_desc_opaque *desc, uint32_t attr,
                                                        void *buf, size_t size, size_t *written)
{
    struct fake_desc *f = desc_of(desc);
    if (!f || attr >= DESC_IDS || desc_attrs[attr].slot < 0 || !written)
        return INVALID_VALUE;
    *written = desc_attrs[attr].size;
    if (size != desc_attrs[attr].size || !buf)
        return INVALID_VALUE;
    uint64_t v = f->v[desc_attrs[attr].slot];
    memcpy(buf, &v, size);
    return CUDAHAL_LT_SUCCESS;
}

/* ---- layouts ---- */

struct fake_layout {
    uint32_t magic, type;
    int32_t order, batch;
    uint64_t rows, cols;
    int64_t ld, stride, plane;
    uint32_t mode, unused;
};
_Static_assert(sizeof(struct fake_layout) <= sizeof(cudahal_lt_layout_opaque), "layout too big");

static struct fake_layout *layout_of(cudahal_lt_layout_opaque *l)
{
    struct fake_layout *f = (struct fake_layout *)l;
    return f && f->magic == LAYOUT_MAGIC ? f : NULL;
}

/* The workspace an algorithm needs for D of layout d. */
static uint64_t workspace_needed(const struct fake_layout *d)
{
    uint64_t per = atomic_load(&workspace_per);
    return per ? d->rows * d->cols * (uint64_t)(d->batch > 0 ? d->batch : 1) / per : 0;
}

EXPORT cudahal_lt_status cublasLtMatrixLayoutCreate(cudahal_lt_layout_opaque **layout,
                                                    uint32_t type, uint64_t rows, uint64_t cols,
                                                    int64_t ld)
{
    if (!layout)
        return INVALID_VALUE;
    struct fake_layout *f = calloc(1, sizeof(cudahal_lt_layout_opaque));
    if (!f)
        return 3;
    *f = (struct fake_layout){.magic = LAYOUT_MAGIC,
                              .type = type,
                              .order = CUDAHAL_LT_ORDER_COL,
                              .batch = 1,
                              .rows = rows,
                              .cols = cols,
                              .ld = ld};
    *layout = (cudahal_lt_layout_opaque *)f;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatrixLayoutDestroy(cudahal_lt_layout_opaque *layout)
{
    struct fake_layout *f = layout_of(layout);
    if (!f)
        return INVALID_VALUE;
    f->magic = 0;
    free(f);
    return CUDAHAL_LT_SUCCESS;
}

/* The field of attribute attr and its size, or NULL. */
static void *layout_field(struct fake_layout *f, uint32_t attr, size_t *size)
{
    void *fields[] = {&f->type,  &f->order,  &f->rows,  &f->cols, &f->ld,
                      &f->batch, &f->stride, &f->plane, &f->mode};
    static const size_t sizes[] = {4, 4, 8, 8, 8, 4, 8, 8, 4};
    if (attr >= sizeof sizes / sizeof *sizes)
        return NULL;
    *size = sizes[attr];
    return fields[attr];
}

EXPORT cudahal_lt_status cublasLtMatrixLayoutSetAttribute(cudahal_lt_layout_opaque *layout,
                                                          uint32_t attr, const void *buf,
                                                          size_t size)
{
    struct fake_layout *f = layout_of(layout);
    size_t want = 0;
    void *field = f ? layout_field(f, attr, &want) : NULL;
    if (!field || size != want || !buf)
        return INVALID_VALUE;
    memcpy(field, buf, size);
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatrixLayoutGetAttribute(cudahal_lt_layout_opaque *layout,
                                                          uint32_t attr, void *buf, size_t size,
                                                          size_t *written)
{
    struct fake_layout *f = layout_of(layout);
    size_t want = 0;
    void *field = f ? layout_field(f, attr, &want) : NULL;
    if (!field || !written)
        return INVALID_VALUE;
    *written = want;
    if (size != want || !buf)
        return INVALID_VALUE;
    memcpy(buf, field, size);
    return CUDAHAL_LT_SUCCESS;
}

/* ---- algorithms: data[0] magic, [1] id, [2] tile id, [3] split of k ---- */

EXPORT cudahal_lt_status cublasLtMatmulAlgoInit(cudahal_lt_handle handle, int32_t compute_type,
                                                uint32_t scale_type, uint32_t a_type,
                                                uint32_t b_type, uint32_t c_type, uint32_t d_type,
                                                int algo_id, cudahal_lt_algo *algo)
{
    (void)compute_type, (void)scale_type, (void)a_type, (void)b_type, (void)c_type, (void)d_type;
    if (!handle || handle->magic != HANDLE_MAGIC || !algo)
        return INVALID_VALUE;
    memset(algo, 0, sizeof *algo);
    algo->data[0] = ALGO_MAGIC;
    algo->data[1] = (uint64_t)algo_id;
    algo->data[3] = 1;
    return CUDAHAL_LT_SUCCESS;
}

/* The slot of a configuration attribute this fake knows (both are 4 bytes), or 0. */
static int config_slot(uint32_t attr)
{
    return attr == CUDAHAL_LT_CONFIG_TILE_ID ? 2 : attr == CUDAHAL_LT_CONFIG_SPLITK_NUM ? 3 : 0;
}

EXPORT cudahal_lt_status cublasLtMatmulAlgoConfigSetAttribute(cudahal_lt_algo *algo, uint32_t attr,
                                                              const void *buf, size_t size)
{
    if (!algo || algo->data[0] != ALGO_MAGIC || !config_slot(attr) || size != 4)
        return INVALID_VALUE;
    uint32_t v;
    memcpy(&v, buf, 4);
    algo->data[config_slot(attr)] = v;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatmulAlgoConfigGetAttribute(const cudahal_lt_algo *algo,
                                                              uint32_t attr, void *buf, size_t size,
                                                              size_t *written)
{
    if (!algo || algo->data[0] != ALGO_MAGIC || !config_slot(attr) || !written)
        return INVALID_VALUE;
    *written = 4;
    if (size != 4 || !buf)
        return INVALID_VALUE;
    uint32_t v = (uint32_t)algo->data[config_slot(attr)];
    memcpy(buf, &v, 4);
    return CUDAHAL_LT_SUCCESS;
}

EXPORT size_t cublasLtGetVersion(void);
EXPORT size_t cublasLtGetVersion(void)
{
    const char *v = getenv("FAKE_CUBLASLT_VERSION");
    return v ? (size_t)strtoul(v, NULL, 10) : 130000;
}

EXPORT cudahal_lt_status cublasLtMatmulAlgoCheck(
    cudahal_lt_handle handle, cudahal_lt_desc_opaque *desc, cudahal_lt_layout_opaque *a,
    cudahal_lt_layout_opaque *b, cudahal_lt_layout_opaque *c, cudahal_lt_layout_opaque *d,
    const cudahal_lt_algo *algo, cudahal_lt_heuristic *result)
{
    pthread_mutex_lock(&record_mu);
    nchecks++;
    pthread_mutex_unlock(&record_mu);
    if (!handle || handle->magic != HANDLE_MAGIC || !desc_of(desc) || !layout_of(a) ||
        !layout_of(b) || !layout_of(c) || !layout_of(d) || !algo || algo->data[0] != ALGO_MAGIC ||
        !result)
        return INVALID_VALUE;
    const char *fail = getenv("FAKE_CUBLASLT_CHECK_FAIL");
    memset(result, 0, sizeof *result);
    result->algo = *algo;
    result->workspaceSize = workspace_needed(layout_of(d));
    result->state = fail && *fail == '1' ? NOT_SUPPORTED : CUDAHAL_LT_SUCCESS;
    return result->state;
}

/* ---- heuristic preferences: attribute id -> field (only those gpuprio sets) ---- */

struct fake_pref {
    uint64_t magic, max_workspace;
    uint32_t align[4];
};
_Static_assert(sizeof(struct fake_pref) <= sizeof(cudahal_lt_pref_opaque), "pref too big");

static struct fake_pref *pref_of(cudahal_lt_pref_opaque *p)
{
    struct fake_pref *f = (struct fake_pref *)p;
    return f && f->magic == PREF_MAGIC ? f : NULL;
}

EXPORT cudahal_lt_status cublasLtMatmulPreferenceCreate(cudahal_lt_pref_opaque **pref)
{
    if (!pref)
        return INVALID_VALUE;
    struct fake_pref *f = calloc(1, sizeof(cudahal_lt_pref_opaque));
    if (!f)
        return 3;
    *f = (struct fake_pref){.magic = PREF_MAGIC, .align = {256, 256, 256, 256}};
    *pref = (cudahal_lt_pref_opaque *)f;
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatmulPreferenceDestroy(cudahal_lt_pref_opaque *pref)
{
    struct fake_pref *f = pref_of(pref);
    if (!f)
        return INVALID_VALUE;
    f->magic = 0;
    free(f);
    return CUDAHAL_LT_SUCCESS;
}

EXPORT cudahal_lt_status cublasLtMatmulPreferenceSetAttribute(cudahal_lt_pref_opaque *pref,
                                                              uint32_t attr, const void *buf,
                                                              size_t size)
{
    struct fake_pref *f = pref_of(pref);
    if (!f || !buf)
        return INVALID_VALUE;
    if (attr == CUDAHAL_LT_PREF_MAX_WORKSPACE && size == 8)
        memcpy(&f->max_workspace, buf, 8);
    else if (attr >= CUDAHAL_LT_PREF_ALIGN_A && attr <= CUDAHAL_LT_PREF_ALIGN_D && size == 4)
        memcpy(&f->align[attr - CUDAHAL_LT_PREF_ALIGN_A], buf, 4);
    else
        return INVALID_VALUE;
    return CUDAHAL_LT_SUCCESS;
}

/* The algorithm of id 21 with a 128x256 tile (id 23), needing heuristic_workspace, unless told
 * to answer heuristic_status. */
EXPORT cudahal_lt_status cublasLtMatmulAlgoGetHeuristic(
    cudahal_lt_handle handle, cudahal_lt_desc_opaque *desc, cudahal_lt_layout_opaque *a,
    cudahal_lt_layout_opaque *b, cudahal_lt_layout_opaque *c, cudahal_lt_layout_opaque *d,
    cudahal_lt_pref_opaque *pref, int requested, cudahal_lt_heuristic results[], int *returned)
{
    struct fake_pref *p = pref_of(pref);
    pthread_mutex_lock(&record_mu);
    nheuristics++;
    if (p)
        last_pref = (struct fake_lt_pref){p->max_workspace,
                                          {p->align[0], p->align[1], p->align[2], p->align[3]}};
    pthread_mutex_unlock(&record_mu);
    if (!handle || handle->magic != HANDLE_MAGIC || !desc_of(desc) || !layout_of(a) ||
        !layout_of(b) || !layout_of(c) || !layout_of(d) || !p || requested < 1 || !results ||
        !returned)
        return INVALID_VALUE;
    *returned = 0;
    if (heuristic_status != CUDAHAL_LT_SUCCESS)
        return heuristic_status;
    memset(&results[0], 0, sizeof results[0]);
    results[0].algo.data[0] = ALGO_MAGIC;
    results[0].algo.data[1] = 21;
    results[0].algo.data[2] = 23;
    results[0].algo.data[3] = 1;
    results[0].workspaceSize = heuristic_workspace;
    results[0].state = CUDAHAL_LT_SUCCESS;
    *returned = 1;
    return CUDAHAL_LT_SUCCESS;
}

/* ---- the GEMM ---- */

static size_t esize_of(const struct fake_layout *l)
{
    return l->type == CUDAHAL_LT_R_8I ? 1 : sizeof(float);
}

static float op_at(const void *x, const struct fake_layout *l, bool t, uint64_t r, uint64_t c)
{
    uint64_t at = t ? c + r * (uint64_t)l->ld : r + c * (uint64_t)l->ld;
    return l->type == CUDAHAL_LT_R_8I ? ((const int8_t *)x)[at] : ((const float *)x)[at];
}

/* The descriptor's bias type is one the fake reads: -1 (D's, float), float or bf16. */
static bool bias_type_known(const struct fake_desc *f)
{
    uint32_t t = (uint32_t)desc_get(f, CUDAHAL_LT_DESC_BIAS_DATA_TYPE);
    return t == UINT32_MAX || t == CUDAHAL_LT_R_32F || t == CUDAHAL_LT_R_16BF;
}

/* The bias's i-th element: of the descriptor's bias type (bf16), or float (-1: D's type). */
static float bias_at(const struct fake_desc *f, uint64_t i)
{
    const void *bias = (const void *)(uintptr_t)desc_get(f, CUDAHAL_LT_DESC_BIAS_POINTER);
    if ((uint32_t)desc_get(f, CUDAHAL_LT_DESC_BIAS_DATA_TYPE) != CUDAHAL_LT_R_16BF)
        return ((const float *)bias)[i];
    uint32_t bits = (uint32_t)((const uint16_t *)bias)[i] << 16;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static float epilogue(uint32_t e, float v, float bias)
{
    if (e & CUDAHAL_LT_EPILOGUE_BIAS)
        v += bias;
    if (e & CUDAHAL_LT_EPILOGUE_RELU)
        v = v > 0 ? v : 0;
    if (e & CUDAHAL_LT_EPILOGUE_GELU)
        v = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    return v;
}

/* ---- calls into a capture ---- */

/* Every call captured, kept for the replays of its node (and reachable, so never a leak). */
struct deferred {
    struct deferred *next;
    void (*fn)(void *);
    void *arg;
    void *params[1]; /* the kernel's: this */
};
static struct deferred *deferred_all;

static void deferred_kernel(void **params)
{
    struct deferred *d = params[0];
    d->fn(d->arg);
}

EXPORT bool fake_cublaslt_stream_captures(struct CUstream_st *stream)
{
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS &&
           status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

EXPORT bool fake_cublaslt_capture(struct CUstream_st *stream, void (*fn)(void *), void *arg)
{
    struct deferred *d = malloc(sizeof *d);
    if (!d)
        return false;
    *d = (struct deferred){.fn = fn, .arg = arg};
    d->params[0] = d;
    if (cuLaunchKernel((CUfunction)(void *)deferred_kernel, 1, 1, 1, 1, 1, 1, 0, stream, d->params,
                       NULL) != CUDA_SUCCESS) {
        free(d);
        return false;
    }
    pthread_mutex_lock(&record_mu);
    d->next = deferred_all;
    deferred_all = d;
    pthread_mutex_unlock(&record_mu);
    return true;
}

/* FAKE_CUBLASLT_NO_MATH, read once. */
static bool no_math(void)
{
    static atomic_int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv("FAKE_CUBLASLT_NO_MATH");
        v = e && *e == '1';
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}

/* Runs a checked GEMM (none with FAKE_CUBLASLT_NO_MATH). */
static void compute(const struct fake_desc *f, const struct fake_layout *la,
                    const struct fake_layout *lb, const struct fake_layout *lc,
                    const struct fake_layout *ld, const void *A, const void *B, const float *C,
                    float *D, float alpha, float beta)
{
    bool ta = desc_get(f, CUDAHAL_LT_DESC_TRANSA) == CUDAHAL_LT_OP_T;
    bool tb = desc_get(f, CUDAHAL_LT_DESC_TRANSB) == CUDAHAL_LT_OP_T;
    uint32_t e = (uint32_t)desc_get(f, CUDAHAL_LT_DESC_EPILOGUE);
    bool bias = desc_get(f, CUDAHAL_LT_DESC_BIAS_POINTER) != 0;
    uint64_t k = ta ? la->rows : la->cols;
    if (no_math())
        return;
    for (uint64_t j = 0; j < ld->cols; j++)
        for (uint64_t i = 0; i < ld->rows; i++) {
            float sum = 0;
            for (uint64_t l = 0; l < k; l++)
                sum += op_at(A, la, ta, i, l) * op_at(B, lb, tb, l, j);
            float v = alpha * sum;
            if (beta != 0)
                v += beta * C[i + j * (uint64_t)lc->ld];
            D[i + j * (uint64_t)ld->ld] = epilogue(e, v, bias ? bias_at(f, i) : 0);
        }
}

/* A column-major matrix of d's items, strided, of type t. */
static bool col_of(const struct fake_layout *l, const struct fake_layout *d, uint32_t t)
{
    return l && l->type == t && l->order == CUDAHAL_LT_ORDER_COL && l->batch == d->batch &&
           l->batch >= 1 && l->mode == CUDAHAL_LT_BATCH_STRIDED && l->plane == 0 &&
           l->ld >= (int64_t)l->rows;
}

static void record(const struct fake_lt_call *c)
{
    pthread_mutex_lock(&record_mu);
    if (ncalls < FAKE_LT_CALLS)
        calls[ncalls] = *c;
    ncalls++;
    pthread_mutex_unlock(&record_mu);
}

EXPORT void fake_cublaslt_gemm(int transa, int transb, uint64_t m, uint64_t n, uint64_t k,
                               float alpha, const float *A, int64_t lda, const float *B,
                               int64_t ldb, float beta, float *C, int64_t ldc)
{
    struct fake_desc f = {.magic = DESC_MAGIC};
    f.v[desc_attrs[CUDAHAL_LT_DESC_TRANSA].slot] = (uint32_t)transa;
    f.v[desc_attrs[CUDAHAL_LT_DESC_TRANSB].slot] = (uint32_t)transb;
    f.v[desc_attrs[CUDAHAL_LT_DESC_EPILOGUE].slot] = CUDAHAL_LT_EPILOGUE_DEFAULT;
    bool ta = transa == CUDAHAL_LT_OP_T, tb = transb == CUDAHAL_LT_OP_T;
    struct fake_layout la = {.rows = ta ? k : m, .cols = ta ? m : k, .ld = lda},
                       lb = {.rows = tb ? n : k, .cols = tb ? k : n, .ld = ldb},
                       lc = {.rows = m, .cols = n, .ld = ldc};
    compute(&f, &la, &lb, &lc, &lc, A, B, C, C, alpha, beta);
    fake_cuda_advance_ns(m * n * k);
}

/* A checked call's arguments, by value (a captured one runs at every replay of its node). */
struct matmul {
    struct fake_desc f;
    struct fake_layout la, lb, lc, ld;
    const void *A, *B, *C;
    void *D;
    float alpha, beta;
};

static void run_matmul(void *arg)
{
    const struct matmul *m = arg;
    for (int32_t i = 0; i < m->ld.batch; i++)
        compute(&m->f, &m->la, &m->lb, &m->lc, &m->ld,
                (const char *)m->A + (size_t)i * (size_t)m->la.stride * esize_of(&m->la),
                (const char *)m->B + (size_t)i * (size_t)m->lb.stride * esize_of(&m->lb),
                (const float *)m->C + i * m->lc.stride, (float *)m->D + i * m->ld.stride, m->alpha,
                m->beta);
    bool ta = desc_get(&m->f, CUDAHAL_LT_DESC_TRANSA) == CUDAHAL_LT_OP_T;
    fake_cuda_advance_ns(m->ld.rows * m->ld.cols * (ta ? m->la.rows : m->la.cols) *
                         (uint64_t)m->ld.batch);
}

EXPORT cudahal_lt_status cublasLtMatmul(cudahal_lt_handle handle, cudahal_lt_desc_opaque *desc,
                                        const void *alpha, const void *A,
                                        cudahal_lt_layout_opaque *Adesc, const void *B,
                                        cudahal_lt_layout_opaque *Bdesc, const void *beta,
                                        const void *C, cudahal_lt_layout_opaque *Cdesc, void *D,
                                        cudahal_lt_layout_opaque *Ddesc,
                                        const cudahal_lt_algo *algo, void *workspace,
                                        size_t workspaceSizeInBytes, struct CUstream_st *stream)
{
    struct fake_desc *f = desc_of(desc);
    struct fake_layout *la = layout_of(Adesc), *lb = layout_of(Bdesc), *lc = layout_of(Cdesc),
                       *ld = layout_of(Ddesc);
    struct fake_lt_call c = {handle,
                             desc,
                             alpha,
                             A,
                             B,
                             beta,
                             C,
                             f ? (const void *)(uintptr_t)desc_get(f, CUDAHAL_LT_DESC_BIAS_POINTER)
                               : NULL,
                             D,
                             Adesc,
                             Bdesc,
                             Cdesc,
                             Ddesc,
                             algo,
                             workspace,
                             workspaceSizeInBytes,
                             stream,
                             ld ? ld->rows : 0,
                             ld ? ld->cols : 0,
                             CUDAHAL_LT_SUCCESS,
                             {0},
                             {0}};
    const struct fake_layout *layouts[] = {la, lb, lc, ld};
    for (int i = 0; i < 4; i++)
        if (layouts[i])
            c.batch[i] = layouts[i]->batch, c.stride[i] = layouts[i]->stride;
    const char *after = getenv("FAKE_CUBLASLT_FAIL_AFTER");
    pthread_mutex_lock(&record_mu);
    bool failing = after && *after && matmuls++ >= atoi(after);
    pthread_mutex_unlock(&record_mu);
    fake_cuda_advance_ns(atomic_load(&extra_ns));
    if (!handle || handle->magic != HANDLE_MAGIC || !f || !alpha || !beta || !A || !B || !D)
        c.status = INVALID_VALUE;
    else if (!ld || !la || !col_of(la, ld, la->type) || !col_of(lb, ld, la->type) ||
             (la->type != CUDAHAL_LT_R_32F && la->type != CUDAHAL_LT_R_8I) ||
             !col_of(lc, ld, CUDAHAL_LT_R_32F) || !col_of(ld, ld, CUDAHAL_LT_R_32F) ||
             !bias_type_known(f) ||
             (desc_get(f, CUDAHAL_LT_DESC_EPILOGUE) &
              ~(uint64_t)(CUDAHAL_LT_EPILOGUE_DEFAULT | CUDAHAL_LT_EPILOGUE_RELU |
                          CUDAHAL_LT_EPILOGUE_BIAS | CUDAHAL_LT_EPILOGUE_GELU)))
        c.status = NOT_SUPPORTED;
    else if (workspaceSizeInBytes < workspace_needed(ld))
        c.status = INVALID_VALUE;
    else if (failing)
        c.status = EXECUTION_FAILED;
    struct matmul m = {0};
    if (c.status == CUDAHAL_LT_SUCCESS)
        m = (struct matmul){
            *f, *la, *lb, *lc, *ld, A, B, C, D, *(const float *)alpha, *(const float *)beta};
    if (c.status == CUDAHAL_LT_SUCCESS && fake_cublaslt_stream_captures(stream)) {
        struct matmul *kept = malloc(sizeof *kept);
        if (kept)
            *kept = m;
        if (!kept || !fake_cublaslt_capture(stream, run_matmul, kept)) {
            free(kept);
            c.status = EXECUTION_FAILED;
        }
    } else if (c.status == CUDAHAL_LT_SUCCESS) {
        run_matmul(&m);
    }
    record(&c);
    return c.status;
}
