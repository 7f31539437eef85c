/*
 * gemmex_slices.c - gpuprio's slices of cublasGemmEx and cublasGemmStridedBatchedEx, translated
 * into cuBLASLt, over the fake driver, the fake cuBLAS (fake_cublas.c) and the fake cuBLASLt it
 * links, run by gemm.sh under libgpuprio-cuda.so like gemm_slices.c.
 *
 *   gemmex_slices CASE [EXPECT]
 *
 * A float GEMM, C = 1.5 op(A) op(B) + 0.5 C with m 1024, n 4096, k 4, op(B) transposed, A at an
 * address of 4-byte alignment, on a handle whose stream is the low-priority one and whose
 * workspace was set, is called twice: the first call is whole (its time is not known yet), the
 * second as the plan says. C must equal, bit for bit, what the fake cuBLAS computes for the
 * call made directly (not through the shim), and every call the fakes received is checked. The
 * batch cases make the same calls through cublasGemmStridedBatchedEx: 32 items of m 256, n 128,
 * k 4, each matrix's items apart by a stride of more than an item (the gaps must stay as they
 * are), C updated in place (so an item computed twice or not at all changes its bits):
 *
 *   n EXPECT     EXPECT sliced: no cublasGemmEx reaches cuBLAS, four cublasLtMatmul slices of
 *                1024 columns do, with the handle (as a cuBLASLt one), its stream and workspace,
 *                the heuristic asked with that workspace and the pointers' alignments; whole:
 *                the application's cublasGemmEx, unchanged, and no heuristic asked
 *   batch EXPECT the batch: sliced, four slices of 8 items each (every pointer moved by its
 *                stride times the slice's first item, layouts of 8 items at the call's strides);
 *                first, the data are shown to catch a slice boundary off by one: the fake
 *                cuBLAS's own calls over items [0, 8) and [7, 32), or [0, 7) and [8, 32), must
 *                not give the whole call's C; whole: as for n
 *   batch_one    one item (the n case's GEMM through cublasGemmStridedBatchedEx, strides 0, which
 *                cuBLAS ignores for one item): sliced along n as cublasGemmEx, no batch layouts
 *   batch_n      two items of the n case's GEMM: four slices of 1024 columns of both items (more
 *                than two slices of one item each), every layout of two items at the strides
 *   refused      each setting or form the translation does not carry (one row each) forwards
 *                the application's cublasGemmEx unchanged, twice (so a call that was not
 *                refused for its form would have been learned, then sliced); the plain form
 *                slices before and after
 *   batch_refused the same for the batch's forms that are left whole: a stride of 0 (a
 *                broadcast) or less, items that overlap, C overlapping A, no items
 *   capture      whole, as called, while a stream capture is in progress; sliced after it
 *   capture_graph  learned eagerly, then called in a capture of its own stream between kernels,
 *                with graph gates on (GPUPRIO_GRAPH_GATE_US): the capture holds four cuBLASLt
 *                slices (no cublasGemmEx) as kernel nodes; the graph, instantiated and launched
 *                three times (each launch's time learned before the next), gives C bit for bit
 *                each time, and in the last launch (the gated copy) each slice follows a wait node
 *   fail_slice   FAKE_CUBLASLT_FAIL_AFTER=1: the second slice fails; its status is the call's
 *                and no later slice is issued
 *   fork_held    a thread of the program's own holds gpuprio's lock of the workspaces set on
 *                handles (cuda_gemmex.c) while the program forks (held_lock.h); the child runs
 *                n sliced on a stream of its own (its handle's workspace set, the call learned,
 *                then sliced), which must end within 60 s
 *   hot          a benchmark, not a test: prints the time of cublasSetStream_v2 and
 *                cublasSetWorkspace_v2, as PyTorch calls them before every matmul, through the
 *                shim and straight to the fake cuBLAS (each call must succeed)
 *   hot_gemm     a benchmark too: the time of an 8x8x8 cublasGemmEx, too small to slice, through
 *                the shim and straight to the fake cuBLAS (what every process pays per call
 *                while slicing is on; compare GPUPRIO_GEMM_SLICE_US=0)
 *
 * Prints "ok CASE" and exits 0, or FAIL lines and exits 1.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../expect.h"
#include "cuda_must.h"
#include "fake_cublas.h"
#include "fake_cublaslt.h"
#include "gemm_hold.h"
#include "held_lock.h"

#define OP_C 2
#define NOT_SUPPORTED 15
#define EXECUTION_FAILED 13

/* The two shapes: the plain GEMM's, and the batch's (its items' and how many). */
struct dims {
    int m, n, k, lda, ldb, ldc;
    bool batched; /* cublasGemmStridedBatchedEx's: its count and strides */
    int batch;
    long long stride_a, stride_b, stride_c;
    int slice_items; /* the plan's: slices of so many items, or (0) of 1024 columns */
};
#define PLAIN .m = 1024, .n = 4096, .k = 4, .lda = 1024 + 3, .ldb = 4096 + 1, .ldc = 1024 + 5
static const struct dims plain = {PLAIN};
/* 4.2 ms of the fake's time: four slices at GPUPRIO_GEMM_SLICE_US=1100 (the tests'). */
static const struct dims batch = {.m = 256,
                                  .n = 128,
                                  .k = 4,
                                  .lda = 256 + 3,
                                  .ldb = 128 + 1,
                                  .ldc = 256 + 5,
                                  .batched = true,
                                  .batch = 32,
                                  .stride_a = (256 + 3) * 4 + 7,
                                  .stride_b = (128 + 1) * 4 + 9,
                                  .stride_c = (256 + 5) * 128 + 11,
                                  .slice_items = 8};
/* Two items of the plain GEMM: two slices of one item each, or four along n of both. */
static const struct dims pair = {PLAIN,
                                 .batched = true,
                                 .batch = 2,
                                 .stride_a = (1024 + 3) * 4 + 3,
                                 .stride_b = (4096 + 1) * 4 + 5,
                                 .stride_c = (1024 + 5) * 4096 + 7};

struct gemm {
    struct dims d; /* the call's; its buffers hold the form's own */
    size_t a_count, b_count, c_count;
    cudahal_blas_handle handle;
    int32_t transa, transb, compute, algo;
    uint32_t Atype;
    float alpha, beta;
    float *a_buf, *A, *B, *C, *C0, *ref;
    char workspace[256];
};

static CUstream low;
static cudahal_pfn_cublasGemmEx fake_gemmex; /* the fake's own, around the shim */
static cudahal_pfn_cublasGemmStridedBatchedEx fake_batched;
static cudahal_pfn_cublasSetStream_v2 fake_set_stream;
static cudahal_pfn_cublasSetWorkspace_v2 fake_set_workspace;

static float *matrix(size_t count, unsigned seed)
{
    float *x = malloc(count * sizeof *x);
    if (!x)
        exit(1);
    for (size_t i = 0; i < count; i++) /* values of many exponents, so that sums are exact */
        x[i] = (float)((i * 2654435761u + seed) % 1000) / 64.0f - 7.8f;
    return x;
}

static void add_kernel(void **params)
{
    *(int *)params[0] += 1;
}

/* The low stream, joined by a kernel (so that it has a queue, held by gates). */
static void start(void)
{
    CUdevice dev;
    CUcontext ctx;
    MUST(cuInit(0));
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&low, 0));
    int sum = 0;
    void *params[] = {&sum};
    MUST(cuLaunchKernel((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, low, params, NULL));
    MUST(cuStreamSynchronize(low));
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    *(void **)&fake_gemmex = lib ? dlsym(lib, "cublasGemmEx") : NULL;
    *(void **)&fake_batched = lib ? dlsym(lib, "cublasGemmStridedBatchedEx") : NULL;
    *(void **)&fake_set_stream = lib ? dlsym(lib, "cublasSetStream_v2") : NULL;
    *(void **)&fake_set_workspace = lib ? dlsym(lib, "cublasSetWorkspace_v2") : NULL;
    if (!fake_gemmex || !fake_batched || !fake_set_stream || !fake_set_workspace) {
        printf("FATAL: the fake cuBLAS's own cublasGemmEx not found\n");
        exit(1);
    }
}

/* The call, through the shim (fake false) or straight to the fake cuBLAS: cublasGemmEx, or
 * cublasGemmStridedBatchedEx for a batch. */
static cudahal_lt_status call_with(bool fake, struct gemm *g)
{
    const struct dims *d = &g->d;
    if (!d->batched)
        return (fake ? fake_gemmex : cublasGemmEx)(g->handle, g->transa, g->transb, d->m, d->n,
                                                   d->k, &g->alpha, g->A, g->Atype, d->lda, g->B,
                                                   CUDAHAL_LT_R_32F, d->ldb, &g->beta, g->C,
                                                   CUDAHAL_LT_R_32F, d->ldc, g->compute, g->algo);
    return (fake ? fake_batched : cublasGemmStridedBatchedEx)(
        g->handle, g->transa, g->transb, d->m, d->n, d->k, &g->alpha, g->A, g->Atype, d->lda,
        d->stride_a, g->B, CUDAHAL_LT_R_32F, d->ldb, d->stride_b, &g->beta, g->C, CUDAHAL_LT_R_32F,
        d->ldc, d->stride_c, d->batch, g->compute, g->algo);
}

static void reset_c(struct gemm *g)
{
    memcpy(g->C, g->C0, g->c_count * sizeof(float));
}

/* The reference: C as the fake cuBLAS computes the call made straight to it, and its status. */
static cudahal_lt_status reference(struct gemm *g)
{
    reset_c(g);
    cudahal_lt_status st = call_with(true, g);
    memcpy(g->ref, g->C, g->c_count * sizeof(float));
    return st;
}

/* A handle on the low stream with the test's workspace (set after the stream: setting a
 * stream resets it). */
static void use_handle(struct gemm *g)
{
    MUST(cublasSetStream_v2(g->handle, low));
    MUST(cublasSetWorkspace_v2(g->handle, g->workspace, sizeof g->workspace));
}

/* Elements from a matrix's first to past its last item's last. */
static size_t elements(int rows, int cols, int ld, long long stride, int items)
{
    return (size_t)ld * (size_t)(cols - 1) + (size_t)rows +
           (items > 1 ? (size_t)stride * (size_t)(items - 1) : 0);
}

static void make(struct gemm *g, const struct dims *d)
{
    memset(g, 0, sizeof *g);
    g->d = *d;
    /* op(A) m x k as stored (N), B stored n x k (op T); every buffer as big as the form's. */
    g->a_count = elements(d->m, d->k, d->lda, d->stride_a, d->batch);
    g->b_count = elements(d->n, d->k, d->ldb, d->stride_b, d->batch);
    g->c_count = elements(d->m, d->n, d->ldc, d->stride_c, d->batch);
    g->transa = CUDAHAL_LT_OP_N;
    g->transb = CUDAHAL_LT_OP_T;
    g->compute = CUDAHAL_BLAS_COMPUTE_32F;
    g->algo = CUDAHAL_BLAS_GEMM_DEFAULT_TENSOR_OP;
    g->Atype = CUDAHAL_LT_R_32F;
    g->alpha = 1.5f;
    g->beta = 0.5f;
    g->a_buf = matrix(g->a_count + 1, 1);
    g->A = g->a_buf + 1; /* 4-byte aligned, not 256 as the heuristic would otherwise assume */
    g->B = matrix(g->b_count, 2);
    g->C0 = matrix(g->c_count, 3);
    g->C = malloc(g->c_count * sizeof(float));
    g->ref = malloc(g->c_count * sizeof(float));
    if (!g->C || !g->ref)
        exit(1);
    MUST(cublasCreate_v2(&g->handle));
    use_handle(g);
    MUST(reference(g));
}

static void drop(struct gemm *g)
{
    MUST(cublasDestroy_v2(g->handle));
    free(g->a_buf);
    free(g->B);
    free(g->C);
    free(g->C0);
    free(g->ref);
}

/* One call through the shim, C fresh, the fakes' records cleared: its status. */
static cudahal_lt_status call(struct gemm *g)
{
    reset_c(g);
    fake_cublas_reset();
    fake_cublaslt_reset();
    return call_with(false, g);
}

static bool c_right(const struct gemm *g)
{
    return memcmp(g->C, g->ref, g->c_count * sizeof(float)) == 0;
}

/* The fake cuBLAS's one call is the application's own, unchanged, through the entry point it
 * was made to, and cuBLASLt had none. */
static bool forwarded(const struct gemm *g, cudahal_lt_status st)
{
    const struct fake_gemmex_call *call = fake_cublas_call(0);
    const struct cudahal_gemmex_call *c = call ? &call->args : NULL;
    const struct dims *d = &g->d;
    bool batched = d->batched;
    return fake_cublas_calls() == 1 && fake_cublaslt_calls() == 0 && c && call->status == st &&
           c->handle == g->handle && c->transa == g->transa && c->transb == g->transb &&
           c->m == d->m && c->n == d->n && c->k == d->k && c->alpha == &g->alpha && c->A == g->A &&
           c->Atype == g->Atype && c->lda == d->lda && c->B == g->B &&
           c->Btype == CUDAHAL_LT_R_32F && c->ldb == d->ldb && c->beta == &g->beta &&
           c->C == g->C && c->Ctype == CUDAHAL_LT_R_32F && c->ldc == d->ldc &&
           c->compute == g->compute && c->algo == g->algo && c->batched == batched &&
           c->stride_a == (batched ? d->stride_a : 0) &&
           c->stride_b == (batched ? d->stride_b : 0) &&
           c->stride_c == (batched ? d->stride_c : 0) && c->batch_count == d->batch;
}

static void expect_whole(struct gemm *g)
{
    EXPECT(call(g) == CUDAHAL_LT_SUCCESS);
    EXPECT(forwarded(g, CUDAHAL_LT_SUCCESS));
    EXPECT(c_right(g));
}

/* The alignment the heuristic must be told of: of the matrix and, in a batch, of every item. */
static uint32_t alignment_of(const struct gemm *g, const void *p, long long stride)
{
    uintptr_t bits = (uintptr_t)p | (g->d.batch > 1 ? (uintptr_t)stride * sizeof(float) : 0);
    uint32_t a = 256;
    while (bits % a)
        a /= 2;
    return a;
}

/* The call's layouts of A, B, C and D were of `items` each at these strides (any, for one). */
static bool layouts_of(const struct fake_lt_call *c, int32_t items, const long long stride[4])
{
    for (int i = 0; i < 4; i++)
        if (c->batch[i] != items || (items > 1 && c->stride[i] != stride[i]))
            return false;
    return true;
}

/* The fake cuBLASLt's i-th call is slice i of four, on the handle's stream and workspace, C and
 * D the application's C moved to the slice: of a batch's items (each pointer moved by its
 * stride times the first item, every layout of the slice's items at the call's strides), or of
 * 1024 columns (of every item, each layout of the batch's items at the call's strides). */
static bool is_slice(int i, const struct gemm *g)
{
    const struct fake_lt_call *c = fake_cublaslt_call(i);
    const struct dims *d = &g->d;
    bool by_items = d->slice_items > 0;
    int32_t items = by_items ? d->slice_items : d->batched ? d->batch : 1;
    uint64_t first = (uint64_t)i * (by_items ? (uint64_t)d->slice_items : 1024);
    const long long strides[4] = {d->stride_a, d->stride_b, d->stride_c, d->stride_c};
    bool at = by_items
                  ? c && c->A == g->A + first * d->stride_a && c->B == g->B + first * d->stride_b &&
                        c->C == g->C + first * d->stride_c && c->n == (uint64_t)d->n
                  : c && c->A == g->A && c->B == g->B + first && c->C == g->C + first * d->ldc &&
                        c->n == 1024;
    at = at && layouts_of(c, items, strides);
    return at && c->status == CUDAHAL_LT_SUCCESS && c->handle == (cudahal_lt_handle)g->handle &&
           c->alpha == &g->alpha && c->beta == &g->beta && c->D == c->C &&
           c->workspace == g->workspace && c->workspace_size == sizeof g->workspace &&
           c->stream == low && c->m == (uint64_t)d->m;
}

static void expect_sliced(struct gemm *g)
{
    EXPECT(call(g) == CUDAHAL_LT_SUCCESS);
    EXPECT(fake_cublas_calls() == 0);
    EXPECT(fake_cublaslt_calls() == 4);
    for (int i = 0; i < 4; i++)
        if (!is_slice(i, g)) {
            printf("FAIL: call %d is not slice %d\n", i, i);
            failures++;
        }
    EXPECT(c_right(g));
    struct fake_lt_pref p = fake_cublaslt_last_pref();
    EXPECT(fake_cublaslt_heuristics() == 1 && p.max_workspace == sizeof g->workspace);
    EXPECT(p.align[0] == alignment_of(g, g->A, g->d.stride_a) && p.align[0] == 4);
    EXPECT(p.align[1] == alignment_of(g, g->B, g->d.stride_b) &&
           p.align[2] == alignment_of(g, g->C, g->d.stride_c) &&
           p.align[3] == alignment_of(g, g->C, g->d.stride_c));
}

/* C from two calls straight to the fake cuBLAS, over the batch's items [0, end) and
 * [start, batch): whether it is the whole call's. */
static bool items_give_ref(struct gemm *g, int end, int start)
{
    struct dims whole = g->d;
    const int ranges[2][2] = {{0, end}, {start, whole.batch}};
    reset_c(g);
    for (int r = 0; r < 2; r++) {
        g->d.batch = ranges[r][1] - ranges[r][0];
        float *A = g->A, *B = g->B, *C = g->C;
        g->A += ranges[r][0] * whole.stride_a;
        g->B += ranges[r][0] * whole.stride_b;
        g->C += ranges[r][0] * whole.stride_c;
        MUST(call_with(true, g));
        g->A = A, g->B = B, g->C = C;
    }
    g->d = whole;
    return c_right(g);
}

static void case_n(const struct dims *d, const char *expect)
{
    struct gemm g;
    make(&g, d);
    int w = d->slice_items;
    if (w) { /* a slice boundary one item off changes C: the item before it twice, or never */
        EXPECT(items_give_ref(&g, w, w));
        EXPECT(!items_give_ref(&g, w, w - 1));
        EXPECT(!items_give_ref(&g, w - 1, w));
    }
    expect_whole(&g); /* learned */
    if (!strcmp(expect, "sliced")) {
        expect_sliced(&g);
    } else {
        expect_whole(&g);
        EXPECT(fake_cublaslt_heuristics() == 0);
    }
    drop(&g);
}

/* ---- what the translation does not carry: each on or off ---- */

static void device_pointers(struct gemm *g, bool on)
{
    MUST(cublasSetPointerMode_v2(g->handle, on ? 1 : CUDAHAL_BLAS_POINTER_HOST));
}

static void atomics_allowed(struct gemm *g, bool on)
{
    MUST(cublasSetAtomicsMode(g->handle, on ? 1 : CUDAHAL_BLAS_ATOMICS_NOT_ALLOWED));
}

static void math(struct gemm *g, bool on, uint32_t mode)
{
    MUST(cublasSetMathMode(g->handle, on ? mode : CUDAHAL_BLAS_DEFAULT_MATH));
}

static void tf32_math(struct gemm *g, bool on)
{
    math(g, on, 3); /* CUBLAS_TF32_TENSOR_OP_MATH */
}

static void pedantic_math(struct gemm *g, bool on)
{
    math(g, on, 2);
}

static void no_reduced_precision(struct gemm *g, bool on)
{
    math(g, on, 16); /* CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION */
}

static void sm_count_target(struct gemm *g, bool on)
{
    MUST(cublasSetSmCountTarget(g->handle, on ? 2 : 0));
}

static void pedantic_compute(struct gemm *g, bool on)
{
    g->compute = on ? 69 : CUDAHAL_BLAS_COMPUTE_32F; /* CUBLAS_COMPUTE_32F_PEDANTIC */
}

static void tf32_compute(struct gemm *g, bool on)
{
    g->compute = on ? 77 : CUDAHAL_BLAS_COMPUTE_32F; /* CUBLAS_COMPUTE_32F_FAST_TF32 */
}

static void chosen_algo(struct gemm *g, bool on)
{
    g->algo = on ? 0 : CUDAHAL_BLAS_GEMM_DEFAULT_TENSOR_OP; /* CUBLAS_GEMM_ALGO0 */
}

static void mixed_types(struct gemm *g, bool on)
{
    g->Atype = on ? CUDAHAL_LT_R_16BF : CUDAHAL_LT_R_32F;
}

static void conjugate(struct gemm *g, bool on)
{
    g->transb = on ? OP_C : CUDAHAL_LT_OP_T;
}

/* The handle's stream set again: cuBLAS's own workspace pool, not one set on the handle. */
static void workspace_reset(struct gemm *g, bool on)
{
    if (on)
        MUST(cublasSetStream_v2(g->handle, low));
    else
        use_handle(g);
}

/* The handle destroyed and a new one made at the same address, never given a workspace; its
 * stream set around the shim, so that only cublasDestroy_v2 can have made gpuprio forget. */
static void workspace_of_destroyed(struct gemm *g, bool on)
{
    if (!on) {
        use_handle(g);
        return;
    }
    cudahal_blas_handle old = g->handle;
    MUST(cublasDestroy_v2(g->handle));
    MUST(cublasCreate_v2(&g->handle));
    MUST(fake_set_stream(g->handle, low));
    EXPECT(g->handle == old); /* else the row proves nothing */
}

static void heuristic_refuses(struct gemm *g, bool on)
{
    (void)g;
    fake_cublaslt_heuristic_answers(on ? NOT_SUPPORTED : CUDAHAL_LT_SUCCESS, 0);
}

static void heuristic_workspace_too_big(struct gemm *g, bool on)
{
    fake_cublaslt_heuristic_answers(CUDAHAL_LT_SUCCESS, on ? sizeof g->workspace + 1 : 0);
}

static void stream_unknown(struct gemm *g, bool on)
{
    (void)g;
    fake_cublas_fail(on ? "cublasGetStream_v2" : NULL);
}

static void math_unknown(struct gemm *g, bool on)
{
    (void)g;
    fake_cublas_fail(on ? "cublasGetMathMode" : NULL);
}

/* A form the translation does not carry: what it is, and how to set it on or off. */
struct form {
    const char *what;
    void (*set)(struct gemm *, bool);
    bool own_result; /* it computes another C than the plain form's (the fake's own, then) */
};

/* Each form of forms, on a GEMM whose plain form slices, forwarded unchanged twice, returning
 * the fake cuBLAS's status and, when that is success, its C (for a form of its own result, what
 * the fake computes for that form, made straight to it); then the plain form slices again. */
static void refuse_each(const struct dims *d, const struct form *forms, size_t count)
{
    struct gemm g;
    make(&g, d);
    float *plain_ref = malloc(g.c_count * sizeof(float));
    if (!plain_ref)
        exit(1);
    memcpy(plain_ref, g.ref, g.c_count * sizeof(float));
    expect_whole(&g);
    expect_sliced(&g); /* the plain form slices */
    for (size_t i = 0; i < count; i++) {
        forms[i].set(&g, true);
        cudahal_lt_status want = forms[i].own_result ? reference(&g) : CUDAHAL_LT_SUCCESS;
        for (int twice = 0; twice < 2; twice++) {
            cudahal_lt_status st = call(&g);
            bool ok = (!forms[i].own_result || st == want) && forwarded(&g, st) &&
                      (st != CUDAHAL_LT_SUCCESS || c_right(&g));
            if (!ok)
                printf("FAIL %s: not forwarded whole as called (status %d; %d calls to cuBLAS, %d "
                       "cublasLtMatmul)\n",
                       forms[i].what, st, fake_cublas_calls(), fake_cublaslt_calls());
            failures += !ok;
        }
        forms[i].set(&g, false);
        memcpy(g.ref, plain_ref, g.c_count * sizeof(float));
    }
    free(plain_ref);
    expect_sliced(&g);
    drop(&g);
}

static void case_refused(void)
{
    static const struct form forms[] = {
        {"device pointer mode", device_pointers, false},
        {"atomics allowed", atomics_allowed, false},
        {"TF32 math mode", tf32_math, false},
        {"pedantic math mode", pedantic_math, false},
        {"math mode with another bit", no_reduced_precision, false},
        {"an SM count target", sm_count_target, false},
        {"pedantic compute type", pedantic_compute, false},
        {"TF32 compute type", tf32_compute, false},
        {"an algorithm chosen", chosen_algo, false},
        {"A and B bf16, C float", mixed_types, false},
        {"op(B) conjugate", conjugate, false},
        {"workspace reset by a stream", workspace_reset, false},
        {"a new handle where one was destroyed", workspace_of_destroyed, false},
        {"the heuristic refuses", heuristic_refuses, false},
        {"the heuristic's algorithm needs more workspace", heuristic_workspace_too_big, false},
        {"the stream query fails", stream_unknown, false},
        {"the math mode query fails", math_unknown, false},
    };
    refuse_each(&plain, forms, sizeof forms / sizeof *forms);
}

/* ---- a batch's forms that stay whole ---- */

static void a_broadcast(struct gemm *g, bool on)
{
    g->d.stride_a = on ? 0 : batch.stride_a;
}

static void b_broadcast(struct gemm *g, bool on)
{
    g->d.stride_b = on ? 0 : batch.stride_b;
}

static void c_stride_0(struct gemm *g, bool on)
{
    g->d.stride_c = on ? 0 : batch.stride_c;
}

/* A's items from its last backwards. */
static void a_backwards(struct gemm *g, bool on)
{
    g->A += (on ? 1 : -1) * (batch.batch - 1) * batch.stride_a;
    g->d.stride_a = on ? -batch.stride_a : batch.stride_a;
}

/* Each item one element less apart than an item's extent. */
static void c_items_overlap(struct gemm *g, bool on)
{
    g->d.stride_c = on ? (long long)batch.ldc * (batch.n - 1) + batch.m - 1 : batch.stride_c;
}

static void a_items_overlap(struct gemm *g, bool on)
{
    g->d.stride_a = on ? (long long)batch.lda * (batch.k - 1) + batch.m - 1 : batch.stride_a;
}

/* A read from within C's extent: its items inside C's sixth (whose first column C's first
 * item does not reach). */
static void c_overlaps_a(struct gemm *g, bool on)
{
    static float *a_apart;
    if (on)
        a_apart = g->A;
    g->A = on ? g->C + 5 * batch.stride_c + batch.m : a_apart;
}

static void no_items(struct gemm *g, bool on)
{
    g->d.batch = on ? 0 : batch.batch;
}

static void negative_count(struct gemm *g, bool on)
{
    g->d.batch = on ? -1 : batch.batch;
}

static void case_batch_refused(void)
{
    static const struct form forms[] = {
        {"A broadcast (stride 0)", a_broadcast, true},
        {"B broadcast (stride 0)", b_broadcast, true},
        {"C's items at stride 0", c_stride_0, true},
        {"A at a negative stride", a_backwards, true},
        {"C's items overlapping", c_items_overlap, true},
        {"A's items overlapping", a_items_overlap, true},
        {"C overlapping A", c_overlaps_a, true},
        {"no items", no_items, true},
        {"a negative count", negative_count, true},
        {"TF32 compute type", tf32_compute, false},
        {"the heuristic refuses", heuristic_refuses, false},
    };
    refuse_each(&batch, forms, sizeof forms / sizeof *forms);
}

/* ---- a capture, a failure ---- */

static void case_capture(void)
{
    struct gemm g;
    CUstream cap;
    CUgraph graph;
    MUST(cuStreamCreate(&cap, 0));
    make(&g, &plain);
    expect_whole(&g); /* learned */
    MUST(cuStreamBeginCapture_v2(cap, CU_STREAM_CAPTURE_MODE_GLOBAL));
    expect_whole(&g);
    MUST(cuStreamEndCapture(cap, &graph));
    expect_sliced(&g);
    drop(&g);
}

int fake_cuda_graph_last_run(CUfunction *funcs, int *after_wait, int max);

#define SHORTS 3
static int shorts_ran;
static void *shorts_params[] = {&shorts_ran}; /* a captured kernel keeps this array */

static void launch_shorts(void)
{
    for (int i = 0; i < SHORTS; i++)
        MUST(cuLaunchKernel((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, low, shorts_params,
                            NULL));
}

static void case_capture_graph(void)
{
    struct gemm g;
    CUgraph graph;
    CUgraphExec exec;
    make(&g, &plain);
    expect_whole(&g); /* learned */
    reset_c(&g);
    fake_cublas_reset();
    fake_cublaslt_reset();
    MUST(cuStreamBeginCapture_v2(low, CU_STREAM_CAPTURE_MODE_GLOBAL));
    launch_shorts();
    EXPECT(call_with(false, &g) == CUDAHAL_LT_SUCCESS);
    launch_shorts();
    MUST(cuStreamEndCapture(low, &graph));
    EXPECT(fake_cublas_calls() == 0 && fake_cublaslt_calls() == 4);
    for (int i = 0; i < 4; i++)
        EXPECT(is_slice(i, &g));
    size_t nodes = 0;
    MUST(cuGraphGetNodes(graph, NULL, &nodes));
    EXPECT(nodes == 2 * SHORTS + 4);
    MUST(cuGraphInstantiateWithFlags(&exec, graph, 0));
    MUST(cuGraphDestroy(graph));
    int (*drain)(void *, unsigned) =
        (int (*)(void *, unsigned))dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    for (int launch = 0; launch < 3; launch++) {
        reset_c(&g);
        MUST(cuGraphLaunch(exec, low));
        MUST(cuStreamSynchronize(low));
        EXPECT(c_right(&g));
        if (drain) /* learned before the next launch (not from the first after a capture) */
            EXPECT(drain(low, 10000) == 0);
    }
    EXPECT(shorts_ran == 3 * 2 * SHORTS);
    CUfunction funcs[2 * SHORTS + 4];
    int after_wait[2 * SHORTS + 4], slices = 0, gated = 0;
    int n = fake_cuda_graph_last_run(funcs, after_wait, 2 * SHORTS + 4);
    for (int i = 0; i < n; i++)
        if (funcs[i] != (CUfunction)(void *)add_kernel) {
            slices++;
            gated += after_wait[i];
        }
    printf("last launch: %d kernel nodes, %d slices, %d of them after a wait node\n", n, slices,
           gated);
    EXPECT(n == 2 * SHORTS + 4 && slices == 4 && gated == 4);
    MUST(cuGraphExecDestroy(exec));
    drop(&g);
}

static void case_fail_slice(void)
{
    struct gemm g;
    make(&g, &plain);
    expect_whole(&g); /* learned; cuBLAS's own GEMM, which the fake cuBLASLt does not count */
    EXPECT(call(&g) == EXECUTION_FAILED);
    EXPECT(fake_cublas_calls() == 0 && fake_cublaslt_calls() == 2);
    EXPECT(is_slice(0, &g));
    const struct fake_lt_call *second = fake_cublaslt_call(1);
    EXPECT(second && second->status == EXECUTION_FAILED);
    drop(&g);
}

/* ---- the cost of the calls PyTorch makes before every matmul ---- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per cublasSetStream_v2 + cublasSetWorkspace_v2 pair over `rounds` pairs. */
static double pair_ns(cudahal_pfn_cublasSetStream_v2 set_stream,
                      cudahal_pfn_cublasSetWorkspace_v2 set_workspace, struct gemm *g, int rounds)
{
    double t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        failures += set_stream(g->handle, low) != CUDAHAL_LT_SUCCESS;
        failures +=
            set_workspace(g->handle, g->workspace, sizeof g->workspace) != CUDAHAL_LT_SUCCESS;
    }
    return (now_ns() - t0) / rounds;
}

static void case_hot(void)
{
    enum { ROUNDS = 1000000 };
    struct gemm g;
    make(&g, &plain);
    for (int run = 0; run < 3; run++)
        printf("set stream + workspace: %.1f ns through gpuprio, %.1f ns straight to cuBLAS\n",
               pair_ns(cublasSetStream_v2, cublasSetWorkspace_v2, &g, ROUNDS),
               pair_ns(fake_set_stream, fake_set_workspace, &g, ROUNDS));
    drop(&g);
}

/* ns per cublasGemmEx of a GEMM too small to slice (m, n, k 8), through the shim (fake false)
 * or straight to the fake cuBLAS: what every process pays per call while slicing is on. */
static double gemm_ns(bool fake, struct gemm *g, int rounds)
{
    double t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        failures += call_with(fake, g) != CUDAHAL_LT_SUCCESS;
        if (!fake)
            fake_cublas_reset(); /* the fake's record of calls is bounded */
    }
    return (now_ns() - t0) / rounds;
}

static void case_hot_gemm(void)
{
    enum { ROUNDS = 200000 };
    static const struct dims tiny = {.m = 8, .n = 8, .k = 8, .lda = 8, .ldb = 8, .ldc = 8};
    struct gemm g;
    make(&g, &tiny);
    for (int run = 0; run < 3; run++) {
        double through = gemm_ns(false, &g, ROUNDS), straight = gemm_ns(true, &g, ROUNDS);
        printf("cublasGemmEx 8x8x8: %.1f ns through gpuprio, %.1f ns straight to cuBLAS\n", through,
               straight);
    }
    drop(&g);
}

/* Built as a library too, for gemm_local.c, whose main calls this one. */
/* fork_held's child: a stream of its own joined (as start's), then n sliced. */
static int n_child(void)
{
    MUST(cuStreamCreate(&low, 0));
    int sum = 0;
    void *params[] = {&sum};
    MUST(cuLaunchKernel((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, low, params, NULL));
    MUST(cuStreamSynchronize(low));
    case_n(&plain, "sliced");
    printf("child: n sliced done\n");
    return failures ? 1 : 0;
}

static void case_fork_held(void)
{
    const char *fail = held_lock_fork("cuda_gemmex.c", "workspaces_mu", 60, n_child);
    if (fail) {
        printf("FAIL fork_held (workspaces_mu): %s\n", fail);
        failures++;
    }
}

#ifdef GEMM_SLICES_LIBRARY
int gemm_slices_main(int argc, char **argv);
#define main gemm_slices_main
#endif

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    start();
    struct dims one = plain; /* cublasGemmStridedBatchedEx of one item, strides 0 */
    one.batched = true;
    one.batch = 1;
    if (!strcmp(what, "n") && argc > 2)
        case_n(&plain, argv[2]);
    else if (!strcmp(what, "batch") && argc > 2)
        case_n(&batch, argv[2]);
    else if (!strcmp(what, "batch_one"))
        case_n(&one, "sliced");
    else if (!strcmp(what, "batch_n"))
        case_n(&pair, "sliced");
    else if (!strcmp(what, "refused"))
        case_refused();
    else if (!strcmp(what, "batch_refused"))
        case_batch_refused();
    else if (!strcmp(what, "capture"))
        case_capture();
    else if (!strcmp(what, "capture_graph"))
        case_capture_graph();
    else if (!strcmp(what, "fail_slice"))
        case_fail_slice();
    else if (!strcmp(what, "fork_held"))
        case_fork_held();
    else if (!strcmp(what, "hot"))
        case_hot();
    else if (!strcmp(what, "hot_gemm"))
        case_hot_gemm();
    else {
        fprintf(stderr, "usage: gemmex_slices n|batch sliced|whole|batch_one|refused|"
                        "batch_n|batch_refused|capture|capture_graph|fail_slice|fork_held|hot|"
                        "hot_gemm\n");
        return 2;
    }
    if (!failures)
        printf("ok %s\n", what);
    gemm_hold();
    return failures ? 1 : 0;
}
