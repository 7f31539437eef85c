/*
 * blas_cost.c - what gpuprio's BLAS entry points cost a GEMM call that is not sliced, on the fake
 * driver, cuBLAS and cuBLASLt of tests/cuda (no GPU): the call pattern of bench/gpu/blas_rate.c,
 * where every call pays it while GEMM slicing is on (the default).
 *
 *   blas_cost gemmex|lt CALLS [SIZE [K]]   (m = n = SIZE, default 64; k = K, default SIZE; float,
 *                                          as the fakes take)
 *
 *   gemmex  per matmul, as PyTorch makes it: cublasSetStream_v2 and cublasSetWorkspace_v2 on its
 *           handle, then cublasGemmEx
 *   lt      one cublasLtMatmul of a linear layer with a bias (CUBLASLT_EPILOGUE_BIAS), with the
 *           heuristic's algorithm
 *
 * Each round makes CALLS calls the application's way ("through": the global symbols, which
 * LD_PRELOAD=libgpuprio-cuda.so binds to the shim) and CALLS straight to the fakes' own functions
 * (found in the libraries themselves), alternating, 5 rounds; it prints the best round of each in
 * ns per call (per matmul for gemmex) and their difference: what the shim adds. Without the shim
 * both are the fakes'. It also prints how many heuristic queries the fake cuBLASLt answered per
 * call made through (gpuprio asks one to translate a cublasGemmEx). Run it with
 * FAKE_CUBLASLT_NO_MATH=1, so that the fakes' arithmetic does not hide the host's cost, and at a
 * low priority next to a high-priority process to see gated calls (bench/blas_cost.sh does all of
 * it).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cublas.h"
#include "fake_cublaslt.h"

#define MUST(call)                                                                                 \
    do {                                                                                           \
        long must_r = (long)(call);                                                                \
        if (must_r != 0) {                                                                         \
            fprintf(stderr, "blas_cost: %s -> %ld\n", #call, must_r);                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define ROUNDS 5

struct fns {
    cudahal_pfn_cublasSetStream_v2 set_stream;
    cudahal_pfn_cublasSetWorkspace_v2 set_workspace;
    cudahal_pfn_cublasGemmEx gemmex;
    cudahal_pfn_cublasLtMatmul matmul;
};

struct bench {
    int size, k;
    CUstream stream;
    float *a, *b, *c, *bias, alpha, beta;
    char workspace[4096];
    cudahal_blas_handle handle;
    cudahal_lt_handle lt;
    cudahal_lt_desc_opaque *desc;
    cudahal_lt_layout_opaque *a_layout, *b_layout, *layout; /* A m x k, B k x n, C and D */
    cudahal_lt_algo algo;
};

static void kernel(void **params)
{
    (void)params;
}

static void *own(const char *lib, const char *name)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    void *fn = h ? dlsym(h, name) : NULL;
    if (!fn) {
        fprintf(stderr, "blas_cost: %s's own %s not found\n", lib, name);
        exit(1);
    }
    return fn;
}

static void setup(struct bench *b)
{
    CUdevice dev;
    CUcontext ctx;
    MUST(cuInit(0));
    MUST(cuDeviceGet(&dev, 0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&b->stream, CU_STREAM_NON_BLOCKING));
    /* A launch first, as a framework's first op: the stream's queue exists before any GEMM. */
    MUST(cuLaunchKernel((CUfunction)(void *)kernel, 1, 1, 1, 1, 1, 1, 0, b->stream, NULL, NULL));
    MUST(cuStreamSynchronize(b->stream));
    size_t mn = (size_t)b->size * (size_t)b->size, mk = (size_t)b->size * (size_t)b->k;
    b->a = calloc(mk, sizeof(float));
    b->b = calloc(mk, sizeof(float));
    b->c = calloc(mn, sizeof(float));
    b->bias = calloc((size_t)b->size, sizeof(float));
    if (!b->a || !b->b || !b->c || !b->bias)
        exit(1);
    b->alpha = 1;
    b->beta = 0;
    MUST(cublasCreate_v2(&b->handle));
    MUST(cublasLtCreate(&b->lt));
    MUST(cublasLtMatmulDescCreate(&b->desc, FAKE_LT_COMPUTE_32F, CUDAHAL_LT_R_32F));
    uint32_t epilogue = CUDAHAL_LT_EPILOGUE_BIAS;
    MUST(cublasLtMatmulDescSetAttribute(b->desc, CUDAHAL_LT_DESC_EPILOGUE, &epilogue,
                                        sizeof epilogue));
    MUST(cublasLtMatmulDescSetAttribute(b->desc, CUDAHAL_LT_DESC_BIAS_POINTER, &b->bias,
                                        sizeof b->bias));
    MUST(cublasLtMatrixLayoutCreate(&b->a_layout, CUDAHAL_LT_R_32F, (uint64_t)b->size,
                                    (uint64_t)b->k, b->size));
    MUST(cublasLtMatrixLayoutCreate(&b->b_layout, CUDAHAL_LT_R_32F, (uint64_t)b->k,
                                    (uint64_t)b->size, b->k));
    MUST(cublasLtMatrixLayoutCreate(&b->layout, CUDAHAL_LT_R_32F, (uint64_t)b->size,
                                    (uint64_t)b->size, b->size));
    cudahal_lt_pref_opaque *pref;
    uint64_t max_workspace = sizeof b->workspace;
    MUST(cublasLtMatmulPreferenceCreate(&pref));
    MUST(cublasLtMatmulPreferenceSetAttribute(pref, CUDAHAL_LT_PREF_MAX_WORKSPACE, &max_workspace,
                                              sizeof max_workspace));
    cudahal_lt_heuristic heuristic;
    int found = 0;
    MUST(cublasLtMatmulAlgoGetHeuristic(b->lt, b->desc, b->a_layout, b->b_layout, b->layout,
                                        b->layout, pref, 1, &heuristic, &found));
    MUST(found != 1);
    b->algo = heuristic.algo;
    MUST(cublasLtMatmulPreferenceDestroy(pref));
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per matmul over `calls` of them through fns. */
static double round_ns(const struct bench *b, const struct fns *f, bool lt, long calls)
{
    int s = b->size, k = b->k;
    long failures = 0;
    double t0 = now_ns();
    for (long i = 0; i < calls; i++) {
        if (lt) {
            failures += f->matmul(b->lt, b->desc, &b->alpha, b->a, b->a_layout, b->b, b->b_layout,
                                  &b->beta, b->c, b->layout, b->c, b->layout, &b->algo,
                                  (void *)b->workspace, sizeof b->workspace, b->stream) != 0;
        } else {
            failures += f->set_stream(b->handle, b->stream) != 0;
            failures += f->set_workspace(b->handle, (void *)b->workspace, sizeof b->workspace) != 0;
            failures += f->gemmex(b->handle, CUDAHAL_LT_OP_N, CUDAHAL_LT_OP_N, s, s, k, &b->alpha,
                                  b->a, CUDAHAL_LT_R_32F, s, b->b, CUDAHAL_LT_R_32F, k, &b->beta,
                                  b->c, CUDAHAL_LT_R_32F, s, CUDAHAL_BLAS_COMPUTE_32F,
                                  CUDAHAL_BLAS_GEMM_DEFAULT) != 0;
        }
        if (i % 256 == 255) { /* the fakes' records of calls are bounded */
            fake_cublas_reset();
            fake_cublaslt_reset();
        }
    }
    double ns = (now_ns() - t0) / (double)calls;
    if (failures) {
        fprintf(stderr, "blas_cost: %ld calls failed\n", failures);
        exit(1);
    }
    return ns;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "gemmex") && strcmp(argv[1], "lt"))) {
        fprintf(stderr, "usage: blas_cost gemmex|lt CALLS [SIZE [K]]\n");
        return 2;
    }
    bool lt = !strcmp(argv[1], "lt");
    long calls = atol(argv[2]);
    struct bench b = {.size = argc > 3 ? atoi(argv[3]) : 64};
    b.k = argc > 4 ? atoi(argv[4]) : b.size;
    if (calls <= 0 || b.size <= 0 || b.k <= 0) {
        fprintf(stderr, "blas_cost: CALLS, SIZE and K must be positive\n");
        return 2;
    }
    setup(&b);
    const struct fns through = {cublasSetStream_v2, cublasSetWorkspace_v2, cublasGemmEx,
                                cublasLtMatmul};
    struct fns straight;
    *(void **)&straight.set_stream = own("libcublas.so.13", "cublasSetStream_v2");
    *(void **)&straight.set_workspace = own("libcublas.so.13", "cublasSetWorkspace_v2");
    *(void **)&straight.gemmex = own("libcublas.so.13", "cublasGemmEx");
    *(void **)&straight.matmul = own("libcublasLt.so.13", "cublasLtMatmul");
    double best_through = 1e30, best_straight = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double t = round_ns(&b, &through, lt, calls), s = round_ns(&b, &straight, lt, calls);
        best_through = t < best_through ? t : best_through;
        best_straight = s < best_straight ? s : best_straight;
    }
    enum { COUNTED = 200 }; /* fewer than the fakes' records hold */
    fake_cublaslt_reset();
    round_ns(&b, &through, lt, COUNTED);
    double heuristics = (double)fake_cublaslt_heuristics() / COUNTED;
    printf("blas_cost %s %dx%dx%d: through %.0f ns, straight %.0f ns, added %.0f ns per call (best "
           "of %d rounds of %ld); %.2f heuristic queries per call\n",
           argv[1], b.size, b.size, b.k, best_through, best_straight, best_through - best_straight,
           ROUNDS, calls, heuristics);
    return 0;
}
