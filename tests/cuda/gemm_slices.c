/*
 * gemm_slices.c - gpuprio's GEMM slices over the fake driver and the fake cuBLASLt
 * (fake_cublaslt.c), run by gemm.sh under libgpuprio-cuda.so.
 *
 *   gemm_slices CASE [EXPECT]
 *
 * The process runs at low priority, its stream joined by a kernel, next to a high-priority
 * process on the same device (gemm.sh with GEMM_HIGH=1) or alone. A GEMM on its stream is
 * called twice: the
 * first call is whole (its time is not known yet; the fake takes 1 ns per multiply-add, so it is
 * learned exactly), the second as the plan says. Each call's D must equal, bit for bit, what the
 * fake computes for the whole call made directly (not through the shim), and every call the
 * fake received is checked against what the application passed or what the plan gives:
 *
 *   n EXPECT        1024 x 4096 x 4, op(B) transposed, C apart from D: EXPECT sliced (four
 *                   slices of 1024 columns), whole, or checked_whole (whole although the
 *                   algorithm was checked on a slice: FAKE_CUBLASLT_CHECK_FAIL)
 *   m_bias          4096 x 1024 x 4, op(A) transposed, bias, C is D: four slices of 1024 rows,
 *                   the bias moved with them
 *   m_int8 EXPECT   4096 x 256 x 16 (one tile of columns: only rows can be cut), A and B int8, a
 *                   bias. EXPECT whole: the bias's type left to cuBLASLt, whose rule for integer
 *                   kernels gpuprio does not know, so the bias cannot be moved (rows_fixed): the
 *                   call is forwarded as called, counted as a form that does not slice exactly;
 *                   sliced: the bias's type set to bf16 (two bytes, where D's are four), four
 *                   slices of 1024 rows, the bias moved by its own elements
 *   n_int8          the n case's GEMM with A and B int8 and a bias of cuBLASLt's type: four
 *                   slices of 1024 columns (rows_fixed leaves n), B moved by int8 elements
 *   splitk S EXPECT the n case's GEMM on 132 SMs (the descriptor's SM count target), its
 *                   algorithm splitting k in S: 128 tiles, times S CTAs. S = 3: three waves,
 *                   no slice of two, but four of 1024 columns (a wave each) are within 4/3 of
 *                   the whole's: EXPECT sliced. S = 1: one wave, any cut doubles it: whole
 *   refused         each form that does not slice exactly, on a GEMM whose plain form slices,
 *                   is forwarded whole with the application's own arguments
 *   capture         whole while a stream capture is in progress (of another stream: with
 *                   GPUPRIO_GRAPH_GATE_US set too), sliced after it
 *   capture_graph EXPECT  1024 x 4096 x 1 (4.2 ms on the fake) learned eagerly, then captured on
 *                   its own stream between SHORTS kernels before and after; the graph is
 *                   instantiated, the application's graph destroyed, and the executable graph
 *                   launched three times (each one's time learned before the next), D
 *                   bit-identical to the whole call's after each replay. EXPECT sliced (graph
 *                   gates on, GPUPRIO_GEMM_SLICE_US=1000 and GPUPRIO_GRAPH_GATE_US=1000): the
 *                   capture holds the four slices as kernel nodes, and in the last replay (the
 *                   gated copy) each of them, and the kernel after the last, follows a wait
 *                   node; whole (graph gates off): one kernel node for the GEMM, as called, and
 *                   no wait node anywhere
 *   fail_slice      FAKE_CUBLASLT_FAIL_AFTER=3: the second slice fails; its status is returned
 *                   and no later slice is issued
 *   fail_whole      FAKE_CUBLASLT_FAIL_AFTER=1: the whole call's failure is returned
 *   workspace       the n case's GEMM with a workspace that every slice has enough of but the
 *                   whole call has not (fake_cublaslt_workspace_need): forwarded as called, the
 *                   fake's refusal returned, as without gpuprio; sliced again with all of it
 *   reset           the n case's GEMM timed, the primary context reset and retained again, the
 *                   GEMM on a new stream: no event of the dead context used (the fake driver
 *                   counts such uses), D right
 *   relearn         1024 x 4096 x 1 (4.2 ms on the fake, under GPUPRIO_GEMM_SLICE_US=5000) whose
 *                   first, timed call waits 8 ms more: learned 12.2 ms, it is cut in two; a timed
 *                   sliced call (the clock's every 64th) brings the learned time down, and the
 *                   calls after it are whole, as short ones
 *   fork            capture, then a forked child makes one call of a form that does not slice
 *                   (no algorithm) on a stream of its own: the child prints "pid PID" and is
 *                   the one held (GEMM_HOLD), then ends with _exit; the parent waits for it;
 *                   gemm.sh checks the child's record, which must count its own call only
 *   fork_held LOCK  a thread of the program's own holds gpuprio's lock LOCK (forms: the GEMM
 *                   forms read before, cuda_gemm.c; times: the learned times, cuda_gemm_clock.c;
 *                   node_times: the notes of captured nodes' times, cuda_node_time.c; graphs:
 *                   the executable graphs known, graph.c) while the program forks
 *                   (held_lock.h); the child runs capture_graph sliced on a stream of its own (a
 *                   GEMM read, learned, captured in slices whose nodes are noted, the graph
 *                   instantiated and launched), which must end within 60 s
 *
 * Prints "ok CASE" and exits 0, or FAIL lines and exits 1.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../expect.h"
#include "cuda_gemm_clock.h"
#include "cuda_must.h"
#include "fake_cublaslt.h"
#include "gemm_hold.h"
#include "held_lock.h"

#define TILE_128x256 23
#define INVALID_VALUE 7
#define EXECUTION_FAILED 13

struct gemm {
    uint64_t m, n, k;
    bool ta, tb, in_place;
    int64_t lda, ldb, ldc, ldd;
    float *A, *B, *C, *D, *D0, *bias, alpha, beta;
    size_t ab_esize; /* what A and B's layouts say their elements are: float, or int8 (as_int8) */
    const void *bias_in_desc; /* the descriptor's bias: bias (float), another's, or NULL */
    size_t bias_esize;        /* and the size of its elements */
    cudahal_lt_handle handle;
    cudahal_lt_layout_opaque *la, *lb, *lc, *ld;
    cudahal_lt_desc_opaque *desc;
    cudahal_lt_algo algo;
    const cudahal_lt_algo *algo_arg; /* what calls pass: &algo, or NULL */
    char workspace[64];
    size_t workspace_size; /* what calls say they give: all of it, unless a case says less */
};

static CUstream low;
static cudahal_pfn_cublasLtMatmul fake_matmul; /* the fake's own, around the shim */

static void add_kernel(void **params)
{
    *(int *)params[0] += 1;
}

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
    void *lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD);
    *(void **)&fake_matmul = lib ? dlsym(lib, "cublasLtMatmul") : NULL;
    if (!fake_matmul) {
        printf("FATAL: the fake cuBLASLt's own cublasLtMatmul not found\n");
        exit(1);
    }
}

static float *matrix(uint64_t rows, uint64_t cols, int64_t ld, unsigned seed)
{
    size_t count = (size_t)ld * cols;
    float *x = malloc(count * sizeof *x);
    if (!x)
        exit(1);
    for (size_t i = 0; i < count; i++) /* values of many exponents, so that sums are exact */
        x[i] = (float)((i * 2654435761u + seed) % 1000) / 64.0f - 7.8f;
    (void)rows;
    return x;
}

static void make(struct gemm *g, uint64_t m, uint64_t n, uint64_t k, bool ta, bool tb,
                 uint32_t epilogue, bool in_place)
{
    memset(g, 0, sizeof *g);
    *g = (struct gemm){.m = m,
                       .n = n,
                       .k = k,
                       .ta = ta,
                       .tb = tb,
                       .in_place = in_place,
                       .ab_esize = sizeof(float),
                       .bias_esize = sizeof(float),
                       .alpha = 1.5f,
                       .beta = in_place ? 1.0f : 0.5f,
                       .workspace_size = sizeof g->workspace};
    uint64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    g->lda = (int64_t)ar + 3;
    g->ldb = (int64_t)br + 1;
    g->ldd = (int64_t)m + 5;
    g->ldc = in_place ? g->ldd : (int64_t)m + 2;
    g->A = matrix(ar, ac, g->lda, 1);
    g->B = matrix(br, bc, g->ldb, 2);
    g->D0 = matrix(m, n, g->ldd, 3);
    g->D = malloc((size_t)g->ldd * n * sizeof(float));
    g->C = in_place ? g->D : matrix(m, n, g->ldc, 4);
    g->bias = matrix(m, 1, (int64_t)m, 5);
    MUST(cublasLtCreate(&g->handle));
    MUST(cublasLtMatrixLayoutCreate(&g->la, CUDAHAL_LT_R_32F, ar, ac, g->lda));
    MUST(cublasLtMatrixLayoutCreate(&g->lb, CUDAHAL_LT_R_32F, br, bc, g->ldb));
    MUST(cublasLtMatrixLayoutCreate(&g->lc, CUDAHAL_LT_R_32F, m, n, g->ldc));
    MUST(cublasLtMatrixLayoutCreate(&g->ld, CUDAHAL_LT_R_32F, m, n, g->ldd));
    MUST(cublasLtMatmulDescCreate(&g->desc, FAKE_LT_COMPUTE_32F, CUDAHAL_LT_R_32F));
    int32_t opa = ta ? CUDAHAL_LT_OP_T : CUDAHAL_LT_OP_N, opb = tb ? CUDAHAL_LT_OP_T : 0;
    MUST(cublasLtMatmulDescSetAttribute(g->desc, CUDAHAL_LT_DESC_TRANSA, &opa, sizeof opa));
    MUST(cublasLtMatmulDescSetAttribute(g->desc, CUDAHAL_LT_DESC_TRANSB, &opb, sizeof opb));
    MUST(cublasLtMatmulDescSetAttribute(g->desc, CUDAHAL_LT_DESC_EPILOGUE, &epilogue,
                                        sizeof epilogue));
    const void *bias = epilogue & CUDAHAL_LT_EPILOGUE_BIAS ? g->bias : NULL;
    MUST(cublasLtMatmulDescSetAttribute(g->desc, CUDAHAL_LT_DESC_BIAS_POINTER, &bias, sizeof bias));
    g->bias_in_desc = bias;
    MUST(cublasLtMatmulAlgoInit(g->handle, FAKE_LT_COMPUTE_32F, CUDAHAL_LT_R_32F, CUDAHAL_LT_R_32F,
                                CUDAHAL_LT_R_32F, CUDAHAL_LT_R_32F, CUDAHAL_LT_R_32F, 21,
                                &g->algo));
    g->algo_arg = &g->algo;
    uint32_t tile = TILE_128x256;
    MUST(cublasLtMatmulAlgoConfigSetAttribute(&g->algo, CUDAHAL_LT_CONFIG_TILE_ID, &tile,
                                              sizeof tile));
}

/* A and B read as int8 from then on: their layouts made again, the same sizes, of CUDA_R_8I. */
static void as_int8(struct gemm *g)
{
    uint64_t ar = g->ta ? g->k : g->m, ac = g->ta ? g->m : g->k, br = g->tb ? g->n : g->k,
             bc = g->tb ? g->k : g->n;
    MUST(cublasLtMatrixLayoutDestroy(g->la));
    MUST(cublasLtMatrixLayoutDestroy(g->lb));
    MUST(cublasLtMatrixLayoutCreate(&g->la, CUDAHAL_LT_R_8I, ar, ac, g->lda));
    MUST(cublasLtMatrixLayoutCreate(&g->lb, CUDAHAL_LT_R_8I, br, bc, g->ldb));
    g->ab_esize = 1;
}

static void drop(struct gemm *g, float *ref)
{
    MUST(cublasLtMatrixLayoutDestroy(g->la));
    MUST(cublasLtMatrixLayoutDestroy(g->lb));
    MUST(cublasLtMatrixLayoutDestroy(g->lc));
    MUST(cublasLtMatrixLayoutDestroy(g->ld));
    MUST(cublasLtMatmulDescDestroy(g->desc));
    MUST(cublasLtDestroy(g->handle));
    if (!g->in_place)
        free(g->C);
    free(g->A);
    free(g->B);
    free(g->D);
    free(g->D0);
    free(g->bias);
    free(ref);
}

/* D back to its first contents (C's too, when C is D). */
static void reset_d(struct gemm *g)
{
    memcpy(g->D, g->D0, (size_t)g->ldd * g->n * sizeof(float));
}

static cudahal_lt_status call_with(cudahal_pfn_cublasLtMatmul fn, struct gemm *g, CUstream s)
{
    return fn(g->handle, g->desc, &g->alpha, g->A, g->la, g->B, g->lb, &g->beta, g->C, g->lc, g->D,
              g->ld, g->algo_arg, g->workspace, g->workspace_size, s);
}

/* What the fake computes for the whole call, made directly: a copy of D. */
static float *reference(struct gemm *g)
{
    reset_d(g);
    MUST(call_with(fake_matmul, g, low));
    size_t size = (size_t)g->ldd * g->n * sizeof(float);
    float *ref = malloc(size);
    if (!ref)
        exit(1);
    memcpy(ref, g->D, size);
    return ref;
}

/* The fake's i-th call is the application's own, unchanged. */
static bool as_called(int i, const struct gemm *g, CUstream s)
{
    const struct fake_lt_call *c = fake_cublaslt_call(i);
    return c && c->handle == g->handle && c->desc == g->desc && c->alpha == &g->alpha &&
           c->A == g->A && c->Adesc == g->la && c->B == g->B && c->Bdesc == g->lb &&
           c->beta == &g->beta && c->C == g->C && c->Cdesc == g->lc && c->D == g->D &&
           c->Ddesc == g->ld && c->algo == g->algo_arg && c->workspace == g->workspace &&
           c->workspace_size == g->workspace_size && c->stream == s;
}

/* The fake's i-th call is slice i of 1024 along n (columns) or m (rows). */
static bool is_slice(int i, const struct gemm *g, bool along_n)
{
    const struct fake_lt_call *c = fake_cublaslt_call(i);
    uint64_t first = (uint64_t)i * 1024;
    if (!c)
        return false;
    const char *a = (const char *)g->A, *b = (const char *)g->B;
    bool same = c->handle == g->handle && c->alpha == &g->alpha && c->beta == &g->beta &&
                c->algo == &g->algo && c->workspace == g->workspace && c->stream == low;
    if (along_n)
        return same && c->desc == g->desc && c->m == g->m && c->n == 1024 && c->A == g->A &&
               c->Adesc == g->la &&
               (const char *)c->B == b + (g->tb ? first : first * g->ldb) * g->ab_esize &&
               c->C == g->C + first * g->ldc && c->D == g->D + first * g->ldd;
    bool bias = g->bias_in_desc
                    ? (const char *)c->bias == (const char *)g->bias_in_desc + first * g->bias_esize
                    : !c->bias;
    return same && c->m == 1024 && c->n == g->n && c->B == g->B && c->Bdesc == g->lb &&
           (const char *)c->A == a + (g->ta ? first * g->lda : first) * g->ab_esize &&
           c->C == g->C + first && c->D == g->D + first && bias;
}

/* One call on the low stream, D fresh: its status. */
static cudahal_lt_status call_low(struct gemm *g)
{
    reset_d(g);
    fake_cublaslt_reset();
    return call_with(cublasLtMatmul, g, low);
}

static bool d_is(const struct gemm *g, const float *ref)
{
    return memcmp(g->D, ref, (size_t)g->ldd * g->n * sizeof(float)) == 0;
}

/* The first call: whole, the application's own, and right. */
static void learn(struct gemm *g, const float *ref)
{
    EXPECT(call_low(g) == CUDAHAL_LT_SUCCESS);
    EXPECT(fake_cublaslt_calls() == 1);
    EXPECT(as_called(0, g, low));
    EXPECT(d_is(g, ref));
}

static void expect_sliced(struct gemm *g, const float *ref, bool along_n, int slices)
{
    EXPECT(call_low(g) == CUDAHAL_LT_SUCCESS);
    EXPECT(fake_cublaslt_calls() == slices);
    for (int i = 0; i < slices; i++)
        EXPECT(is_slice(i, g, along_n));
    EXPECT(d_is(g, ref));
}

static void expect_whole(struct gemm *g, const float *ref)
{
    EXPECT(call_low(g) == CUDAHAL_LT_SUCCESS);
    EXPECT(fake_cublaslt_calls() == 1);
    EXPECT(as_called(0, g, low));
    EXPECT(d_is(g, ref));
}

/* The whole call's result, then the first call (whole, learned) and the second: four slices along
 * n (or m), or whole; g dropped after. */
static void learn_then(struct gemm *g, bool sliced, bool along_n)
{
    float *ref = reference(g);
    learn(g, ref);
    if (sliced)
        expect_sliced(g, ref, along_n, 4);
    else
        expect_whole(g, ref);
    drop(g, ref);
}

static void case_n(const char *expect)
{
    struct gemm g;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    learn(&g, ref);
    if (!strcmp(expect, "sliced")) {
        expect_sliced(&g, ref, true, 4);
    } else {
        expect_whole(&g, ref);
        EXPECT((fake_cublaslt_checks() > 0) == !strcmp(expect, "checked_whole"));
    }
    drop(&g, ref);
}

static void set_desc(struct gemm *g, uint32_t attr, uint64_t value, size_t size);

static void case_splitk(const char *splits, const char *expect)
{
    struct gemm g;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    set_desc(&g, CUDAHAL_LT_DESC_SM_COUNT_TARGET, 132, 4);
    uint32_t parts = (uint32_t)atoi(splits);
    MUST(cublasLtMatmulAlgoConfigSetAttribute(&g.algo, CUDAHAL_LT_CONFIG_SPLITK_NUM, &parts,
                                              sizeof parts));
    learn_then(&g, !strcmp(expect, "sliced"), true);
}

static void case_m_bias(void)
{
    struct gemm g;
    make(&g, 4096, 1024, 4, true, false, CUDAHAL_LT_EPILOGUE_BIAS, true);
    float *ref = reference(&g);
    learn(&g, ref);
    expect_sliced(&g, ref, false, 4);
    /* The application's descriptor still has its own bias (the slices moved a copy's). */
    const void *bias = NULL;
    size_t written;
    MUST(cublasLtMatmulDescGetAttribute(g.desc, CUDAHAL_LT_DESC_BIAS_POINTER, &bias, sizeof bias,
                                        &written));
    EXPECT(bias == g.bias);
    drop(&g, ref);
}

static void case_m_int8(const char *expect)
{
    struct gemm g;
    make(&g, 4096, 256, 16, true, false, CUDAHAL_LT_EPILOGUE_BIAS, true);
    as_int8(&g);
    bool sliced = !strcmp(expect, "sliced");
    EXPECT(sliced || !strcmp(expect, "whole"));
    uint16_t bf16[4096]; /* the float bias's top halves, for a bias of its own type */
    if (sliced) {
        for (size_t i = 0; i < 4096; i++) {
            uint32_t bits;
            memcpy(&bits, &g.bias[i], sizeof bits);
            bf16[i] = (uint16_t)(bits >> 16);
        }
        set_desc(&g, CUDAHAL_LT_DESC_BIAS_POINTER, (uintptr_t)bf16, sizeof(void *));
        set_desc(&g, CUDAHAL_LT_DESC_BIAS_DATA_TYPE, CUDAHAL_LT_R_16BF, 4);
        g.bias_in_desc = bf16;
        g.bias_esize = sizeof bf16[0];
    }
    learn_then(&g, sliced, false);
}

static void case_n_int8(void)
{
    struct gemm g;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_BIAS, false);
    as_int8(&g);
    learn_then(&g, true, true);
}

/* ---- forms that do not slice exactly: each on or off ---- */

static void set_desc(struct gemm *g, uint32_t attr, uint64_t value, size_t size)
{
    MUST(cublasLtMatmulDescSetAttribute(g->desc, attr, &value, size));
}

static void set_layout(cudahal_lt_layout_opaque *l, uint32_t attr, uint64_t value, size_t size)
{
    MUST(cublasLtMatrixLayoutSetAttribute(l, attr, &value, size));
}

static void no_algo(struct gemm *g, bool on)
{
    g->algo_arg = on ? NULL : &g->algo;
}

static void row_order(struct gemm *g, bool on)
{
    set_layout(g->ld, CUDAHAL_LT_LAYOUT_ORDER, on, 4);
}

static void batched(struct gemm *g, bool on)
{
    set_layout(g->la, CUDAHAL_LT_LAYOUT_BATCH_COUNT, on ? 2 : 1, 4);
}

static void planar(struct gemm *g, bool on)
{
    set_layout(g->la, CUDAHAL_LT_LAYOUT_PLANE_OFFSET, on ? 64 : 0, 8);
}

static void aux_epilogue(struct gemm *g, bool on)
{
    set_desc(g, CUDAHAL_LT_DESC_EPILOGUE, on ? 32 | 128 : CUDAHAL_LT_EPILOGUE_DEFAULT, 4);
}

static void bgrad_epilogue(struct gemm *g, bool on)
{
    set_desc(g, CUDAHAL_LT_DESC_EPILOGUE, on ? 512 : CUDAHAL_LT_EPILOGUE_DEFAULT, 4);
}

static void amax(struct gemm *g, bool on)
{
    set_desc(g, CUDAHAL_LT_DESC_AMAX_D_POINTER, on ? (uintptr_t)g->workspace : 0, 8);
}

static void block_scales(struct gemm *g, bool on)
{
    set_desc(g, CUDAHAL_LT_DESC_A_SCALE_MODE, on ? 2 : 0, 4);
}

static void alpha_vector(struct gemm *g, bool on)
{
    set_desc(g, CUDAHAL_LT_DESC_POINTER_MODE, on ? 2 : 0, 4);
}

static void emulated(struct gemm *g, bool on)
{
    set_desc(g, CUDAHAL_LT_DESC_EMULATION, on ? (uintptr_t)g->workspace : 0, 8);
}

/* Compute types whose emulation cuBLASLt decides for the problem as a whole, and one it does not
 * know. */
static void compute_type(struct gemm *g, bool on, uint64_t type)
{
    set_desc(g, CUDAHAL_LT_DESC_COMPUTE_TYPE, on ? type : FAKE_LT_COMPUTE_32F, 4);
}

static void emulated_bf16x9(struct gemm *g, bool on)
{
    compute_type(g, on, 78); /* CUBLAS_COMPUTE_32F_EMULATED_16BFX9 */
}

static void emulated_fixed_point(struct gemm *g, bool on)
{
    compute_type(g, on, 79); /* CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT */
}

static void unknown_compute(struct gemm *g, bool on)
{
    compute_type(g, on, 1000);
}

static void lower_fill(struct gemm *g, bool on)
{
    set_desc(g, CUDAHAL_LT_DESC_FILL_MODE, on ? 0 : CUDAHAL_LT_FILL_FULL, 4);
}

/* C one element after D, with D's leading dimension: they overlap without being the same. */
static void c_overlaps_d(struct gemm *g, bool on)
{
    static float *c_apart;
    if (on)
        c_apart = g->C;
    g->C = on ? g->D + 1 : c_apart;
    set_layout(g->lc, CUDAHAL_LT_LAYOUT_LD, (uint64_t)(on ? g->ldd : g->ldc), 8);
}

static void case_refused(void)
{
    static const struct {
        const char *what;
        void (*set)(struct gemm *, bool);
    } forms[] = {
        {"no algorithm", no_algo},
        {"row-major D", row_order},
        {"batch of 2", batched},
        {"planar complex", planar},
        {"GELU_AUX epilogue", aux_epilogue},
        {"BGRADB epilogue", bgrad_epilogue},
        {"amax of D", amax},
        {"block scales of A", block_scales},
        {"alpha vector", alpha_vector},
        {"emulation", emulated},
        {"compute type 32F_EMULATED_16BFX9", emulated_bf16x9},
        {"compute type 64F_EMULATED_FIXEDPOINT", emulated_fixed_point},
        {"a compute type cuBLASLt 13 does not have", unknown_compute},
        {"lower fill", lower_fill},
        {"C overlapping D", c_overlaps_d},
    };
    struct gemm g;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    learn(&g, ref);
    expect_sliced(&g, ref, true, 4); /* the plain form slices */
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        forms[i].set(&g, true);
        cudahal_lt_status st = call_low(&g);
        const struct fake_lt_call *c = fake_cublaslt_call(0);
        if (fake_cublaslt_calls() != 1 || !as_called(0, &g, low) || !c || c->status != st)
            printf("FAIL %s: not forwarded whole as called (%d calls)\n", forms[i].what,
                   fake_cublaslt_calls());
        failures += fake_cublaslt_calls() != 1 || !as_called(0, &g, low) || !c || c->status != st;
        forms[i].set(&g, false);
    }
    expect_sliced(&g, ref, true, 4);
    drop(&g, ref);
}

/* ---- a GEMM in a captured graph ---- */

int fake_cuda_graph_last_run(CUfunction *funcs, int *after_wait, int max);

#define SHORTS 200
static int shorts_ran;
static void *shorts_params[] = {&shorts_ran}; /* a captured kernel keeps this array */

static void launch_shorts(void)
{
    for (int i = 0; i < SHORTS; i++)
        MUST(cuLaunchKernel((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, low, shorts_params,
                            NULL));
}

static void case_capture_graph(const char *expect)
{
    bool sliced = !strcmp(expect, "sliced");
    int gemms = sliced ? 4 : 1;
    struct gemm g;
    CUgraph graph;
    CUgraphExec exec;
    make(&g, 1024, 4096, 1, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    learn(&g, ref);
    reset_d(&g);
    fake_cublaslt_reset();
    MUST(cuStreamBeginCapture_v2(low, CU_STREAM_CAPTURE_MODE_GLOBAL));
    launch_shorts();
    EXPECT(call_with(cublasLtMatmul, &g, low) == CUDAHAL_LT_SUCCESS);
    launch_shorts();
    MUST(cuStreamEndCapture(low, &graph));
    EXPECT(fake_cublaslt_calls() == gemms);
    for (int i = 0; i < gemms; i++)
        EXPECT(sliced ? is_slice(i, &g, true) : as_called(0, &g, low));
    size_t nodes = 0;
    MUST(cuGraphGetNodes(graph, NULL, &nodes));
    EXPECT(nodes == (size_t)(2 * SHORTS + gemms));
    EXPECT(shorts_ran == 0 && d_is(&g, g.D0)); /* a capture runs nothing */
    MUST(cuGraphInstantiateWithFlags(&exec, graph, 0));
    MUST(cuGraphDestroy(graph));
    int (*drain)(void *, unsigned) =
        (int (*)(void *, unsigned))dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    for (int launch = 0; launch < 3; launch++) {
        reset_d(&g);
        shorts_ran = 0;
        MUST(cuGraphLaunch(exec, low));
        MUST(cuStreamSynchronize(low));
        EXPECT(d_is(&g, ref) && shorts_ran == 2 * SHORTS);
        /* Its time learned before the next launch (the watcher learns nothing from the first
         * completion after a capture: the third launch is the first that can be gated). */
        if (drain)
            EXPECT(drain(low, 10000) == 0);
    }
    CUfunction funcs[2 * SHORTS + 8];
    int after_wait[2 * SHORTS + 8], gemm_kernels = 0, gemms_gated = 0, waits = 0;
    int n = fake_cuda_graph_last_run(funcs, after_wait, 2 * SHORTS + 8);
    EXPECT(n == 2 * SHORTS + gemms);
    for (int i = 0; i < n; i++) {
        bool gemm = funcs[i] != (CUfunction)(void *)add_kernel;
        gemm_kernels += gemm;
        gemms_gated += gemm && after_wait[i];
        waits += after_wait[i];
    }
    printf("last replay: %d kernel nodes, %d of the GEMM's, %d of them after a wait node; "
           "%d wait nodes\n",
           n, gemm_kernels, gemms_gated, waits);
    EXPECT(gemm_kernels == gemms && (!sliced || funcs[SHORTS] != (CUfunction)(void *)add_kernel));
    if (sliced)
        EXPECT(gemms_gated == gemms && n > SHORTS + gemms && after_wait[SHORTS + gemms]);
    else
        EXPECT(waits == 0);
    MUST(cuGraphExecDestroy(exec));
    drop(&g, ref);
}

static void case_capture(void)
{
    struct gemm g;
    CUstream cap;
    CUgraph graph;
    MUST(cuStreamCreate(&cap, 0));
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    learn(&g, ref);
    MUST(cuStreamBeginCapture_v2(cap, CU_STREAM_CAPTURE_MODE_GLOBAL));
    expect_whole(&g, ref);
    MUST(cuStreamEndCapture(cap, &graph));
    expect_sliced(&g, ref, true, 4);
    drop(&g, ref);
}

static void case_relearn(void)
{
    struct gemm g;
    make(&g, 1024, 4096, 1, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    fake_cublaslt_extra_ns(8000000);
    learn(&g, ref);
    fake_cublaslt_extra_ns(0);
    int sliced = 0, call = 2;
    for (; call <= 2 * GEMM_CLOCK_RETIME + 2; call++) {
        EXPECT(call_low(&g) == CUDAHAL_LT_SUCCESS);
        EXPECT(d_is(&g, ref));
        if (fake_cublaslt_calls() == 1) /* whole: the learned time came down */
            break;
        sliced++;
    }
    /* Timed at its 65th call (the clock's first retime), read at the next. */
    if (sliced != GEMM_CLOCK_RETIME)
        printf("FAIL: %d calls sliced before one was whole (expected %d)\n", sliced,
               GEMM_CLOCK_RETIME);
    EXPECT(sliced == GEMM_CLOCK_RETIME);
    expect_whole(&g, ref);
    drop(&g, ref);
}

static void case_fail(bool in_slice)
{
    struct gemm g;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    if (in_slice)
        learn(&g, ref);
    EXPECT(call_low(&g) == EXECUTION_FAILED);
    EXPECT(fake_cublaslt_calls() == (in_slice ? 2 : 1));
    if (in_slice)
        EXPECT(is_slice(0, &g, true) && is_slice(1, &g, true));
    else
        EXPECT(as_called(0, &g, low));
    const struct fake_lt_call *last = fake_cublaslt_call(fake_cublaslt_calls() - 1);
    EXPECT(last && last->status == EXECUTION_FAILED);
    drop(&g, ref);
}

/* A workspace enough for every slice but not for the whole call: forwarded as called, it fails
 * as it does without gpuprio (not made to succeed by slices that need less); with all of it, the
 * same call slices. */
static void case_workspace(void)
{
    struct gemm g;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    fake_cublaslt_workspace_need(65536); /* the whole call 64 bytes, a slice of 1024 columns 16 */
    float *ref = reference(&g);
    learn(&g, ref);
    expect_sliced(&g, ref, true, 4);
    g.workspace_size = 32;
    reset_d(&g);
    cudahal_lt_status native = call_with(fake_matmul, &g, low);
    cudahal_lt_status st = call_low(&g);
    EXPECT(native == INVALID_VALUE);
    EXPECT(st == native);
    EXPECT(fake_cublaslt_calls() == 1);
    EXPECT(as_called(0, &g, low));
    g.workspace_size = sizeof g.workspace;
    expect_sliced(&g, ref, true, 4);
    fake_cublaslt_workspace_need(0);
    drop(&g, ref);
}

int fake_cuda_stale_uses(void); /* fake_cuda.c */

/* A call timed (its first: the events recorded around it are kept for the next call to read),
 * then the device's primary context reset and retained again: the same GEMM on a stream of the
 * new context touches no event of the dead one, and is right. */
static void case_reset(void)
{
    struct gemm g;
    CUdevice dev;
    CUcontext ctx;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    learn(&g, ref);
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxReset(dev));
    MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&low, 0));
    int before = fake_cuda_stale_uses();
    EXPECT(call_low(&g) == CUDAHAL_LT_SUCCESS);
    EXPECT(d_is(&g, ref));
    EXPECT(fake_cuda_stale_uses() == before);
    drop(&g, ref);
}

/* The process that holds (GEMM_HOLD) and prints its pid: the forked child of case_fork. */
static bool forked_parent;
static void hold(void);

static void case_fork(void)
{
    case_capture();
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        printf("FAIL fork\n");
        failures++;
        return;
    }
    if (child > 0) {
        int status;
        forked_parent = true;
        EXPECT(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0);
        return;
    }
    /* The child: the parent's streams are no queue of its own, so one joins first. */
    MUST(cuStreamCreate(&low, 0));
    int sum = 0;
    void *params[] = {&sum};
    MUST(cuLaunchKernel((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, low, params, NULL));
    MUST(cuStreamSynchronize(low));
    struct gemm g;
    make(&g, 1024, 4096, 4, false, true, CUDAHAL_LT_EPILOGUE_DEFAULT, false);
    float *ref = reference(&g);
    no_algo(&g, true);
    EXPECT(call_low(&g) == CUDAHAL_LT_SUCCESS && fake_cublaslt_calls() == 1 &&
           as_called(0, &g, low));
    no_algo(&g, false);
    drop(&g, ref);
    printf("pid %d\n", (int)getpid());
    hold();
    fflush(stdout);
    /* As lifecycle.c's child: exit() would have LeakSanitizer report what the parent's threads
     * allocated, which no thread of the child can free. */
    _exit(failures ? 1 : 0);
}

/* fork_held's child: a stream of its own joined (as case_fork's child), then a GEMM read,
 * learned, captured in slices whose nodes are noted, and the graph instantiated. */
static int capture_graph_child(void)
{
    MUST(cuStreamCreate(&low, 0));
    int sum = 0;
    void *params[] = {&sum};
    MUST(cuLaunchKernel((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, low, params, NULL));
    MUST(cuStreamSynchronize(low));
    case_capture_graph("sliced");
    printf("child: capture_graph done\n");
    return failures ? 1 : 0;
}

static void case_fork_held(const char *which)
{
    static const struct {
        const char *name, *file, *lock;
    } locks[] = {
        {"forms", "cuda_gemm.c", "forms_mu"},
        {"times", "cuda_gemm_clock.c", "times"},
        {"node_times", "cuda_node_time.c", "mu"},
        {"graphs", "graph.c", "table_mu"},
    };
    for (size_t i = 0; i < sizeof locks / sizeof *locks; i++)
        if (!strcmp(which, locks[i].name)) {
            const char *fail =
                held_lock_fork(locks[i].file, locks[i].lock, 60, capture_graph_child);
            if (fail) {
                printf("FAIL fork_held %s (%s): %s\n", which, locks[i].lock, fail);
                failures++;
            }
            return;
        }
    printf("FAIL fork_held: no lock %s\n", which);
    failures++;
}

/* gemm_hold, except in case_fork's parent: its child is the process that holds. */
static void hold(void)
{
    if (!forked_parent)
        gemm_hold();
}

/* Built as a library too, for gemm_local.c, whose main calls this one. */
#ifdef GEMM_SLICES_LIBRARY
int gemm_slices_main(int argc, char **argv);
#define main gemm_slices_main
#endif

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    start();
    if (!strcmp(what, "n") && argc > 2)
        case_n(argv[2]);
    else if (!strcmp(what, "splitk") && argc > 3)
        case_splitk(argv[2], argv[3]);
    else if (!strcmp(what, "m_bias"))
        case_m_bias();
    else if (!strcmp(what, "m_int8") && argc > 2)
        case_m_int8(argv[2]);
    else if (!strcmp(what, "n_int8"))
        case_n_int8();
    else if (!strcmp(what, "refused"))
        case_refused();
    else if (!strcmp(what, "capture"))
        case_capture();
    else if (!strcmp(what, "capture_graph") && argc > 2)
        case_capture_graph(argv[2]);
    else if (!strcmp(what, "fail_slice") || !strcmp(what, "fail_whole"))
        case_fail(!strcmp(what, "fail_slice"));
    else if (!strcmp(what, "relearn"))
        case_relearn();
    else if (!strcmp(what, "workspace"))
        case_workspace();
    else if (!strcmp(what, "reset"))
        case_reset();
    else if (!strcmp(what, "fork"))
        case_fork();
    else if (!strcmp(what, "fork_held") && argc > 2)
        case_fork_held(argv[2]);
    else {
        fprintf(stderr, "usage: gemm_slices n sliced|whole|checked_whole|splitk S sliced|whole|"
                        "m_bias|m_int8 EXPECT|n_int8|refused|capture|"
                        "capture_graph sliced|whole|fail_slice|fail_whole|relearn|workspace|"
                        "reset|fork|"
                        "fork_held forms|times|node_times|graphs\n");
        return 2;
    }
    if (!failures)
        printf("ok %s\n", what);
    hold();
    return failures ? 1 : 0;
}
