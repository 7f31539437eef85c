/*
 * cuda_gemm.c - a cublasLtMatmul call, whole or in slices (cuda_gemm.h says when, and why the
 * slices are exact).
 *
 * The call's descriptors are read through the application's own cuBLASLt (the library its
 * cublasLtMatmul came from, never another copy), into a shape: dimensions, element types and
 * leading dimensions, transposes, epilogue, bias, the algorithm's tile. A slice is the same call
 * over a block of D's columns (n) or rows (m), or of a strided batch's items: the same
 * descriptor and algorithm, the same leading dimensions and batch strides, pointers moved to
 * the block, and layouts of the block's size (or item count), created for the call and destroyed
 * after it (at most two sizes: the slices' and the last one's). Batches are read only in calls
 * that gpuprio translated itself (cuda_gemmex.c), whose layouts it built. Along m
 * the bias moves with the rows, on a copy of the descriptor (a descriptor is semi-opaque plain
 * data, cublasLtMatmulDescOpaque_t, that an application may place in memory of its own).
 * Attributes that a library version does not know read as their defaults; every other failure
 * to read leaves the call whole.
 */
#include "cuda_gemm.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_bind.h"
#include "cuda_blas_real.h"
#include "cuda_compat.h"
#include "cuda_gemm_clock.h"
#include "cuda_node_time.h"
#include "gp_lockrank.h"
#include "gp_log.h"

/* ---- the application's cuBLASLt ---- */

static struct cudahal_lt_api lt;
static bool lt_ok;
static pthread_once_t lt_once = PTHREAD_ONCE_INIT;

/* The header cuda_cublaslt.h was checked against: slicing reads only this major's descriptors. */
#define LT_MAJOR 13

/* The functions of the library that holds the cublasLtMatmul a caller without one of its own
 * reaches, so that descriptors are read by the library that made them; lt_ok when all are there
 * and it is of LT_MAJOR. */
static void find_lt(void)
{
    void *matmul = cudahal_blas_next("cublasLtMatmul", "libcublasLt");
    bool all = matmul != NULL;
#define LT_API(name, exported, params, args)                                                       \
    *(void **)&lt.name = matmul ? cudahal_blas_sym_beside(matmul, #name) : NULL;                   \
    all = all && lt.name;
#include "cublaslt_api.def"
#undef LT_API
    size_t (*version)(void) = NULL;
    *(void **)&version = matmul ? cudahal_blas_sym_beside(matmul, "cublasLtGetVersion") : NULL;
    lt_ok = all && (void *)lt.cublasLtMatmul == matmul && version && version() / 10000 == LT_MAJOR;
}

static struct cudahal_blas_entry matmul_entry = {
    .name = "cublasLtMatmul", .stem = "libcublasLt", .library = "cuBLASLt"};

cudahal_pfn_cublasLtMatmul cudahal_gemm_real(const void *site)
{
    return (cudahal_pfn_cublasLtMatmul)cudahal_blas_real(&matmul_entry, site);
}

bool cudahal_gemm_sliceable_lib(cudahal_pfn_cublasLtMatmul real)
{
    pthread_once(&lt_once, find_lt);
    return lt_ok && real == lt.cublasLtMatmul;
}

const struct cudahal_lt_api *cudahal_gemm_lt(void)
{
    pthread_once(&lt_once, find_lt);
    return lt_ok ? &lt : NULL;
}

/* ---- counts ---- */

static const char *const entry_names[] = {
#define GEMM_ENTRY_NAME(name, function) function,
    CUDAHAL_GEMM_ENTRIES(GEMM_ENTRY_NAME)
#undef GEMM_ENTRY_NAME
};
_Static_assert(CUDAHAL_GEMM_ENTRY_COUNT <= GEMM_TALLY_ENTRIES, "the tally has every entry point");
struct gemm_tally cudahal_gemm_tally = GEMM_TALLY_INIT(entry_names, CUDAHAL_GEMM_ENTRY_COUNT);

/* ---- the call's shape ---- */

struct mat {
    uint32_t type;
    size_t esize;
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch;  /* items, 1 or more */
    int64_t stride; /* elements from one item to the next (batch > 1) */
};

struct shape {
    uint64_t m, n, k;
    uint64_t batch; /* items, the same in A, B, C and D */
    struct mat a, b, c, d;
    int32_t compute, scale, pointer_mode, transa, transb;
    uint32_t epilogue;
    const void *bias;
    size_t bias_esize; /* 0: not known */
    int32_t sm_target;
    uint32_t tile_m, tile_n;
    uint32_t splits; /* of k: a split-K algorithm's CTAs a tile (0: not known, taken as 1) */
};

static size_t element_size(uint32_t type)
{
    switch (type) {
    case CUDAHAL_LT_R_8I:
    case CUDAHAL_LT_R_8F_E4M3:
    case CUDAHAL_LT_R_8F_E5M2:
        return 1;
    case CUDAHAL_LT_R_16F:
    case CUDAHAL_LT_R_16BF:
        return 2;
    case CUDAHAL_LT_R_32F:
    case CUDAHAL_LT_R_32I:
        return 4;
    case CUDAHAL_LT_R_64F:
        return 8;
    default:
        return 0;
    }
}

/* A layout attribute: 0 read, -ENOTSUP not (the library does not know it, or refuses). */
static int layout_attr(cudahal_lt_layout_opaque *l, uint32_t attr, void *buf, size_t size)
{
    size_t written = 0;
    return lt.cublasLtMatrixLayoutGetAttribute(l, attr, buf, size, &written) ==
                       CUDAHAL_LT_SUCCESS &&
                   written == size
               ? 0
               : -ENOTSUP;
}

static int desc_attr(cudahal_lt_desc_opaque *d, uint32_t attr, void *buf, size_t size)
{
    size_t written = 0;
    return lt.cublasLtMatmulDescGetAttribute(d, attr, buf, size, &written) == CUDAHAL_LT_SUCCESS &&
                   written == size
               ? 0
               : -ENOTSUP;
}

/* Elements from a matrix's first to past its last item, in *out: false when it overflows. */
static bool elements_of(const struct mat *x, uint64_t *out)
{
    uint64_t item, items;
    return !__builtin_mul_overflow(x->cols - 1, (uint64_t)x->ld, &item) &&
           !__builtin_add_overflow(item, x->rows, &item) &&
           !__builtin_mul_overflow((uint64_t)(x->batch - 1), (uint64_t)x->stride, &items) &&
           !__builtin_add_overflow(items, item, out);
}

/* A column-major matrix of whole-byte elements, alone in its batch or, where batches_ok, of a
 * strided batch whose items lie one after the other (a stride of 0, a broadcast, or one less
 * than an item, where items overlap, is left whole with the rest): 0, else -ENOTSUP. */
static int read_mat(cudahal_lt_layout_opaque *l, bool batches_ok, struct mat *out)
{
    int32_t order = -1, batch = 0;
    int64_t plane = 0;
    uint32_t mode = CUDAHAL_LT_BATCH_STRIDED;
    if (!l || layout_attr(l, CUDAHAL_LT_LAYOUT_TYPE, &out->type, sizeof out->type) ||
        layout_attr(l, CUDAHAL_LT_LAYOUT_ORDER, &order, sizeof order) ||
        layout_attr(l, CUDAHAL_LT_LAYOUT_ROWS, &out->rows, sizeof out->rows) ||
        layout_attr(l, CUDAHAL_LT_LAYOUT_COLS, &out->cols, sizeof out->cols) ||
        layout_attr(l, CUDAHAL_LT_LAYOUT_LD, &out->ld, sizeof out->ld) ||
        layout_attr(l, CUDAHAL_LT_LAYOUT_BATCH_COUNT, &batch, sizeof batch))
        return -ENOTSUP;
    out->batch = batch;
    out->stride = 0;
    if (batch > 1 && (!batches_ok || layout_attr(l, CUDAHAL_LT_LAYOUT_BATCH_STRIDE, &out->stride,
                                                 sizeof out->stride)))
        return -ENOTSUP;
    /* Newer attributes: unknown to older libraries, where they are at their defaults. */
    layout_attr(l, CUDAHAL_LT_LAYOUT_PLANE_OFFSET, &plane, sizeof plane);
    layout_attr(l, CUDAHAL_LT_LAYOUT_BATCH_MODE, &mode, sizeof mode);
    out->esize = element_size(out->type);
    bool ok = out->esize && order == CUDAHAL_LT_ORDER_COL && batch >= 1 && plane == 0 &&
              mode == CUDAHAL_LT_BATCH_STRIDED && out->rows > 0 && out->cols > 0 &&
              out->ld >= (int64_t)out->rows;
    uint64_t item = 0;
    if (ok && batch > 1) /* the items one after the other */
        ok = out->stride > 0 &&
             elements_of(
                 &(struct mat){.rows = out->rows, .cols = out->cols, .ld = out->ld, .batch = 1},
                 &item) &&
             (uint64_t)out->stride >= item;
    return ok ? 0 : -ENOTSUP;
}

static bool epilogue_per_element(uint32_t e)
{
    return e == CUDAHAL_LT_EPILOGUE_DEFAULT || e == CUDAHAL_LT_EPILOGUE_RELU ||
           e == CUDAHAL_LT_EPILOGUE_BIAS || e == CUDAHAL_LT_EPILOGUE_RELU_BIAS ||
           e == CUDAHAL_LT_EPILOGUE_GELU || e == CUDAHAL_LT_EPILOGUE_GELU_BIAS;
}

/* CUDA 12's atomics synchronisation of D's rows or columns with other kernels (counters per
 * chunk: a slice would count other chunks), gone from CUDA 13's header. */
#define LT_DESC_ATOMIC_FIRST 27
#define LT_DESC_ATOMIC_LAST 30

/* Whether the descriptor's other attributes are at what slices exactly: no auxiliary output,
 * no amax, no scales but scalars, no emulation, full fill, C not transposed, no atomics. */
static bool desc_plain(cudahal_lt_desc_opaque *d)
{
    static const uint32_t null_pointers[] = {
        CUDAHAL_LT_DESC_AUX_POINTER, CUDAHAL_LT_DESC_AMAX_D_POINTER,
        CUDAHAL_LT_DESC_AUX_AMAX_POINTER, CUDAHAL_LT_DESC_D_OUT_SCALE_POINTER,
        CUDAHAL_LT_DESC_EMULATION};
    static const uint32_t scalar_modes[] = {
        CUDAHAL_LT_DESC_A_SCALE_MODE,   CUDAHAL_LT_DESC_B_SCALE_MODE,
        CUDAHAL_LT_DESC_C_SCALE_MODE,   CUDAHAL_LT_DESC_D_SCALE_MODE,
        CUDAHAL_LT_DESC_AUX_SCALE_MODE, CUDAHAL_LT_DESC_D_OUT_SCALE_MODE};
    for (size_t i = 0; i < sizeof null_pointers / sizeof *null_pointers; i++) {
        void *p = NULL;
        desc_attr(d, null_pointers[i], &p, sizeof p);
        if (p)
            return false;
    }
    for (size_t i = 0; i < sizeof scalar_modes / sizeof *scalar_modes; i++) {
        uint32_t mode = CUDAHAL_LT_SCALE_SCALAR_32F;
        desc_attr(d, scalar_modes[i], &mode, sizeof mode);
        if (mode != CUDAHAL_LT_SCALE_SCALAR_32F)
            return false;
    }
    for (uint32_t a = LT_DESC_ATOMIC_FIRST; a <= LT_DESC_ATOMIC_LAST; a++) {
        uint64_t v = 0; /* two ints and two pointers: any of them set is refused */
        desc_attr(d, a, &v, a <= 28 ? sizeof(int32_t) : sizeof(void *));
        if (v)
            return false;
    }
    int32_t transc = CUDAHAL_LT_OP_N, fill = CUDAHAL_LT_FILL_FULL;
    desc_attr(d, CUDAHAL_LT_DESC_TRANSC, &transc, sizeof transc);
    desc_attr(d, CUDAHAL_LT_DESC_FILL_MODE, &fill, sizeof fill);
    return transc == CUDAHAL_LT_OP_N && fill == CUDAHAL_LT_FILL_FULL;
}

/* The bias's element size (bias_esize), 0 where cuBLASLt's rule depends on more than D's type
 * (integer and fp8 kernels). */
static size_t bias_size(cudahal_lt_desc_opaque *desc, const struct shape *s)
{
    int32_t type = -1;
    desc_attr(desc, CUDAHAL_LT_DESC_BIAS_DATA_TYPE, &type, sizeof type);
    if (type >= 0)
        return element_size((uint32_t)type);
    bool plain = s->a.type != CUDAHAL_LT_R_8I && s->a.type != CUDAHAL_LT_R_8F_E4M3 &&
                 s->a.type != CUDAHAL_LT_R_8F_E5M2;
    return plain ? s->d.esize : 0;
}

/* Whether cuBLAS's environment turns emulation on for a precision (CUBLAS_EMULATE_SINGLE_PRECISION,
 * CUBLAS_EMULATE_DOUBLE_PRECISION: any value but 0), which its strategy may then use for one
 * problem and not for another. */
static bool emulated_by_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static bool compute_per_element(int32_t compute)
{
    switch (compute) {
    case CUDAHAL_BLAS_COMPUTE_16F:
    case CUDAHAL_BLAS_COMPUTE_16F_PEDANTIC:
    case CUDAHAL_BLAS_COMPUTE_32I:
    case CUDAHAL_BLAS_COMPUTE_32I_PEDANTIC:
        return true;
    case CUDAHAL_BLAS_COMPUTE_32F:
    case CUDAHAL_BLAS_COMPUTE_32F_PEDANTIC:
    case CUDAHAL_BLAS_COMPUTE_32F_FAST_16F:
    case CUDAHAL_BLAS_COMPUTE_32F_FAST_16BF:
    case CUDAHAL_BLAS_COMPUTE_32F_FAST_TF32:
        return !emulated_by_env("CUBLAS_EMULATE_SINGLE_PRECISION");
    case CUDAHAL_BLAS_COMPUTE_64F:
    case CUDAHAL_BLAS_COMPUTE_64F_PEDANTIC:
        return !emulated_by_env("CUBLAS_EMULATE_DOUBLE_PRECISION");
    default:
        return false;
    }
}

static int read_desc(cudahal_lt_desc_opaque *d, struct shape *s)
{
    if (!d || desc_attr(d, CUDAHAL_LT_DESC_COMPUTE_TYPE, &s->compute, sizeof s->compute) ||
        desc_attr(d, CUDAHAL_LT_DESC_SCALE_TYPE, &s->scale, sizeof s->scale) ||
        desc_attr(d, CUDAHAL_LT_DESC_POINTER_MODE, &s->pointer_mode, sizeof s->pointer_mode) ||
        desc_attr(d, CUDAHAL_LT_DESC_TRANSA, &s->transa, sizeof s->transa) ||
        desc_attr(d, CUDAHAL_LT_DESC_TRANSB, &s->transb, sizeof s->transb) ||
        desc_attr(d, CUDAHAL_LT_DESC_EPILOGUE, &s->epilogue, sizeof s->epilogue) ||
        desc_attr(d, CUDAHAL_LT_DESC_BIAS_POINTER, &s->bias, sizeof s->bias))
        return -ENOTSUP;
    s->sm_target = 0;
    desc_attr(d, CUDAHAL_LT_DESC_SM_COUNT_TARGET, &s->sm_target, sizeof s->sm_target);
    bool ok = compute_per_element(s->compute) &&
              (s->pointer_mode == CUDAHAL_LT_POINTER_HOST ||
               s->pointer_mode == CUDAHAL_LT_POINTER_DEVICE) &&
              (s->transa == CUDAHAL_LT_OP_N || s->transa == CUDAHAL_LT_OP_T) &&
              (s->transb == CUDAHAL_LT_OP_N || s->transb == CUDAHAL_LT_OP_T) &&
              epilogue_per_element(s->epilogue) && desc_plain(d);
    return ok ? 0 : -ENOTSUP;
}

/* ---- where matrices lie ---- */

/* The bytes from a matrix's first element to past its last item's last; valid false when that
 * does not fit an address. */
struct span {
    uintptr_t lo, hi;
    bool valid;
};

static struct span span_of(const void *p, const struct mat *x)
{
    uintptr_t lo = (uintptr_t)p;
    uint64_t elements = 0, bytes = 0;
    bool valid = elements_of(x, &elements) && !__builtin_mul_overflow(elements, x->esize, &bytes) &&
                 bytes <= UINTPTR_MAX - lo;
    return (struct span){lo, valid ? lo + (uintptr_t)bytes : lo, valid};
}

static bool apart(struct span a, struct span b)
{
    return a.valid && b.valid && (a.hi <= b.lo || b.hi <= a.lo);
}

/* C is D (same place, type, leading dimension and batch stride) or apart from it; D apart from
 * A and B. */
static bool placed_apart(const struct cudahal_gemm_call *c, const struct shape *s)
{
    struct span d = span_of(c->D, &s->d);
    if (!apart(d, span_of(c->A, &s->a)) || !apart(d, span_of(c->B, &s->b)))
        return false;
    if (!c->C)
        return true;
    if (c->C == c->D)
        return s->c.type == s->d.type && s->c.ld == s->d.ld && s->c.stride == s->d.stride;
    return apart(d, span_of(c->C, &s->c));
}

/* ---- the algorithm's tile and the device ---- */

static const struct {
    uint16_t rows, cols;
} tiles[] = {
#define LT_TILE(id, r, c) [id] = {r, c},
#include "cublaslt_tiles.def"
#undef LT_TILE
};

/* The algorithm's tile and split of k, where cuBLASLt says them (0 where it does not: the plan
 * then takes a tile of its own and one CTA a tile). */
static void read_tile(const cudahal_lt_algo *algo, struct shape *s)
{
    uint32_t id = 0;
    int32_t splits = 0;
    size_t written = 0;
    s->tile_m = s->tile_n = s->splits = 0;
    if (lt.cublasLtMatmulAlgoConfigGetAttribute(algo, CUDAHAL_LT_CONFIG_SPLITK_NUM, &splits,
                                                sizeof splits, &written) == CUDAHAL_LT_SUCCESS &&
        written == sizeof splits && splits > 0)
        s->splits = (uint32_t)splits;
    if (lt.cublasLtMatmulAlgoConfigGetAttribute(algo, CUDAHAL_LT_CONFIG_TILE_ID, &id, sizeof id,
                                                &written) != CUDAHAL_LT_SUCCESS ||
        id >= sizeof tiles / sizeof *tiles)
        return;
    s->tile_m = tiles[id].rows;
    s->tile_n = tiles[id].cols;
}

#define SM_DEVICES 64
static _Atomic uint32_t device_sms[SM_DEVICES];

static uint32_t sms_of(int device, int32_t target)
{
    if (target > 0)
        return (uint32_t)target;
    if (device < 0 || device >= SM_DEVICES)
        return 0;
    uint32_t sms = atomic_load(&device_sms[device]);
    if (sms)
        return sms;
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
    *(void **)&attribute = cudahal_sym("cuDeviceGetAttribute");
    int v = 0;
    if (attribute &&
        attribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, (CUdevice)device) == CUDA_SUCCESS &&
        v > 0)
        atomic_store(&device_sms[device], sms = (uint32_t)v);
    return sms;
}

/* ---- reading the whole call ---- */

/* What a call's descriptor, layouts and algorithm say, all of it in their bytes: cuBLASLt's are
 * semi-opaque plain data (cublasLtMatmulDescOpaque_t and the others, which cuBLASLt allocates at
 * exactly that size and an application may place in memory of its own), so a copy is the same
 * descriptor, and equal bytes read as equal attributes. */
struct form {
    cudahal_lt_desc_opaque desc;
    cudahal_lt_layout_opaque layouts[4]; /* A, B, C, D */
    cudahal_lt_algo algo;
    uint64_t batches_ok;
};
_Static_assert(sizeof(cudahal_lt_desc_opaque) % 16 == 0 && sizeof(cudahal_lt_algo) % 16 == 0 &&
                   sizeof(cudahal_lt_layout_opaque) >= 32,
               "form_hash reads whole pairs of words");

/* The shape in form f (read from its copies, so that what is remembered of f is what f says): 0,
 * or -ENOTSUP when it is not one that slices exactly (a batch of more than one item only where
 * batches_ok, every matrix with as many, and no bias). The call's pointers are not looked at. */
static int read_form(struct form *f, struct shape *s)
{
    memset(s, 0, sizeof *s);
    bool batches_ok = f->batches_ok != 0;
    if (read_desc(&f->desc, s) || read_mat(&f->layouts[0], batches_ok, &s->a) ||
        read_mat(&f->layouts[1], batches_ok, &s->b) ||
        read_mat(&f->layouts[2], batches_ok, &s->c) || read_mat(&f->layouts[3], batches_ok, &s->d))
        return -ENOTSUP;
    s->m = s->d.rows;
    s->n = s->d.cols;
    s->batch = (uint64_t)s->d.batch;
    bool ta = s->transa == CUDAHAL_LT_OP_T, tb = s->transb == CUDAHAL_LT_OP_T;
    s->k = ta ? s->a.rows : s->a.cols;
    bool dims = (ta ? s->a.cols : s->a.rows) == s->m && (tb ? s->b.rows : s->b.cols) == s->n &&
                (tb ? s->b.cols : s->b.rows) == s->k && s->c.rows == s->m && s->c.cols == s->n;
    bool batches = s->a.batch == s->d.batch && s->b.batch == s->d.batch &&
                   s->c.batch == s->d.batch && (s->batch == 1 || !s->bias);
    if (!dims || !batches)
        return -ENOTSUP;
    s->bias_esize = s->bias ? bias_size(&f->desc, s) : 0;
    read_tile(&f->algo, s);
    return 0;
}

/*
 * Forms read before, and what they read as. Every cublasLtMatmul of every process is read while
 * slicing is on (the default), and reading one through cuBLASLt is some 60 attribute calls (about
 * 1.5 us of the host's time with CUDA 13's cuBLASLt), for calls that mostly repeat a few forms.
 * An entry is found by its form's bytes and holds only what those bytes say, so a stale one
 * cannot be found: a descriptor changed, destroyed or reused at another address reads as the
 * bytes it has now (bytes a library leaves unset only make a form miss). A table like the clock's
 * (open addressing, the least recently used entry of a probe run replaced); the library is read
 * outside its lock.
 */
#define FORM_SLOTS 256
#define FORM_PROBE 8

struct form_entry {
    struct form form;
    bool used;
    int read; /* read_form's answer */
    struct shape shape;
    uint64_t last_use;
};

static struct form_entry forms[FORM_SLOTS];
static uint64_t forms_clock;
static pthread_mutex_t forms_mu = PTHREAD_MUTEX_INITIALIZER;

/* Where the parts of a call's form lie (the application's objects). */
struct form_parts {
    const void *at[6];
};
static const size_t part_size[6] = {
    sizeof(cudahal_lt_desc_opaque),   sizeof(cudahal_lt_layout_opaque),
    sizeof(cudahal_lt_layout_opaque), sizeof(cudahal_lt_layout_opaque),
    sizeof(cudahal_lt_layout_opaque), sizeof(cudahal_lt_algo)};
_Static_assert(offsetof(struct form, layouts) == sizeof(cudahal_lt_desc_opaque) &&
                   offsetof(struct form, algo) ==
                       sizeof(cudahal_lt_desc_opaque) + 4 * sizeof(cudahal_lt_layout_opaque) &&
                   offsetof(struct form, batches_ok) ==
                       offsetof(struct form, algo) + sizeof(cudahal_lt_algo),
               "a form is its parts one after the other");

/* The slot a form's run starts at, from the words of each part that tell forms apart best: all
 * of the descriptor's (where a bias pointer, one per layer of a model, may lie anywhere) and the
 * algorithm's, a layout's first (type and sizes); the entry's bytes are compared in full. Two
 * words at a time, so that the multiplies overlap. */
static const size_t part_hashed_words[6] = {sizeof(cudahal_lt_desc_opaque) / 8, 4, 4, 4, 4,
                                            sizeof(cudahal_lt_algo) / 8};
static size_t form_hash(const struct form_parts *p, bool batches_ok)
{
    uint64_t h0 = 0x9e3779b97f4a7c15ull ^ batches_ok, h1 = 0xbf58476d1ce4e5b9ull;
    for (size_t i = 0; i < 6; i++)
        for (size_t w = 0; w + 1 < part_hashed_words[i]; w += 2) {
            uint64_t a, b;
            memcpy(&a, (const char *)p->at[i] + w * sizeof a, sizeof a);
            memcpy(&b, (const char *)p->at[i] + (w + 1) * sizeof b, sizeof b);
            h0 = (h0 ^ a) * 0x9e3779b97f4a7c15ull;
            h1 = (h1 ^ b) * 0x94d049bb133111ebull;
            h0 ^= h0 >> 32;
            h1 ^= h1 >> 32;
        }
    uint64_t h = h0 ^ (h1 * 3);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)(h % FORM_SLOTS);
}

static bool form_is(const struct form *f, const struct form_parts *p, bool batches_ok)
{
    const char *at = (const char *)f;
    for (size_t i = 0; i < 6; at += part_size[i], i++)
        if (memcmp(at, p->at[i], part_size[i]))
            return false;
    return f->batches_ok == batches_ok;
}

/* The entry of the form in p, or NULL (forms_mu held); with claim, a new one (unread) in the least
 * recently used slot of its probe run. */
static struct form_entry *form_entry_of(const struct form_parts *p, bool batches_ok, size_t h,
                                        bool claim)
{
    struct form_entry *victim = NULL;
    for (size_t i = 0; i < FORM_PROBE; i++) {
        struct form_entry *e = &forms[(h + i) % FORM_SLOTS];
        if (e->used && form_is(&e->form, p, batches_ok)) {
            e->last_use = ++forms_clock;
            return e;
        }
        if (!victim || !e->used || (victim->used && e->last_use < victim->last_use))
            victim = e;
    }
    if (!claim)
        return NULL;
    victim->used = true;
    victim->last_use = ++forms_clock;
    return victim;
}

/* read_form of the form in p, remembered: compared and hashed where the call's objects lie, copied
 * only to be read (so that what is remembered is what was read). */
static int recall_form(const struct form_parts *p, bool batches_ok, struct shape *s)
{
    size_t h = form_hash(p, batches_ok);
    gp_mutex_lock(&forms_mu, GP_RANK_GEMM_FORMS);
    struct form_entry *e = form_entry_of(p, batches_ok, h, false);
    int r = e ? e->read : 0;
    if (e)
        *s = e->shape;
    gp_mutex_unlock(&forms_mu, GP_RANK_GEMM_FORMS);
    if (e)
        return r;
    struct form f = {.batches_ok = batches_ok};
    char *at = (char *)&f;
    for (size_t i = 0; i < 6; at += part_size[i], i++)
        memcpy(at, p->at[i], part_size[i]);
    r = read_form(&f, s);
    gp_mutex_lock(&forms_mu, GP_RANK_GEMM_FORMS);
    e = form_entry_of(p, batches_ok, h, true);
    e->form = f;
    e->read = r;
    e->shape = *s;
    gp_mutex_unlock(&forms_mu, GP_RANK_GEMM_FORMS);
    return r;
}

void cudahal_gemm_forget_forms(void)
{
    pthread_mutex_init(&forms_mu, NULL);
    memset(forms, 0, sizeof forms);
    forms_clock = 0;
}

/* The shape of call c: 0, or -ENOTSUP when it is not one that slices exactly (read_form's
 * rules; and C equal to D or apart from it, D apart from A and B). */
static int read_shape(const struct cudahal_gemm_call *c, bool batches_ok, struct shape *s)
{
    memset(s, 0, sizeof *s);
    if (!c->algo || !c->desc || !c->Adesc || !c->Bdesc || !c->Cdesc || !c->Ddesc)
        return -ENOTSUP;
    struct form_parts p = {{c->desc, c->Adesc, c->Bdesc, c->Cdesc, c->Ddesc, c->algo}};
    if (recall_form(&p, batches_ok, s))
        return -ENOTSUP;
    return c->A && c->B && c->D && placed_apart(c, s) ? 0 : -ENOTSUP;
}

static void key_of(const struct cudahal_gemm_call *c, const struct shape *s,
                   struct cudahal_gemm_key *key)
{
    memset(key, 0, sizeof *key);
    key->m = s->m;
    key->n = s->n;
    key->k = s->k;
    key->types[0] = s->a.type;
    key->types[1] = s->b.type;
    key->types[2] = s->c.type;
    key->types[3] = s->d.type;
    key->compute = s->compute;
    key->transa = s->transa;
    key->transb = s->transb;
    key->algo = *c->algo;
}

/* ---- slices ---- */

/* The layouts of one size of slice; NULL where the application's own serves. */
struct slice_layouts {
    cudahal_lt_layout_opaque *a, *b, *c, *d;
};

static void destroy_layouts(struct slice_layouts *l)
{
    cudahal_lt_layout_opaque *all[] = {l->a, l->b, l->c, l->d};
    for (size_t i = 0; i < 4; i++)
        if (all[i])
            lt.cublasLtMatrixLayoutDestroy(all[i]);
    memset(l, 0, sizeof *l);
}

/* A layout of x's type, leading dimension and batch stride, of rows x cols in each of `items`. */
static int make_layout(const struct mat *x, uint64_t rows, uint64_t cols, uint64_t items,
                       cudahal_lt_layout_opaque **out)
{
    int32_t count = (int32_t)items;
    if (lt.cublasLtMatrixLayoutCreate(out, x->type, rows, cols, x->ld) != CUDAHAL_LT_SUCCESS)
        return -EIO;
    if (items > 1 &&
        (lt.cublasLtMatrixLayoutSetAttribute(*out, CUDAHAL_LT_LAYOUT_BATCH_COUNT, &count,
                                             sizeof count) != CUDAHAL_LT_SUCCESS ||
         lt.cublasLtMatrixLayoutSetAttribute(*out, CUDAHAL_LT_LAYOUT_BATCH_STRIDE, &x->stride,
                                             sizeof x->stride) != CUDAHAL_LT_SUCCESS)) {
        lt.cublasLtMatrixLayoutDestroy(*out);
        *out = NULL;
        return -EIO;
    }
    return 0;
}

/* The extent of p's cut: D's columns or rows, or the batch's items. */
static uint64_t extent_of(const struct shape *s, const struct gemm_plan *p)
{
    return p->cut == GEMM_CUT_BATCH ? s->batch : p->cut == GEMM_CUT_N ? s->n : s->m;
}

/* Layouts for slices of `size` along p's cut: along n, B (k x size as op(B)), C and D; along m,
 * A (size x k as op(A)), C and D, every item of a batch; along a batch, all four, of `size`
 * items. */
static int make_layouts(const struct shape *s, const struct gemm_plan *p, uint64_t size,
                        struct slice_layouts *l)
{
    bool n_cut = p->cut == GEMM_CUT_N, m_cut = p->cut == GEMM_CUT_M;
    uint64_t m = m_cut ? size : s->m, n = n_cut ? size : s->n;
    uint64_t items = p->cut == GEMM_CUT_BATCH ? size : s->batch;
    bool ta = s->transa == CUDAHAL_LT_OP_T, tb = s->transb == CUDAHAL_LT_OP_T;
    int r = 0;
    memset(l, 0, sizeof *l);
    if (!m_cut)
        r = make_layout(&s->b, tb ? n : s->k, tb ? s->k : n, items, &l->b);
    if (!r && !n_cut)
        r = make_layout(&s->a, ta ? s->k : m, ta ? m : s->k, items, &l->a);
    if (!r)
        r = make_layout(&s->c, m, n, items, &l->c);
    if (!r)
        r = make_layout(&s->d, m, n, items, &l->d);
    if (r)
        destroy_layouts(l);
    return r;
}

/* One slice's arguments: the call's, moved to the block that starts at `first` along the cut. */
struct slice_args {
    const void *A, *B, *C;
    void *D;
    const void *bias;
};

static const void *moved(const void *p, uint64_t elements, size_t esize)
{
    return p ? (const char *)p + elements * esize : NULL;
}

static void slice_args(const struct cudahal_gemm_call *c, const struct shape *s,
                       const struct gemm_plan *p, uint64_t first, struct slice_args *out)
{
    *out = (struct slice_args){c->A, c->B, c->C, c->D, s->bias};
    if (p->cut == GEMM_CUT_BATCH) { /* whole items of all four (no bias: read_shape) */
        out->A = moved(c->A, first * (uint64_t)s->a.stride, s->a.esize);
        out->B = moved(c->B, first * (uint64_t)s->b.stride, s->b.esize);
        out->C = moved(c->C, first * (uint64_t)s->c.stride, s->c.esize);
        out->D = (void *)moved(c->D, first * (uint64_t)s->d.stride, s->d.esize);
    } else if (p->cut == GEMM_CUT_N) { /* columns of op(B), C and D */
        bool tb = s->transb == CUDAHAL_LT_OP_T;
        out->B = moved(c->B, tb ? first : first * (uint64_t)s->b.ld, s->b.esize);
        out->C = moved(c->C, first * (uint64_t)s->c.ld, s->c.esize);
        out->D = (void *)moved(c->D, first * (uint64_t)s->d.ld, s->d.esize);
    } else { /* rows of op(A), C, D and the bias */
        bool ta = s->transa == CUDAHAL_LT_OP_T;
        out->A = moved(c->A, ta ? first * (uint64_t)s->a.ld : first, s->a.esize);
        out->C = moved(c->C, first, s->c.esize);
        out->D = (void *)moved(c->D, first, s->d.esize);
        out->bias = moved(s->bias, first, s->bias_esize);
    }
}

/* The plan, ready to issue: layouts of both sizes and the descriptor the slices use. */
struct prepared {
    struct slice_layouts l[2]; /* [0] the slices', [1] the last one's where it differs */
    cudahal_lt_desc_opaque desc_copy;
    cudahal_lt_desc_opaque *desc;
    bool moves_bias;
};

static int set_bias(struct prepared *pp, const void *bias)
{
    return lt.cublasLtMatmulDescSetAttribute(pp->desc, CUDAHAL_LT_DESC_BIAS_POINTER, &bias,
                                             sizeof bias) == CUDAHAL_LT_SUCCESS
               ? 0
               : -EIO;
}

/* cuBLASLt's own check of the algorithm on l's layouts (a slice's, or where l has only C and D,
 * the call's own), with no more workspace than the call gave. */
static int check_algo(const struct cudahal_gemm_call *c, struct prepared *pp,
                      const struct slice_layouts *l)
{
    cudahal_lt_heuristic result;
    memset(&result, 0, sizeof result);
    cudahal_lt_status st =
        lt.cublasLtMatmulAlgoCheck(c->handle, pp->desc, l->a ? l->a : c->Adesc,
                                   l->b ? l->b : c->Bdesc, l->c, l->d, c->algo, &result);
    return st == CUDAHAL_LT_SUCCESS && result.state == CUDAHAL_LT_SUCCESS &&
                   result.workspaceSize <= c->workspace_size
               ? 0
               : -ENOTSUP;
}

static void release(struct prepared *pp)
{
    destroy_layouts(&pp->l[0]);
    destroy_layouts(&pp->l[1]);
}

/* Prepares plan p for call c: 0, or negative (nothing to release then). */
static int prepare(const struct cudahal_gemm_call *c, const struct shape *s,
                   const struct gemm_plan *p, struct prepared *pp)
{
    memset(pp, 0, sizeof *pp);
    pp->desc = c->desc;
    pp->moves_bias = p->cut == GEMM_CUT_M && s->bias;
    if (pp->moves_bias && !s->bias_esize) /* the plan does not make it (rows_fixed) */
        return -ENOTSUP;
    if (pp->moves_bias) {
        memcpy(&pp->desc_copy, c->desc, sizeof pp->desc_copy);
        pp->desc = &pp->desc_copy;
    }
    uint64_t first, last;
    gemm_plan_slice(p, extent_of(s, p), p->count - 1, &first, &last);
    int r = make_layouts(s, p, p->width, &pp->l[0]);
    if (!r && last != p->width)
        r = make_layouts(s, p, last, &pp->l[1]);
    if (!r && pp->moves_bias)
        r = set_bias(pp, s->bias);
    /* The whole call first: one cuBLASLt would refuse (say, its workspace too small for the
     * algorithm on the whole problem) is forwarded as called, to fail as it does without
     * gpuprio, not made to succeed by slices that need less. */
    if (!r)
        r = check_algo(c, pp, &(struct slice_layouts){.c = c->Cdesc, .d = c->Ddesc});
    if (!r)
        r = check_algo(c, pp, &pp->l[0]);
    if (!r && last != p->width)
        r = check_algo(c, pp, &pp->l[1]);
    if (r)
        release(pp);
    return r;
}

/* Issues the slices in order and stops at the first that fails, returning its status: the
 * slices before it have written their part of D, so a failure is never answered with success,
 * but D is then partly written (with beta != 0, not the input of a retry). That cannot be
 * avoided once a slice ran; it is what a failing whole call may leave too. A translated
 * cublasGemmEx (cuda_gemmex.c) returns that status as its own. Into a capture (captured_ns, the
 * whole call's learned time, not 0), each slice's node is noted with its share of that time, for
 * the wait nodes of the graph's gated copy (cuda_graph_gate.c). */
static cudahal_lt_status issue(cudahal_pfn_cublasLtMatmul real, const struct cudahal_gemm_call *c,
                               const struct shape *s, const struct gemm_plan *p,
                               struct prepared *pp, enum cudahal_gemm_entry entry, int device,
                               uint64_t captured_ns)
{
    uint64_t extent = extent_of(s, p);
    cudahal_lt_status st = CUDAHAL_LT_SUCCESS;
    for (uint32_t i = 0; i < p->count && st == CUDAHAL_LT_SUCCESS; i++) {
        uint64_t first, size;
        gemm_plan_slice(p, extent, i, &first, &size);
        const struct slice_layouts *l = &pp->l[size == p->width ? 0 : 1];
        struct slice_args a;
        slice_args(c, s, p, first, &a);
        /* Set on the copy for slice 0 already (prepare), so that it cannot fail later. */
        if (pp->moves_bias && i && set_bias(pp, a.bias)) {
            gp_log(GP_LOG_ERROR, "%s: the bias of slice %u could not be set", entry_names[entry],
                   i);
            return CUDAHAL_LT_INTERNAL_ERROR;
        }
        st = real(c->handle, pp->desc, c->alpha, a.A, l->a ? l->a : c->Adesc, a.B,
                  l->b ? l->b : c->Bdesc, c->beta, a.C, l->c, a.D, l->d, c->algo, c->workspace,
                  c->workspace_size, c->stream);
        if (captured_ns && st == CUDAHAL_LT_SUCCESS)
            cudahal_node_time_note_leaf(
                c->stream, (uint64_t)((double)captured_ns * (double)size / (double)extent));
        gemm_tally_slice(&cudahal_gemm_tally, entry, device);
    }
    return st;
}

/* ---- the call ---- */

static cudahal_lt_status whole(cudahal_pfn_cublasLtMatmul real, const struct cudahal_gemm_call *c)
{
    return real(c->handle, c->desc, c->alpha, c->A, c->Adesc, c->B, c->Bdesc, c->beta, c->C,
                c->Cdesc, c->D, c->Ddesc, c->algo, c->workspace, c->workspace_size, c->stream);
}

/* Whole, and timed when the clock asks (key not NULL). */
static cudahal_lt_status timed_whole(cudahal_pfn_cublasLtMatmul real,
                                     const struct cudahal_gemm_call *c,
                                     const struct cudahal_gemm_key *key)
{
    void *token = key ? cudahal_gemm_clock_start(key, c->stream) : NULL;
    cudahal_lt_status st = whole(real, c);
    if (token)
        cudahal_gemm_clock_end(token, c->stream, st == CUDAHAL_LT_SUCCESS);
    return st;
}

static void say(enum cudahal_gemm_entry entry, const struct shape *s, const struct gemm_plan *p,
                uint64_t learned_ns)
{
    if (!gp_log_on(GP_LOG_DEBUG))
        return;
    static const char *const cuts[] = {
        [GEMM_CUT_N] = "n", [GEMM_CUT_M] = "m", [GEMM_CUT_BATCH] = "the batch"};
    char what[160];
    snprintf(what, sizeof what, "%s %llux%llux%llu x %llu, tile %ux%u, k split %u (%llu us)",
             entry_names[entry], (unsigned long long)s->m, (unsigned long long)s->n,
             (unsigned long long)s->k, (unsigned long long)s->batch, s->tile_m, s->tile_n,
             s->splits, (unsigned long long)(learned_ns / 1000));
    if (p->count)
        gp_log(GP_LOG_DEBUG, "%s: %u slices along %s, %llu wide", what, p->count, cuts[p->cut],
               (unsigned long long)p->width);
    else
        gp_log(GP_LOG_DEBUG, "%s: whole, %s", what, gemm_plan_reason(p->why));
}

enum gemm_whole_reason cudahal_gemm_captured_why(const struct cudahal_gemm_when *w,
                                                 enum gemm_whole_reason why)
{
    return w->into_capture && why == GEMM_WHOLE_UNLEARNED ? GEMM_WHOLE_CAPTURING : why;
}

void cudahal_gemm_count_whole(enum cudahal_gemm_entry entry, int device, enum gemm_whole_reason why,
                              uint64_t learned_ns, uint64_t target_ns)
{
    gemm_tally_whole(&cudahal_gemm_tally, entry, device, why, learned_ns, target_ns);
}

/* Plans call c (shape s, whole GPU time learned_ns) and issues its slices when the plan has
 * some: true with *st what they returned, or false (nothing issued) with plan->why. The slices
 * are timed together under key timed when it is not NULL: a sliced call's time can only be
 * longer than the whole call's, so it can bring a learned time that a wait inflated (a closed
 * gate, a module loaded lazily at the first call) down towards the GEMM's own, where timing
 * whole calls only would never again see one. Into a capture (w->into_capture) the queue the
 * graph will be replayed on is not known, so w->gated does not matter, and nothing is timed. */
static bool plan_and_issue(cudahal_pfn_cublasLtMatmul real, const struct cudahal_gemm_call *c,
                           const struct shape *s, uint64_t learned_ns,
                           const struct cudahal_gemm_when *w, const struct cudahal_gemm_key *timed,
                           struct gemm_plan *plan, cudahal_lt_status *st)
{
    struct gemm_problem problem = {.m = s->m,
                                   .n = s->n,
                                   .tile_m = s->tile_m,
                                   .tile_n = s->tile_n,
                                   .sms = sms_of(w->device, s->sm_target),
                                   .learned_ns = learned_ns,
                                   .target_ns = w->target_ns,
                                   .batch = s->batch,
                                   .splits = s->splits,
                                   .rows_fixed = s->bias && !s->bias_esize};
    if (gemm_plan_make(&problem, plan) && !w->gated && !w->into_capture)
        *plan = (struct gemm_plan){.why = GEMM_WHOLE_NOT_GATED};
    struct prepared pp;
    if (plan->count && prepare(c, s, plan, &pp))
        *plan = (struct gemm_plan){.why = GEMM_WHOLE_CHECK_FAILED};
    say(w->entry, s, plan, learned_ns);
    if (!plan->count)
        return false;
    void *token = timed ? cudahal_gemm_clock_start(timed, c->stream) : NULL;
    *st = issue(real, c, s, plan, &pp, w->entry, w->device, w->into_capture ? learned_ns : 0);
    if (token)
        cudahal_gemm_clock_end(token, c->stream, *st == CUDAHAL_LT_SUCCESS);
    release(&pp);
    gemm_tally_sliced(&cudahal_gemm_tally, w->entry, w->device);
    return true;
}

cudahal_lt_status cudahal_gemm_matmul(cudahal_pfn_cublasLtMatmul real,
                                      const struct cudahal_gemm_call *c,
                                      const struct cudahal_gemm_when *w)
{
    if (!w->target_ns || !cudahal_gemm_sliceable_lib(real))
        return whole(real, c);
    if (w->capturing && !w->into_capture) {
        cudahal_gemm_count_whole(w->entry, w->device, GEMM_WHOLE_CAPTURING, 0, w->target_ns);
        return whole(real, c);
    }
    struct shape s;
    if (read_shape(c, false, &s)) {
        cudahal_gemm_count_whole(w->entry, w->device, GEMM_WHOLE_UNSUPPORTED, 0, w->target_ns);
        return whole(real, c);
    }
    struct cudahal_gemm_key key;
    key_of(c, &s, &key);
    bool time_this;
    uint64_t learned = cudahal_gemm_clock_learned(&key, &time_this);
    time_this = time_this && !w->capturing; /* events in a capture would become its nodes */
    struct gemm_plan plan;
    cudahal_lt_status st;
    if (plan_and_issue(real, c, &s, learned, w, time_this ? &key : NULL, &plan, &st))
        return st;
    cudahal_gemm_count_whole(w->entry, w->device, cudahal_gemm_captured_why(w, plan.why), learned,
                             w->target_ns);
    return timed_whole(real, c, time_this ? &key : NULL);
}

bool cudahal_gemm_slice_translated(cudahal_pfn_cublasLtMatmul real,
                                   const struct cudahal_gemm_call *c,
                                   const struct cudahal_gemm_when *w, uint64_t learned_ns,
                                   const struct cudahal_gemm_key *timed,
                                   enum gemm_whole_reason *why, cudahal_lt_status *st)
{
    struct shape s;
    struct gemm_plan plan = {.why = GEMM_WHOLE_UNSUPPORTED};
    if (!cudahal_gemm_sliceable_lib(real) || read_shape(c, true, &s) ||
        !plan_and_issue(real, c, &s, learned_ns, w, timed, &plan, st)) {
        *why = plan.why;
        return false;
    }
    return true;
}
