/*
 * hip_gemm.c - a hipblasLtMatmul call, whole or in slices (hip_gemm.h says when; docs/design.md
 * why the slices are exact, and what that assumes of hipBLASLt's kernels).
 *
 * The call's descriptor and layouts are read through the application's own hipBLASLt (the
 * library its hipblasLtMatmul came from) into a shape: dimensions, element types and leading
 * dimensions, transposes, epilogue, bias. Unlike cuBLASLt's, hipBLASLt's descriptors are handles
 * of objects inside the library, not plain data, so a form cannot be remembered by its bytes:
 * every call while slicing is on is read again (some fifteen attribute calls), and a slice along
 * m, whose bias would have to move on a copy of the descriptor, is not made (rows_fixed: the plan
 * cuts a call with a bias along n only, and one that only m could cut stays whole, as
 * unsupported). A slice is the same call over a block of D's columns (n) or rows (m): the same
 * descriptor and algorithm, the same leading dimensions, pointers moved to the block, and layouts
 * of the block's size created for the call and destroyed after it (at most two sizes: the
 * slices' and the last one's).
 */
#include "hip_gemm.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cuda_blas_real.h"
#include "gp_log.h"
#include "hip_bind.h"
#include "hip_compat.h"
#include "hip_gemm_clock.h"

/* ---- the application's hipBLASLt ---- */

struct lt_api {
#define HLT_API(name, exported, params, args) hiphal_pfn_##name name;
#include "hipblaslt_api.def"
#undef HLT_API
    hiphal_pfn_is_algo_supported is_algo_supported;
};

static struct lt_api lt;
static bool lt_ok;
static pthread_once_t lt_once = PTHREAD_ONCE_INIT;

/* The functions of the library that holds the hipblasLtMatmul a caller without one of its own
 * reaches (cuda_blas_real.h's search, which knows nothing of CUDA but its name), so that
 * descriptors are read by the library that made them. */
static void find_lt(void)
{
    void *matmul = cudahal_blas_next("hipblasLtMatmul", "libhipblaslt");
    bool all = matmul != NULL;
#define HLT_API(name, exported, params, args)                                                      \
    *(void **)&lt.name = matmul ? cudahal_blas_sym_beside(matmul, #name) : NULL;                   \
    all = all && lt.name;
#include "hipblaslt_api.def"
#undef HLT_API
    *(void **)&lt.is_algo_supported =
        matmul ? cudahal_blas_sym_beside(matmul, HIPHAL_LT_IS_ALGO_SUPPORTED) : NULL;
    lt_ok = all && lt.is_algo_supported && (void *)lt.hipblasLtMatmul == matmul;
}

static struct cudahal_blas_entry matmul_entry = {
    .name = "hipblasLtMatmul", .stem = "libhipblaslt", .library = "hipBLASLt"};

hiphal_pfn_hipblasLtMatmul hiphal_gemm_real(const void *site)
{
    return (hiphal_pfn_hipblasLtMatmul)cudahal_blas_real(&matmul_entry, site);
}

static bool sliceable_lib(hiphal_pfn_hipblasLtMatmul real)
{
    pthread_once(&lt_once, find_lt);
    return lt_ok && real == lt.hipblasLtMatmul;
}

/* ---- counts ---- */

static const char *const entry_names[] = {"hipblasLtMatmul"};
struct gemm_tally hiphal_gemm_tally = GEMM_TALLY_INIT(entry_names, 1);

static void count_whole(int device, enum gemm_whole_reason why, uint64_t learned_ns,
                        uint64_t target_ns)
{
    gemm_tally_whole(&hiphal_gemm_tally, 0, device, why, learned_ns, target_ns);
}

/* ---- the call's shape ---- */

struct mat {
    uint32_t type;
    size_t esize;
    uint64_t rows, cols;
    int64_t ld;
};

struct shape {
    uint64_t m, n, k;
    struct mat a, b, c, d;
    int32_t pointer_mode, transa, transb;
    uint32_t epilogue;
    const void *bias;
};

static size_t element_size(uint32_t type)
{
    switch (type) {
    case HIPHAL_LT_R_8I:
        return 1;
    case HIPHAL_LT_R_16F:
    case HIPHAL_LT_R_16BF:
        return 2;
    case HIPHAL_LT_R_32F:
    case HIPHAL_LT_R_32I:
        return 4;
    case HIPHAL_LT_R_64F:
        return 8;
    default: /* fp8 and others: their scales are not looked at */
        return 0;
    }
}

/* An attribute: 0 read, -ENOTSUP not (the library does not know it, or refuses). */
static int layout_attr(hiphal_lt_layout_opaque *l, uint32_t attr, void *buf, size_t size)
{
    size_t written = 0;
    return lt.hipblasLtMatrixLayoutGetAttribute(l, attr, buf, size, &written) ==
                       HIPHAL_LT_SUCCESS &&
                   written == size
               ? 0
               : -ENOTSUP;
}

static int desc_attr(hiphal_lt_desc_opaque *d, uint32_t attr, void *buf, size_t size)
{
    size_t written = 0;
    return lt.hipblasLtMatmulDescGetAttribute(d, attr, buf, size, &written) == HIPHAL_LT_SUCCESS &&
                   written == size
               ? 0
               : -ENOTSUP;
}

/* A column-major matrix of whole-byte elements, alone in its batch: 0, else -ENOTSUP. */
static int read_mat(hiphal_lt_layout_opaque *l, struct mat *out)
{
    int32_t order = HIPHAL_LT_ORDER_COL, batch = 0;
    if (!l || layout_attr(l, HIPHAL_LT_LAYOUT_TYPE, &out->type, sizeof out->type) ||
        layout_attr(l, HIPHAL_LT_LAYOUT_ROWS, &out->rows, sizeof out->rows) ||
        layout_attr(l, HIPHAL_LT_LAYOUT_COLS, &out->cols, sizeof out->cols) ||
        layout_attr(l, HIPHAL_LT_LAYOUT_LD, &out->ld, sizeof out->ld) ||
        layout_attr(l, HIPHAL_LT_LAYOUT_BATCH_COUNT, &batch, sizeof batch))
        return -ENOTSUP;
    layout_attr(l, HIPHAL_LT_LAYOUT_ORDER, &order, sizeof order); /* column-major unless said */
    out->esize = element_size(out->type);
    return out->esize && order == HIPHAL_LT_ORDER_COL && batch == 1 && out->rows > 0 &&
                   out->cols > 0 && out->ld >= (int64_t)out->rows
               ? 0
               : -ENOTSUP;
}

static bool epilogue_per_element(uint32_t e)
{
    return e == HIPHAL_LT_EPILOGUE_DEFAULT || e == HIPHAL_LT_EPILOGUE_RELU ||
           e == HIPHAL_LT_EPILOGUE_BIAS || e == HIPHAL_LT_EPILOGUE_RELU_BIAS ||
           e == HIPHAL_LT_EPILOGUE_GELU || e == HIPHAL_LT_EPILOGUE_GELU_BIAS;
}

/* The descriptor: host or device scalars, N or T, a per-element epilogue, no amax, scalar
 * scales (a vector scale runs along m or n). Attributes a library does not know read as their
 * defaults. */
static int read_desc(hiphal_lt_desc_opaque *d, struct shape *s)
{
    if (!d || desc_attr(d, HIPHAL_LT_DESC_POINTER_MODE, &s->pointer_mode, sizeof s->pointer_mode) ||
        desc_attr(d, HIPHAL_LT_DESC_TRANSA, &s->transa, sizeof s->transa) ||
        desc_attr(d, HIPHAL_LT_DESC_TRANSB, &s->transb, sizeof s->transb) ||
        desc_attr(d, HIPHAL_LT_DESC_EPILOGUE, &s->epilogue, sizeof s->epilogue) ||
        desc_attr(d, HIPHAL_LT_DESC_BIAS_POINTER, &s->bias, sizeof s->bias))
        return -ENOTSUP;
    void *amax = NULL;
    int32_t scale_a = HIPHAL_LT_SCALE_SCALAR_32F, scale_b = HIPHAL_LT_SCALE_SCALAR_32F;
    desc_attr(d, HIPHAL_LT_DESC_AMAX_D_POINTER, &amax, sizeof amax);
    desc_attr(d, HIPHAL_LT_DESC_A_SCALE_MODE, &scale_a, sizeof scale_a);
    desc_attr(d, HIPHAL_LT_DESC_B_SCALE_MODE, &scale_b, sizeof scale_b);
    bool ok = (s->pointer_mode == HIPHAL_LT_POINTER_HOST ||
               s->pointer_mode == HIPHAL_LT_POINTER_DEVICE) &&
              (s->transa == HIPHAL_LT_OP_N || s->transa == HIPHAL_LT_OP_T) &&
              (s->transb == HIPHAL_LT_OP_N || s->transb == HIPHAL_LT_OP_T) &&
              epilogue_per_element(s->epilogue) && !amax && scale_a == HIPHAL_LT_SCALE_SCALAR_32F &&
              scale_b == HIPHAL_LT_SCALE_SCALAR_32F;
    return ok ? 0 : -ENOTSUP;
}

/* ---- where matrices lie ---- */

struct span {
    uintptr_t lo, hi;
    bool valid;
};

static struct span span_of(const void *p, const struct mat *x)
{
    uintptr_t lo = (uintptr_t)p;
    uint64_t elements = 0, bytes = 0;
    bool valid = !__builtin_mul_overflow(x->cols - 1, (uint64_t)x->ld, &elements) &&
                 !__builtin_add_overflow(elements, x->rows, &elements) &&
                 !__builtin_mul_overflow(elements, x->esize, &bytes) && bytes <= UINTPTR_MAX - lo;
    return (struct span){lo, valid ? lo + (uintptr_t)bytes : lo, valid};
}

static bool apart(struct span a, struct span b)
{
    return a.valid && b.valid && (a.hi <= b.lo || b.hi <= a.lo);
}

/* C is D (same place, type and leading dimension) or apart from it; D apart from A and B. */
static bool placed_apart(const struct hiphal_gemm_call *c, const struct shape *s)
{
    struct span d = span_of(c->D, &s->d);
    if (!apart(d, span_of(c->A, &s->a)) || !apart(d, span_of(c->B, &s->b)))
        return false;
    if (!c->C)
        return true;
    if (c->C == c->D)
        return s->c.type == s->d.type && s->c.ld == s->d.ld;
    return apart(d, span_of(c->C, &s->c));
}

/* The shape of call c: 0, or -ENOTSUP when it is not one that slices exactly. */
static int read_shape(const struct hiphal_gemm_call *c, struct shape *s)
{
    memset(s, 0, sizeof *s);
    if (!c->algo || !c->desc || !c->A || !c->B || !c->D || read_desc(c->desc, s) ||
        read_mat(c->Adesc, &s->a) || read_mat(c->Bdesc, &s->b) || read_mat(c->Cdesc, &s->c) ||
        read_mat(c->Ddesc, &s->d))
        return -ENOTSUP;
    s->m = s->d.rows;
    s->n = s->d.cols;
    bool ta = s->transa == HIPHAL_LT_OP_T, tb = s->transb == HIPHAL_LT_OP_T;
    s->k = ta ? s->a.rows : s->a.cols;
    bool dims = (ta ? s->a.cols : s->a.rows) == s->m && (tb ? s->b.rows : s->b.cols) == s->n &&
                (tb ? s->b.cols : s->b.rows) == s->k && s->c.rows == s->m && s->c.cols == s->n;
    return dims && placed_apart(c, s) ? 0 : -ENOTSUP;
}

static void key_of(const struct hiphal_gemm_call *c, const struct shape *s, int device,
                   struct hiphal_gemm_key *key)
{
    memset(key, 0, sizeof *key);
    *key = (struct hiphal_gemm_key){.m = s->m,
                                    .n = s->n,
                                    .k = s->k,
                                    .types = {s->a.type, s->b.type, s->c.type, s->d.type},
                                    .transa = s->transa,
                                    .transb = s->transb,
                                    .algo = *c->algo,
                                    .device = device};
}

/* ---- the device ---- */

#define CU_DEVICES 64
static _Atomic uint32_t device_cus[CU_DEVICES];

/* The device's compute units (what the plan calls SMs), or 0. Asked of a device the call's
 * queue is on, which exists: the answer is a success, and leaves no error behind. */
static uint32_t cus_of(int device)
{
    if (device < 0 || device >= CU_DEVICES)
        return 0;
    uint32_t cus = atomic_load(&device_cus[device]);
    if (cus)
        return cus;
    hipError_t (*attribute)(int *, hipDeviceAttribute_t, int);
    *(void **)&attribute = hiphal_sym("hipDeviceGetAttribute");
    int v = 0;
    if (attribute && attribute(&v, hipDeviceAttributeMultiprocessorCount, device) == hipSuccess &&
        v > 0)
        atomic_store(&device_cus[device], cus = (uint32_t)v);
    return cus;
}

/* ---- slices ---- */

/* The layouts of one size of slice; NULL where the application's own serves. */
struct slice_layouts {
    hiphal_lt_layout_opaque *a, *b, *c, *d;
};

static void destroy_layouts(struct slice_layouts *l)
{
    hiphal_lt_layout_opaque *all[] = {l->a, l->b, l->c, l->d};
    for (size_t i = 0; i < 4; i++)
        if (all[i])
            lt.hipblasLtMatrixLayoutDestroy(all[i]);
    memset(l, 0, sizeof *l);
}

static int make_layout(const struct mat *x, uint64_t rows, uint64_t cols,
                       hiphal_lt_layout_opaque **out)
{
    return lt.hipblasLtMatrixLayoutCreate(out, x->type, rows, cols, x->ld) == HIPHAL_LT_SUCCESS
               ? 0
               : -EIO;
}

static uint64_t extent_of(const struct shape *s, const struct gemm_plan *p)
{
    return p->cut == GEMM_CUT_N ? s->n : s->m;
}

/* Layouts for slices of `size` along p's cut: along n, B (k x size as op(B)), C and D; along m,
 * A (size x k as op(A)), C and D. */
static int make_layouts(const struct shape *s, const struct gemm_plan *p, uint64_t size,
                        struct slice_layouts *l)
{
    bool n_cut = p->cut == GEMM_CUT_N;
    uint64_t m = n_cut ? s->m : size, n = n_cut ? size : s->n;
    bool ta = s->transa == HIPHAL_LT_OP_T, tb = s->transb == HIPHAL_LT_OP_T;
    int r = 0;
    memset(l, 0, sizeof *l);
    if (n_cut)
        r = make_layout(&s->b, tb ? n : s->k, tb ? s->k : n, &l->b);
    else
        r = make_layout(&s->a, ta ? s->k : m, ta ? m : s->k, &l->a);
    if (!r)
        r = make_layout(&s->c, m, n, &l->c);
    if (!r)
        r = make_layout(&s->d, m, n, &l->d);
    if (r)
        destroy_layouts(l);
    return r;
}

struct slice_args {
    const void *A, *B, *C;
    void *D;
};

static const void *moved(const void *p, uint64_t elements, size_t esize)
{
    return p ? (const char *)p + elements * esize : NULL;
}

static void slice_args(const struct hiphal_gemm_call *c, const struct shape *s,
                       const struct gemm_plan *p, uint64_t first, struct slice_args *out)
{
    *out = (struct slice_args){c->A, c->B, c->C, c->D};
    if (p->cut == GEMM_CUT_N) { /* columns of op(B), C and D */
        bool tb = s->transb == HIPHAL_LT_OP_T;
        out->B = moved(c->B, tb ? first : first * (uint64_t)s->b.ld, s->b.esize);
        out->C = moved(c->C, first * (uint64_t)s->c.ld, s->c.esize);
        out->D = (void *)moved(c->D, first * (uint64_t)s->d.ld, s->d.esize);
    } else { /* rows of op(A), C and D (no bias: rows_fixed) */
        bool ta = s->transa == HIPHAL_LT_OP_T;
        out->A = moved(c->A, ta ? first * (uint64_t)s->a.ld : first, s->a.esize);
        out->C = moved(c->C, first, s->c.esize);
        out->D = (void *)moved(c->D, first, s->d.esize);
    }
}

/* hipBLASLt's own check of the algorithm on l's layouts (a slice's, or where l has only C and D,
 * the call's own), on a copy of it: it must accept it with no more workspace than the call gave,
 * and leave it as it was (hipBLASLt marks an algorithm that supports the problem only without
 * its epilogue, a fallback the whole call did not take: the slice would not run as the whole call
 * does). */
static int check_algo(const struct hiphal_gemm_call *c, const struct slice_layouts *l)
{
    hiphal_lt_algo algo = *c->algo;
    size_t workspace = 0;
    return lt.is_algo_supported(c->handle, c->desc, c->alpha, l->a ? l->a : c->Adesc,
                                l->b ? l->b : c->Bdesc, c->beta, l->c, l->d, &algo,
                                &workspace) == HIPHAL_LT_SUCCESS &&
                   workspace <= c->workspace_size && !memcmp(&algo, c->algo, sizeof algo)
               ? 0
               : -ENOTSUP;
}

/* Layouts of both sizes, [0] the slices', [1] the last one's where it differs, each size checked:
 * 0, or negative (nothing to release then). */
static int prepare(const struct hiphal_gemm_call *c, const struct shape *s,
                   const struct gemm_plan *p, struct slice_layouts l[2])
{
    memset(l, 0, 2 * sizeof *l);
    if (p->cut == GEMM_CUT_M && s->bias) /* the plan does not make it (rows_fixed) */
        return -ENOTSUP;
    uint64_t first, last;
    gemm_plan_slice(p, extent_of(s, p), p->count - 1, &first, &last);
    int r = make_layouts(s, p, p->width, &l[0]);
    if (!r && last != p->width)
        r = make_layouts(s, p, last, &l[1]);
    /* The whole call first: one hipBLASLt would refuse (say, its workspace too small for the
     * algorithm on the whole problem) is forwarded as called, to fail as it does without
     * gpuprio, not made to succeed by slices that need less. */
    if (!r)
        r = check_algo(c, &(struct slice_layouts){.c = c->Cdesc, .d = c->Ddesc});
    if (!r)
        r = check_algo(c, &l[0]);
    if (!r && last != p->width)
        r = check_algo(c, &l[1]);
    if (r) {
        destroy_layouts(&l[0]);
        destroy_layouts(&l[1]);
    }
    return r;
}

/* Issues the slices in order and stops at the first that fails, returning its status (the
 * slices before it have written their part of D, as a failing whole call may leave it). */
static hiphal_lt_status issue(hiphal_pfn_hipblasLtMatmul real, const struct hiphal_gemm_call *c,
                              const struct shape *s, const struct gemm_plan *p,
                              const struct slice_layouts l[2], int device)
{
    uint64_t extent = extent_of(s, p);
    hiphal_lt_status st = HIPHAL_LT_SUCCESS;
    for (uint32_t i = 0; i < p->count && st == HIPHAL_LT_SUCCESS; i++) {
        uint64_t first, size;
        gemm_plan_slice(p, extent, i, &first, &size);
        const struct slice_layouts *sl = &l[size == p->width ? 0 : 1];
        struct slice_args a;
        slice_args(c, s, p, first, &a);
        st = real(c->handle, c->desc, c->alpha, a.A, sl->a ? sl->a : c->Adesc, a.B,
                  sl->b ? sl->b : c->Bdesc, c->beta, a.C, sl->c, a.D, sl->d, c->algo, c->workspace,
                  c->workspace_size, c->stream);
        gemm_tally_slice(&hiphal_gemm_tally, 0, device);
    }
    return st;
}

/* ---- the call ---- */

static hiphal_lt_status whole(hiphal_pfn_hipblasLtMatmul real, const struct hiphal_gemm_call *c)
{
    return real(c->handle, c->desc, c->alpha, c->A, c->Adesc, c->B, c->Bdesc, c->beta, c->C,
                c->Cdesc, c->D, c->Ddesc, c->algo, c->workspace, c->workspace_size, c->stream);
}

static void say(const struct shape *s, const struct gemm_plan *p, uint64_t learned_ns)
{
    if (!gp_log_on(GP_LOG_DEBUG))
        return;
    if (p->count)
        gp_log(GP_LOG_DEBUG,
               "hipblasLtMatmul %llux%llux%llu (%llu us): %u slices along %s, %llu wide",
               (unsigned long long)s->m, (unsigned long long)s->n, (unsigned long long)s->k,
               (unsigned long long)(learned_ns / 1000), p->count, p->cut == GEMM_CUT_N ? "n" : "m",
               (unsigned long long)p->width);
    else
        gp_log(GP_LOG_DEBUG, "hipblasLtMatmul %llux%llux%llu (%llu us): whole, %s",
               (unsigned long long)s->m, (unsigned long long)s->n, (unsigned long long)s->k,
               (unsigned long long)(learned_ns / 1000), gemm_plan_reason(p->why));
}

hiphal_lt_status hiphal_gemm_matmul(hiphal_pfn_hipblasLtMatmul real,
                                    const struct hiphal_gemm_call *c,
                                    const struct hiphal_gemm_when *w)
{
    if (!w->target_ns || !sliceable_lib(real))
        return whole(real, c);
    if (w->capturing) { /* the graph would hold the slices with no gate between them */
        count_whole(w->device, GEMM_WHOLE_CAPTURING, 0, w->target_ns);
        return whole(real, c);
    }
    struct shape s;
    if (read_shape(c, &s)) {
        count_whole(w->device, GEMM_WHOLE_UNSUPPORTED, 0, w->target_ns);
        return whole(real, c);
    }
    struct hiphal_gemm_key key;
    key_of(c, &s, w->device, &key);
    bool time_this;
    uint64_t learned = hiphal_gemm_clock_learned(&key, &time_this);
    struct gemm_problem problem = {.m = s.m,
                                   .n = s.n,
                                   .sms = cus_of(w->device),
                                   .learned_ns = learned,
                                   .target_ns = w->target_ns,
                                   .batch = 1,
                                   .rows_fixed = s.bias != NULL};
    struct gemm_plan plan;
    if (gemm_plan_make(&problem, &plan) && !w->gated)
        plan = (struct gemm_plan){.why = GEMM_WHOLE_NOT_GATED};
    struct slice_layouts l[2];
    if (plan.count && prepare(c, &s, &plan, l))
        plan = (struct gemm_plan){.why = GEMM_WHOLE_CHECK_FAILED};
    say(&s, &plan, learned);
    void *token = time_this ? hiphal_gemm_clock_start(&key, c->stream) : NULL;
    hiphal_lt_status st;
    if (plan.count) {
        st = issue(real, c, &s, &plan, l, w->device);
        destroy_layouts(&l[0]);
        destroy_layouts(&l[1]);
        gemm_tally_sliced(&hiphal_gemm_tally, 0, w->device);
    } else {
        count_whole(w->device, plan.why, learned, w->target_ns);
        st = whole(real, c);
    }
    if (token)
        hiphal_gemm_clock_end(token, c->stream, st == HIPHAL_LT_SUCCESS);
    return st;
}
