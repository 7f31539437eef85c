/*
 * gemmex_slices.c - gpuprio's slices of cublasGemmEx, translated into cuBLASLt, over the fake
 * driver, the fake cuBLAS (fake_cublas.c) and the fake cuBLASLt it links, run by gemm.sh under
 * libgpuprio-cuda.so like gemm_slices.c.
 *
 *   gemmex_slices CASE [EXPECT]
 *
 * A float GEMM, C = 1.5 op(A) op(B) + 0.5 C with m 1024, n 4096, k 4, op(B) transposed, A at an
 * address of 4-byte alignment, on a handle whose stream is the low-priority one and whose
 * workspace was set, is called twice: the first call is whole (its time is not known yet), the
 * second as the plan says. C must equal, bit for bit, what the fake cuBLAS computes for the
 * call made directly (not through the shim), and every call the fakes received is checked:
 *
 *   n EXPECT     EXPECT sliced: no cublasGemmEx reaches cuBLAS, four cublasLtMatmul slices of
 *                1024 columns do, with the handle (as a cuBLASLt one), its stream and workspace,
 *                the heuristic asked with that workspace and the pointers' alignments; whole:
 *                the application's cublasGemmEx, unchanged, and no heuristic asked
 *   refused      each setting or form the translation does not carry (one row each) forwards
 *                the application's cublasGemmEx unchanged, twice (so a call that was not
 *                refused for its form would have been learned, then sliced); the plain form
 *                slices before and after
 *   capture      whole, as called, while a stream capture is in progress; sliced after it
 *   fail_slice   FAKE_CUBLASLT_FAIL_AFTER=1: the second slice fails; its status is the call's
 *                and no later slice is issued
 *   hot          a benchmark, not a test: prints the time of cublasSetStream_v2 and
 *                cublasSetWorkspace_v2, as PyTorch calls them before every matmul, through the
 *                shim and straight to the fake cuBLAS (each call must succeed)
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

#define M 1024
#define N 4096
#define K 4
#define LDA (M + 3)
#define LDB (N + 1)
#define LDC (M + 5)
#define OP_C 2
#define NOT_SUPPORTED 15
#define EXECUTION_FAILED 13

struct gemm {
    cudahal_blas_handle handle;
    int32_t transa, transb, compute, algo;
    uint32_t Atype;
    float alpha, beta;
    float *a_buf, *A, *B, *C, *C0, *ref;
    char workspace[256];
};

static CUstream low;
static cudahal_pfn_cublasGemmEx fake_gemmex; /* the fake's own, around the shim */
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
    *(void **)&fake_set_stream = lib ? dlsym(lib, "cublasSetStream_v2") : NULL;
    *(void **)&fake_set_workspace = lib ? dlsym(lib, "cublasSetWorkspace_v2") : NULL;
    if (!fake_gemmex || !fake_set_stream || !fake_set_workspace) {
        printf("FATAL: the fake cuBLAS's own cublasGemmEx not found\n");
        exit(1);
    }
}

static cudahal_lt_status call_with(cudahal_pfn_cublasGemmEx fn, struct gemm *g)
{
    return fn(g->handle, g->transa, g->transb, M, N, K, &g->alpha, g->A, g->Atype, LDA, g->B,
              CUDAHAL_LT_R_32F, LDB, &g->beta, g->C, CUDAHAL_LT_R_32F, LDC, g->compute, g->algo);
}

static void reset_c(struct gemm *g)
{
    memcpy(g->C, g->C0, (size_t)LDC * N * sizeof(float));
}

/* A handle on the low stream with the test's workspace (set after the stream: setting a
 * stream resets it). */
static void use_handle(struct gemm *g)
{
    MUST(cublasSetStream_v2(g->handle, low));
    MUST(cublasSetWorkspace_v2(g->handle, g->workspace, sizeof g->workspace));
}

static void make(struct gemm *g)
{
    memset(g, 0, sizeof *g);
    g->transa = CUDAHAL_LT_OP_N;
    g->transb = CUDAHAL_LT_OP_T;
    g->compute = CUDAHAL_BLAS_COMPUTE_32F;
    g->algo = CUDAHAL_BLAS_GEMM_DEFAULT_TENSOR_OP;
    g->Atype = CUDAHAL_LT_R_32F;
    g->alpha = 1.5f;
    g->beta = 0.5f;
    g->a_buf = matrix((size_t)LDA * K + 1, 1);
    g->A = g->a_buf + 1; /* 4-byte aligned, not 256 as the heuristic would otherwise assume */
    g->B = matrix((size_t)LDB * K, 2);
    g->C0 = matrix((size_t)LDC * N, 3);
    g->C = malloc((size_t)LDC * N * sizeof(float));
    g->ref = malloc((size_t)LDC * N * sizeof(float));
    if (!g->C || !g->ref)
        exit(1);
    MUST(cublasCreate_v2(&g->handle));
    use_handle(g);
    reset_c(g);
    MUST(call_with(fake_gemmex, g));
    memcpy(g->ref, g->C, (size_t)LDC * N * sizeof(float));
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
    return call_with(cublasGemmEx, g);
}

static bool c_right(const struct gemm *g)
{
    return memcmp(g->C, g->ref, (size_t)LDC * N * sizeof(float)) == 0;
}

/* The fake cuBLAS's one call is the application's own, unchanged, and cuBLASLt had none. */
static bool forwarded(const struct gemm *g, cudahal_lt_status st)
{
    const struct fake_gemmex_call *call = fake_cublas_call(0);
    const struct cudahal_gemmex_call *c = call ? &call->args : NULL;
    return fake_cublas_calls() == 1 && fake_cublaslt_calls() == 0 && c && call->status == st &&
           c->handle == g->handle && c->transa == g->transa && c->transb == g->transb &&
           c->m == M && c->n == N && c->k == K && c->alpha == &g->alpha && c->A == g->A &&
           c->Atype == g->Atype && c->lda == LDA && c->B == g->B && c->Btype == CUDAHAL_LT_R_32F &&
           c->ldb == LDB && c->beta == &g->beta && c->C == g->C && c->Ctype == CUDAHAL_LT_R_32F &&
           c->ldc == LDC && c->compute == g->compute && c->algo == g->algo;
}

static void expect_whole(struct gemm *g)
{
    EXPECT(call(g) == CUDAHAL_LT_SUCCESS);
    EXPECT(forwarded(g, CUDAHAL_LT_SUCCESS));
    EXPECT(c_right(g));
}

static uint32_t alignment_of(const void *p)
{
    uint32_t a = 256;
    while ((uintptr_t)p % a)
        a /= 2;
    return a;
}

/* The fake cuBLASLt's i-th call is slice i of 1024 columns, on the handle's stream and
 * workspace, C and D the application's C moved to the slice. */
static bool is_slice(int i, const struct gemm *g)
{
    const struct fake_lt_call *c = fake_cublaslt_call(i);
    uint64_t first = (uint64_t)i * 1024;
    return c && c->status == CUDAHAL_LT_SUCCESS && c->handle == (cudahal_lt_handle)g->handle &&
           c->alpha == &g->alpha && c->beta == &g->beta && c->A == g->A && c->B == g->B + first &&
           c->C == g->C + first * LDC && c->D == c->C && c->workspace == g->workspace &&
           c->workspace_size == sizeof g->workspace && c->stream == low && c->m == M &&
           c->n == 1024;
}

static void expect_sliced(struct gemm *g)
{
    EXPECT(call(g) == CUDAHAL_LT_SUCCESS);
    EXPECT(fake_cublas_calls() == 0);
    EXPECT(fake_cublaslt_calls() == 4);
    for (int i = 0; i < 4; i++)
        EXPECT(is_slice(i, g));
    EXPECT(c_right(g));
    struct fake_lt_pref p = fake_cublaslt_last_pref();
    EXPECT(fake_cublaslt_heuristics() == 1 && p.max_workspace == sizeof g->workspace);
    EXPECT(p.align[0] == alignment_of(g->A) && p.align[0] == 4);
    EXPECT(p.align[1] == alignment_of(g->B) && p.align[2] == alignment_of(g->C) &&
           p.align[3] == alignment_of(g->C));
}

static void case_n(const char *expect)
{
    struct gemm g;
    make(&g);
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

static void case_refused(void)
{
    static const struct {
        const char *what;
        void (*set)(struct gemm *, bool);
    } forms[] = {
        {"device pointer mode", device_pointers},
        {"atomics allowed", atomics_allowed},
        {"TF32 math mode", tf32_math},
        {"pedantic math mode", pedantic_math},
        {"math mode with another bit", no_reduced_precision},
        {"an SM count target", sm_count_target},
        {"pedantic compute type", pedantic_compute},
        {"TF32 compute type", tf32_compute},
        {"an algorithm chosen", chosen_algo},
        {"A and B bf16, C float", mixed_types},
        {"op(B) conjugate", conjugate},
        {"workspace reset by a stream", workspace_reset},
        {"a new handle where one was destroyed", workspace_of_destroyed},
        {"the heuristic refuses", heuristic_refuses},
        {"the heuristic's algorithm needs more workspace", heuristic_workspace_too_big},
        {"the stream query fails", stream_unknown},
        {"the math mode query fails", math_unknown},
    };
    struct gemm g;
    make(&g);
    expect_whole(&g);
    expect_sliced(&g); /* the plain form slices */
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        forms[i].set(&g, true);
        for (int twice = 0; twice < 2; twice++) {
            cudahal_lt_status st = call(&g);
            bool ok = forwarded(&g, st) && (st != CUDAHAL_LT_SUCCESS || c_right(&g));
            if (!ok)
                printf("FAIL %s: not forwarded whole as called (status %d; %d cublasGemmEx, %d "
                       "cublasLtMatmul)\n",
                       forms[i].what, st, fake_cublas_calls(), fake_cublaslt_calls());
            failures += !ok;
        }
        forms[i].set(&g, false);
    }
    expect_sliced(&g);
    drop(&g);
}

/* ---- a capture, a failure ---- */

static void case_capture(void)
{
    struct gemm g;
    CUstream cap;
    CUgraph graph;
    MUST(cuStreamCreate(&cap, 0));
    make(&g);
    expect_whole(&g); /* learned */
    MUST(cuStreamBeginCapture_v2(cap, CU_STREAM_CAPTURE_MODE_GLOBAL));
    expect_whole(&g);
    MUST(cuStreamEndCapture(cap, &graph));
    expect_sliced(&g);
    drop(&g);
}

static void case_fail_slice(void)
{
    struct gemm g;
    make(&g);
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
    make(&g);
    for (int run = 0; run < 3; run++)
        printf("set stream + workspace: %.1f ns through gpuprio, %.1f ns straight to cuBLAS\n",
               pair_ns(cublasSetStream_v2, cublasSetWorkspace_v2, &g, ROUNDS),
               pair_ns(fake_set_stream, fake_set_workspace, &g, ROUNDS));
    drop(&g);
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
    else if (!strcmp(what, "refused"))
        case_refused();
    else if (!strcmp(what, "capture"))
        case_capture();
    else if (!strcmp(what, "fail_slice"))
        case_fail_slice();
    else if (!strcmp(what, "hot"))
        case_hot();
    else {
        fprintf(stderr, "usage: gemmex_slices n sliced|whole|refused|capture|fail_slice|hot\n");
        return 2;
    }
    if (!failures)
        printf("ok %s\n", what);
    gemm_hold();
    return failures ? 1 : 0;
}
