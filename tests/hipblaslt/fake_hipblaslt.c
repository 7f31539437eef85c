/*
 * fake_hipblaslt.c - a stand-in hipBLASLt for CI, built as libhipblaslt.so.1 over the simulated
 * HIP device (tests/sim), for the tests of gpuprio's hipBLASLt slices (hiplt_slices.c).
 *
 * It implements what gpuprio and the tests call, with hipBLASLt's C ABI (hip_hipblaslt.h) and the
 * rules that matter to slicing: descriptors and layouts are handles of objects inside the
 * library (as hipBLASLt's are, not plain data), each attribute is read and written with its own
 * size (another is HIPBLAS_STATUS_INVALID_VALUE, as is an attribute the fake does not know), and
 * hipblaslt_ext::matmulIsAlgoSupported (its C++ name) may write into the algorithm it is given,
 * as hipBLASLt's does where the kernel supports the problem only without its epilogue (its
 * "fallback" flag). hipblasLtMatmul checks its arguments, records the call
 * (fake_hipblaslt.h) and launches one kernel on the call's stream (hipLaunchKernel, so through
 * gpuprio's wrappers, as hipBLASLt's kernels go) that computes
 * D = epilogue(alpha * op(A) op(B) + beta * C) on the host over the simulator's memory, in fp32,
 * bf16 or fp16 (each matrix of its own type, the sums in float), and takes 1 ns per
 * multiply-add of simulated time. Each element's k sum depends on the parity of the
 * FAKE_HLT_TILE_M x FAKE_HLT_TILE_N tile it lies in, counted from the call's own D: forwards in
 * float in even tiles, backwards and rounded to D's type after each step in odd ones. A slice
 * whose first row or column is not on a tile boundary of the whole call computes some elements
 * as the other tiles do, and (the values being what they are) gets other bits.
 *
 *   FAKE_HIPBLASLT_CHECK_FAIL=1   matmulIsAlgoSupported refuses every algorithm
 *   FAKE_HIPBLASLT_WORKSPACE=N    the workspace it says an algorithm needs (default 0)
 *   FAKE_HIPBLASLT_WORKSPACE_PER=E  an algorithm needs one byte more per E elements of D, which
 *                                 it says, and hipblasLtMatmul refuses a call that gives less
 *                                 (HIPBLAS_STATUS_INVALID_VALUE): a whole call can need more
 *                                 than its slices
 *   FAKE_HIPBLASLT_FALLBACK=1     it accepts every algorithm, setting a byte of it (as hipBLASLt
 *                                 sets its fallback flag)
 *   FAKE_HIPBLASLT_FAIL_AFTER=N   every hipblasLtMatmul after the first N returns
 *                                 HIPBLAS_STATUS_EXECUTION_FAILED and computes nothing
 */
#include "fake_hipblaslt.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hip_compat.h"
#include "hipsim.h"

#define EXPORT __attribute__((visibility("default")))
#define HANDLE_MAGIC 0x4a4du
#define DESC_MAGIC 0xde5cu
#define LAYOUT_MAGIC 0x1a70u

enum { ALLOC_FAILED = 2, EXECUTION_FAILED = 5 };

#define HLT_API(name, exported, params, args) EXPORT hiphal_lt_status name params;
#include "hipblaslt_api.def"
#undef HLT_API

/* ---- the record ---- */

static pthread_mutex_t record_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_hlt_call calls[FAKE_HLT_CALLS];
static int ncalls, nchecks, matmuls;

EXPORT int fake_hipblaslt_calls(void)
{
    return ncalls;
}

EXPORT const struct fake_hlt_call *fake_hipblaslt_call(int i)
{
    return i >= 0 && i < ncalls && i < FAKE_HLT_CALLS ? &calls[i] : NULL;
}

EXPORT int fake_hipblaslt_checks(void)
{
    return nchecks;
}

EXPORT void fake_hipblaslt_reset(void)
{
    pthread_mutex_lock(&record_mu);
    ncalls = nchecks = 0;
    pthread_mutex_unlock(&record_mu);
}

static void record(const struct fake_hlt_call *c)
{
    pthread_mutex_lock(&record_mu);
    if (ncalls < FAKE_HLT_CALLS)
        calls[ncalls] = *c;
    ncalls++;
    pthread_mutex_unlock(&record_mu);
}

/* ---- handles ---- */

struct fake_handle {
    unsigned magic;
};

EXPORT hiphal_lt_status hipblasLtCreate(hiphal_lt_handle *handle);
EXPORT hiphal_lt_status hipblasLtCreate(hiphal_lt_handle *handle)
{
    struct fake_handle *h = handle ? calloc(1, sizeof *h) : NULL;
    if (!h)
        return handle ? ALLOC_FAILED : HIPHAL_LT_INVALID_VALUE;
    h->magic = HANDLE_MAGIC;
    *handle = h;
    return HIPHAL_LT_SUCCESS;
}

static bool handle_ok(hiphal_lt_handle handle)
{
    return handle && ((struct fake_handle *)handle)->magic == HANDLE_MAGIC;
}

EXPORT hiphal_lt_status hipblasLtDestroy(hiphal_lt_handle handle);
EXPORT hiphal_lt_status hipblasLtDestroy(hiphal_lt_handle handle)
{
    if (!handle_ok(handle))
        return HIPHAL_LT_NOT_INITIALIZED;
    ((struct fake_handle *)handle)->magic = 0;
    free(handle);
    return HIPHAL_LT_SUCCESS;
}

/* ---- matmul descriptors: attribute id -> field and size ---- */

struct fake_desc {
    unsigned magic;
    int32_t compute, scale;
    int32_t transa, transb;
    uint32_t epilogue;
    const void *bias;
    int32_t bias_type; /* -1: D's */
    int32_t pointer_mode;
    const void *amax;
    int32_t scale_mode_a, scale_mode_b;
};

static struct fake_desc *desc_of(hiphal_lt_desc_opaque *d)
{
    struct fake_desc *f = (struct fake_desc *)d;
    return f && f->magic == DESC_MAGIC ? f : NULL;
}

static void *desc_field(struct fake_desc *f, uint32_t attr, size_t *size)
{
    *size = 4;
    switch (attr) {
    case HIPHAL_LT_DESC_TRANSA:
        return &f->transa;
    case HIPHAL_LT_DESC_TRANSB:
        return &f->transb;
    case HIPHAL_LT_DESC_EPILOGUE:
        return &f->epilogue;
    case FAKE_HLT_DESC_BIAS_DATA_TYPE:
        return &f->bias_type;
    case HIPHAL_LT_DESC_POINTER_MODE:
        return &f->pointer_mode;
    case HIPHAL_LT_DESC_A_SCALE_MODE:
        return &f->scale_mode_a;
    case HIPHAL_LT_DESC_B_SCALE_MODE:
        return &f->scale_mode_b;
    case HIPHAL_LT_DESC_BIAS_POINTER:
        *size = sizeof(void *);
        return (void *)&f->bias;
    case HIPHAL_LT_DESC_AMAX_D_POINTER:
        *size = sizeof(void *);
        return (void *)&f->amax;
    default:
        return NULL;
    }
}

EXPORT hiphal_lt_status hipblasLtMatmulDescCreate(hiphal_lt_desc_opaque **desc, int32_t compute,
                                                  uint32_t scale);
EXPORT hiphal_lt_status hipblasLtMatmulDescCreate(hiphal_lt_desc_opaque **desc, int32_t compute,
                                                  uint32_t scale)
{
    struct fake_desc *f = desc ? calloc(1, sizeof *f) : NULL;
    if (!f)
        return desc ? ALLOC_FAILED : HIPHAL_LT_INVALID_VALUE;
    *f = (struct fake_desc){.magic = DESC_MAGIC,
                            .compute = compute,
                            .scale = (int32_t)scale,
                            .transa = HIPHAL_LT_OP_N,
                            .transb = HIPHAL_LT_OP_N,
                            .epilogue = HIPHAL_LT_EPILOGUE_DEFAULT,
                            .bias_type = -1};
    *desc = (hiphal_lt_desc_opaque *)f;
    return HIPHAL_LT_SUCCESS;
}

EXPORT hiphal_lt_status hipblasLtMatmulDescDestroy(hiphal_lt_desc_opaque *desc);
EXPORT hiphal_lt_status hipblasLtMatmulDescDestroy(hiphal_lt_desc_opaque *desc)
{
    struct fake_desc *f = desc_of(desc);
    if (!f)
        return HIPHAL_LT_INVALID_VALUE;
    f->magic = 0;
    free(f);
    return HIPHAL_LT_SUCCESS;
}

EXPORT hiphal_lt_status hipblasLtMatmulDescSetAttribute(hiphal_lt_desc_opaque *desc, uint32_t attr,
                                                        const void *buf, size_t size);
EXPORT hiphal_lt_status hipblasLtMatmulDescSetAttribute(hiphal_lt_desc_opaque *desc, uint32_t attr,
                                                        const void *buf, size_t size)
{
    struct fake_desc *f = desc_of(desc);
    size_t want = 0;
    void *field = f ? desc_field(f, attr, &want) : NULL;
    if (!field || !buf || size != want)
        return HIPHAL_LT_INVALID_VALUE;
    memcpy(field, buf, size);
    return HIPHAL_LT_SUCCESS;
}

EXPORT hiphal_lt_status hipblasLtMatmulDescGetAttribute(hiphal_lt_desc_opaque *desc, uint32_t attr,
                                                        void *buf, size_t size, size_t *written)
{
    struct fake_desc *f = desc_of(desc);
    size_t want = 0;
    void *field = f ? desc_field(f, attr, &want) : NULL;
    if (!field || !written)
        return HIPHAL_LT_INVALID_VALUE;
    *written = want;
    if (!buf || size != want)
        return HIPHAL_LT_INVALID_VALUE;
    memcpy(buf, field, size);
    return HIPHAL_LT_SUCCESS;
}

/* ---- layouts ---- */

struct fake_layout {
    unsigned magic;
    uint32_t type;
    int32_t order, batch;
    uint64_t rows, cols;
    int64_t ld, stride;
};

static struct fake_layout *layout_of(hiphal_lt_layout_opaque *l)
{
    struct fake_layout *f = (struct fake_layout *)l;
    return f && f->magic == LAYOUT_MAGIC ? f : NULL;
}

static void *layout_field(struct fake_layout *f, uint32_t attr, size_t *size)
{
    switch (attr) {
    case HIPHAL_LT_LAYOUT_BATCH_COUNT:
        return *size = 4, (void *)&f->batch;
    case HIPHAL_LT_LAYOUT_BATCH_STRIDE:
        return *size = 8, (void *)&f->stride;
    case HIPHAL_LT_LAYOUT_TYPE:
        return *size = 4, (void *)&f->type;
    case HIPHAL_LT_LAYOUT_ORDER:
        return *size = 4, (void *)&f->order;
    case HIPHAL_LT_LAYOUT_ROWS:
        return *size = 8, (void *)&f->rows;
    case HIPHAL_LT_LAYOUT_COLS:
        return *size = 8, (void *)&f->cols;
    case HIPHAL_LT_LAYOUT_LD:
        return *size = 8, (void *)&f->ld;
    default:
        return NULL;
    }
}

EXPORT hiphal_lt_status hipblasLtMatrixLayoutCreate(hiphal_lt_layout_opaque **layout, uint32_t type,
                                                    uint64_t rows, uint64_t cols, int64_t ld)
{
    struct fake_layout *f = layout ? calloc(1, sizeof *f) : NULL;
    if (!f)
        return layout ? ALLOC_FAILED : HIPHAL_LT_INVALID_VALUE;
    *f = (struct fake_layout){.magic = LAYOUT_MAGIC,
                              .type = type,
                              .order = HIPHAL_LT_ORDER_COL,
                              .batch = 1,
                              .rows = rows,
                              .cols = cols,
                              .ld = ld};
    *layout = (hiphal_lt_layout_opaque *)f;
    return HIPHAL_LT_SUCCESS;
}

EXPORT hiphal_lt_status hipblasLtMatrixLayoutDestroy(hiphal_lt_layout_opaque *layout)
{
    struct fake_layout *f = layout_of(layout);
    if (!f)
        return HIPHAL_LT_INVALID_VALUE;
    f->magic = 0;
    free(f);
    return HIPHAL_LT_SUCCESS;
}

EXPORT hiphal_lt_status hipblasLtMatrixLayoutSetAttribute(hiphal_lt_layout_opaque *layout,
                                                          uint32_t attr, const void *buf,
                                                          size_t size);
EXPORT hiphal_lt_status hipblasLtMatrixLayoutSetAttribute(hiphal_lt_layout_opaque *layout,
                                                          uint32_t attr, const void *buf,
                                                          size_t size)
{
    struct fake_layout *f = layout_of(layout);
    size_t want = 0;
    void *field = f ? layout_field(f, attr, &want) : NULL;
    if (!field || !buf || size != want)
        return HIPHAL_LT_INVALID_VALUE;
    memcpy(field, buf, size);
    return HIPHAL_LT_SUCCESS;
}

EXPORT hiphal_lt_status hipblasLtMatrixLayoutGetAttribute(hiphal_lt_layout_opaque *layout,
                                                          uint32_t attr, void *buf, size_t size,
                                                          size_t *written)
{
    struct fake_layout *f = layout_of(layout);
    size_t want = 0;
    void *field = f ? layout_field(f, attr, &want) : NULL;
    if (!field || !written)
        return HIPHAL_LT_INVALID_VALUE;
    *written = want;
    if (!buf || size != want)
        return HIPHAL_LT_INVALID_VALUE;
    memcpy(buf, field, size);
    return HIPHAL_LT_SUCCESS;
}

/* ---- elements ---- */

static size_t element_size(uint32_t type)
{
    return type == HIPHAL_LT_R_32F                               ? 4
           : type == HIPHAL_LT_R_16F || type == HIPHAL_LT_R_16BF ? 2
                                                                 : 0;
}

static float half_to_float(uint16_t h)
{
    int exp = (h >> 10) & 0x1f;
    float mag = exp == 0    ? ldexpf((float)(h & 0x3ff), -24)
                : exp == 31 ? ((h & 0x3ff) ? NAN : INFINITY)
                            : ldexpf((float)((h & 0x3ff) | 0x400), exp - 25);
    return (h & 0x8000) ? -mag : mag;
}

/* Round to nearest even, through the float's own rounding (exact for every float). */
static uint16_t float_to_half(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    float a = fabsf(f);
    if (isnan(a))
        return sign | 0x7e00;
    if (a >= 65520.0f)
        return sign | 0x7c00;
    if (a < ldexpf(1, -14)) /* subnormal: a multiple of 2^-24 */
        return sign | (uint16_t)lrintf(ldexpf(a, 24));
    int exp;
    frexpf(a, &exp);                         /* a = m * 2^exp, m in [0.5, 1) */
    long mant = lrintf(ldexpf(a, 11 - exp)); /* 11 bits, rounded */
    if (mant == 2048) {
        mant = 1024;
        exp++;
    }
    if (exp + 14 >= 31)
        return sign | 0x7c00;
    return sign | (uint16_t)((exp + 14) << 10) | (uint16_t)(mant & 0x3ff);
}

static float bf16_to_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static float load(const void *p, uint32_t type, uint64_t i)
{
    uint16_t h;
    if (type == HIPHAL_LT_R_32F)
        return ((const float *)p)[i];
    memcpy(&h, (const char *)p + 2 * i, 2);
    return type == HIPHAL_LT_R_16F ? half_to_float(h) : bf16_to_float(h);
}

static void store(void *p, uint32_t type, uint64_t i, float v)
{
    uint16_t h = type == HIPHAL_LT_R_16F ? float_to_half(v) : float_to_bf16(v);
    if (type == HIPHAL_LT_R_32F)
        ((float *)p)[i] = v;
    else
        memcpy((char *)p + 2 * i, &h, 2);
}

static float round_to(uint32_t type, float v)
{
    return type == HIPHAL_LT_R_16F    ? half_to_float(float_to_half(v))
           : type == HIPHAL_LT_R_16BF ? bf16_to_float(float_to_bf16(v))
                                      : v;
}

/* ---- the GEMM ---- */

/* One checked call, by value: the kernel's argument. */
struct job {
    struct fake_desc f;
    struct fake_layout la, lb, lc, ld;
    const void *A, *B, *C;
    void *D;
    float alpha, beta;
};

static float epilogue(uint32_t e, float v, float bias)
{
    if (e & HIPHAL_LT_EPILOGUE_BIAS)
        v += bias;
    if (e & HIPHAL_LT_EPILOGUE_RELU)
        v = v > 0 ? v : 0;
    if (e & HIPHAL_LT_EPILOGUE_GELU)
        v = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    return v;
}

static float op_at(const void *x, const struct fake_layout *l, bool t, uint64_t r, uint64_t c)
{
    return load(x, l->type, t ? c + r * (uint64_t)l->ld : r + c * (uint64_t)l->ld);
}

static uint64_t run_job(hipsimLaunch *launch)
{
    struct job *j = *(struct job **)launch->args[0];
    bool ta = j->f.transa == HIPHAL_LT_OP_T, tb = j->f.transb == HIPHAL_LT_OP_T;
    uint64_t m = j->ld.rows, n = j->ld.cols, k = ta ? j->la.rows : j->la.cols;
    uint32_t bias_type = j->f.bias_type >= 0 ? (uint32_t)j->f.bias_type : j->ld.type;
    for (uint64_t c = 0; c < n; c++)
        for (uint64_t r = 0; r < m; r++) {
            bool odd = ((r / FAKE_HLT_TILE_M + c / FAKE_HLT_TILE_N) & 1) != 0;
            float sum = 0;
            for (uint64_t i = 0; i < k; i++) {
                uint64_t l = odd ? k - 1 - i : i;
                sum += op_at(j->A, &j->la, ta, r, l) * op_at(j->B, &j->lb, tb, l, c);
                if (odd) /* kept in D's type between steps */
                    sum = round_to(j->ld.type, sum);
            }
            float v = j->alpha * sum;
            if (j->beta != 0)
                v += j->beta * load(j->C, j->lc.type, r + c * (uint64_t)j->lc.ld);
            float bias = j->f.bias ? load(j->f.bias, bias_type, r) : 0;
            store(j->D, j->ld.type, r + c * (uint64_t)j->ld.ld, epilogue(j->f.epilogue, v, bias));
        }
    free(j);
    return m * n * k;
}

static const void *gemm_kernel(void)
{
    static const size_t sizes[] = {sizeof(struct job *)};
    return hipsimRegisterKernel("fake_hipblaslt_gemm", run_job, 1, sizes);
}

/* A column-major matrix of one item, of a type the fake computes. */
static bool computable(const struct fake_layout *l)
{
    return l && element_size(l->type) && l->order == HIPHAL_LT_ORDER_COL && l->batch == 1 &&
           l->ld >= (int64_t)l->rows;
}

static bool dims_agree(const struct fake_desc *f, const struct fake_layout *a,
                       const struct fake_layout *b, const struct fake_layout *c,
                       const struct fake_layout *d)
{
    bool ta = f->transa == HIPHAL_LT_OP_T, tb = f->transb == HIPHAL_LT_OP_T;
    uint64_t k = ta ? a->rows : a->cols;
    return (ta ? a->cols : a->rows) == d->rows && (tb ? b->rows : b->cols) == d->cols &&
           (tb ? b->cols : b->rows) == k && c->rows == d->rows && c->cols == d->cols;
}

/* FAKE_HIPBLASLT_... as a number, or def. */
static long env_number(const char *name, long def)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : def;
}

/* What FAKE_HIPBLASLT_WORKSPACE_PER makes an algorithm need for D of layout d. */
static size_t workspace_per_element(const struct fake_layout *d)
{
    long per = env_number("FAKE_HIPBLASLT_WORKSPACE_PER", 0);
    return per > 0 ? (size_t)(d->rows * d->cols / (uint64_t)per) : 0;
}

EXPORT hiphal_lt_status hipblasLtMatmul(hiphal_lt_handle handle, hiphal_lt_desc_opaque *desc,
                                        const void *alpha, const void *A,
                                        hiphal_lt_layout_opaque *Adesc, const void *B,
                                        hiphal_lt_layout_opaque *Bdesc, const void *beta,
                                        const void *C, hiphal_lt_layout_opaque *Cdesc, void *D,
                                        hiphal_lt_layout_opaque *Ddesc, const hiphal_lt_algo *algo,
                                        void *workspace, size_t workspaceSizeInBytes,
                                        struct ihipStream_t *stream)
{
    struct fake_desc *f = desc_of(desc);
    struct fake_layout *la = layout_of(Adesc), *lb = layout_of(Bdesc), *lc = layout_of(Cdesc),
                       *ld = layout_of(Ddesc);
    struct fake_hlt_call c = {handle,
                              desc,
                              alpha,
                              A,
                              B,
                              beta,
                              C,
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
                              HIPHAL_LT_SUCCESS};
    long after = env_number("FAKE_HIPBLASLT_FAIL_AFTER", -1);
    pthread_mutex_lock(&record_mu);
    bool failing = after >= 0 && matmuls++ >= after;
    pthread_mutex_unlock(&record_mu);
    uint32_t algo_word = 0;
    if (algo)
        memcpy(&algo_word, algo->data, sizeof algo_word);
    if (!handle_ok(handle) || !f || !alpha || !beta || !A || !B || !D || !C ||
        (algo && algo_word != FAKE_HLT_ALGO_MAGIC))
        c.status = HIPHAL_LT_INVALID_VALUE;
    else if (!computable(la) || !computable(lb) || !computable(lc) || !computable(ld) ||
             !dims_agree(f, la, lb, lc, ld))
        c.status = HIPHAL_LT_NOT_SUPPORTED;
    else if (workspaceSizeInBytes < workspace_per_element(ld))
        c.status = HIPHAL_LT_INVALID_VALUE;
    else if (failing)
        c.status = EXECUTION_FAILED;
    if (c.status == HIPHAL_LT_SUCCESS) {
        struct job *j = malloc(sizeof *j);
        if (!j) {
            c.status = ALLOC_FAILED;
        } else {
            *j = (struct job){
                *f, *la, *lb, *lc, *ld, A, B, C, D, *(const float *)alpha, *(const float *)beta};
            void *args[] = {&j};
            dim3 one = {1, 1, 1};
            if (hipLaunchKernel(gemm_kernel(), one, one, args, 0, (hipStream_t)stream) !=
                hipSuccess) {
                free(j);
                c.status = EXECUTION_FAILED;
            }
        }
    }
    record(&c);
    return c.status;
}

/* hipblaslt_ext::matmulIsAlgoSupported, by its C++ name (hip_hipblaslt.h). */
EXPORT hiphal_lt_status
fake_is_algo_supported(hiphal_lt_handle handle, hiphal_lt_desc_opaque *desc, const void *alpha,
                       hiphal_lt_layout_opaque *a, hiphal_lt_layout_opaque *b, const void *beta,
                       hiphal_lt_layout_opaque *c, hiphal_lt_layout_opaque *d, hiphal_lt_algo *algo,
                       size_t *workspace) __asm__(HIPHAL_LT_IS_ALGO_SUPPORTED);
EXPORT hiphal_lt_status fake_is_algo_supported(hiphal_lt_handle handle, hiphal_lt_desc_opaque *desc,
                                               const void *alpha, hiphal_lt_layout_opaque *a,
                                               hiphal_lt_layout_opaque *b, const void *beta,
                                               hiphal_lt_layout_opaque *c,
                                               hiphal_lt_layout_opaque *d, hiphal_lt_algo *algo,
                                               size_t *workspace)
{
    pthread_mutex_lock(&record_mu);
    nchecks++;
    pthread_mutex_unlock(&record_mu);
    struct fake_desc *f = desc_of(desc);
    struct fake_layout *la = layout_of(a), *lb = layout_of(b), *lc = layout_of(c),
                       *ld = layout_of(d);
    if (!handle_ok(handle) || !f || !alpha || !beta || !algo || !workspace || !computable(la) ||
        !computable(lb) || !computable(lc) || !computable(ld) || !dims_agree(f, la, lb, lc, ld) ||
        env_number("FAKE_HIPBLASLT_CHECK_FAIL", 0) == 1)
        return HIPHAL_LT_INVALID_VALUE;
    if (env_number("FAKE_HIPBLASLT_FALLBACK", 0) == 1)
        algo->data[8] = 1; /* supported only by falling back: noted in the algorithm */
    *workspace = (size_t)env_number("FAKE_HIPBLASLT_WORKSPACE", 0) + workspace_per_element(ld);
    return HIPHAL_LT_SUCCESS;
}
