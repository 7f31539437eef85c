/*
 * blas_trace.c - which cuBLAS entry points a program's GEMMs reach, and with what (issue 45).
 *
 * Preloaded next to nothing else: each wrapper writes one line per call to BLAS_TRACE (a file;
 * stderr if unset) and forwards to the next definition (the application's libcublas/libcublasLt).
 * A call made while another traced call of the same thread runs is marked "nested": cuBLAS's own
 * use of cublasLt, which a GEMM-slicing layer must not slice a second time. For cublasLtMatmul
 * the line has the layouts, the epilogue and the algorithm's configuration (split-K, reduction
 * scheme, tile), which decide whether slicing the output could be exact.
 *
 *   gcc -O2 -shared -fPIC -I/usr/local/cuda/include bench/gpu/blas_trace.c -o blas_trace.so -ldl
 */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *out;
static pthread_once_t out_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int depth;

static void open_out(void)
{
    const char *path = getenv("BLAS_TRACE");
    out = path ? fopen(path, "a") : NULL;
    if (!out)
        out = stderr;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    pthread_once(&out_once, open_out);
    pthread_mutex_lock(&out_mu);
    fprintf(out, "%s", depth > 1 ? "nested " : "");
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
    fflush(out);
    pthread_mutex_unlock(&out_mu);
}

/*
 * The definition that this library hides: found in the loaded objects themselves, not through
 * dlsym(RTLD_NEXT), which searches only the global scope. PyTorch's extension (and with it
 * libcublas) is loaded RTLD_LOCAL, so RTLD_NEXT finds nothing there and the call goes to NULL.
 */
struct lookup {
    const char *name;
    void *found;
};

static int look_in(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct lookup *l = arg;
    Dl_info self;
    if (!info->dlpi_name[0] || !dladdr((void *)look_in, &self) ||
        !strcmp(info->dlpi_name, self.dli_fname))
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    l->found = dlsym(h, l->name);
    dlclose(h);
    return l->found != NULL;
}

static void *real(const char *name)
{
    struct lookup l = {name, NULL};
    dl_iterate_phdr(look_in, &l);
    return l.found;
}

#define NEXT(name) ((__typeof__(&name))real(#name))
/* cublasLt's own functions (not hidden here), found where the application loaded them. */
#define LT(name) ((__typeof__(&name))real(#name))

#ifndef SKIP_cublasGemmEx
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *A, cudaDataType at,
                            int lda, const void *B, cudaDataType bt, int ldb, const void *beta,
                            void *C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo)
{
    depth++;
    say("cublasGemmEx ta=%d tb=%d m=%d n=%d k=%d types=%d,%d,%d ld=%d,%d,%d compute=%d algo=%d", ta,
        tb, m, n, k, at, bt, ct, lda, ldb, ldc, compute, algo);
    cublasStatus_t r = NEXT(cublasGemmEx)(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta,
                                          C, ct, ldc, compute, algo);
    depth--;
    return r;
}
#endif

#ifndef SKIP_cublasGemmStridedBatchedEx
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType at,
                                          int lda, long long sa, const void *B, cudaDataType bt,
                                          int ldb, long long sb, const void *beta, void *C,
                                          cudaDataType ct, int ldc, long long sc, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    depth++;
    say("cublasGemmStridedBatchedEx ta=%d tb=%d m=%d n=%d k=%d batch=%d types=%d,%d,%d "
        "compute=%d algo=%d",
        ta, tb, m, n, k, batch, at, bt, ct, compute, algo);
    cublasStatus_t r =
        NEXT(cublasGemmStridedBatchedEx)(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb,
                                         beta, C, ct, ldc, sc, batch, compute, algo);
    depth--;
    return r;
}
#endif

#ifndef SKIP_cublasSgemm_v2
cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                              int n, int k, const float *alpha, const float *A, int lda,
                              const float *B, int ldb, const float *beta, float *C, int ldc)
{
    depth++;
    say("cublasSgemm ta=%d tb=%d m=%d n=%d k=%d", ta, tb, m, n, k);
    cublasStatus_t r =
        NEXT(cublasSgemm_v2)(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    depth--;
    return r;
}
#endif

#ifndef SKIP_cublasSgemmStridedBatched
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta,
                                         float *C, int ldc, long long sc, int batch)
{
    depth++;
    say("cublasSgemmStridedBatched ta=%d tb=%d m=%d n=%d k=%d batch=%d", ta, tb, m, n, k, batch);
    cublasStatus_t r = NEXT(cublasSgemmStridedBatched)(h, ta, tb, m, n, k, alpha, A, lda, sa, B,
                                                       ldb, sb, beta, C, ldc, sc, batch);
    depth--;
    return r;
}
#endif

static void layout(char *buf, size_t size, cublasLtMatrixLayout_t l)
{
    uint64_t rows = 0, cols = 0;
    int64_t ld = 0;
    int32_t batch = 1;
    uint32_t type = 0;
    size_t w;
    LT(cublasLtMatrixLayoutGetAttribute)(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type, &w);
    LT(cublasLtMatrixLayoutGetAttribute)(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &w);
    LT(cublasLtMatrixLayoutGetAttribute)(l, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols, &w);
    LT(cublasLtMatrixLayoutGetAttribute)(l, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld, &w);
    LT(cublasLtMatrixLayoutGetAttribute)
    (l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch, &w);
    snprintf(buf, size, "%llux%llu/ld%lld/b%d/t%u", (unsigned long long)rows,
             (unsigned long long)cols, (long long)ld, batch, type);
}

#ifndef SKIP_cublasLtMatmul
cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t ad, const void *B,
                              cublasLtMatrixLayout_t bd, const void *beta, const void *C,
                              cublasLtMatrixLayout_t cd, void *D, cublasLtMatrixLayout_t dd,
                              const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss,
                              cudaStream_t s)
{
    depth++;
    if (getenv("BLAS_TRACE_BARE")) { /* no attribute read: only that the call came */
        say("cublasLtMatmul bare desc=%p A=%p C=%p D=%p algo=%p ws=%zu", (void *)desc, A, C, D,
            (const void *)algo, wss);
        cublasStatus_t r = NEXT(cublasLtMatmul)(h, desc, alpha, A, ad, B, bd, beta, C, cd, D, dd,
                                                algo, ws, wss, s);
        say("cublasLtMatmul bare returned %d", r);
        depth--;
        return r;
    }
    char a[96], b[96], c[96], d[96];
    layout(a, sizeof a, ad);
    layout(b, sizeof b, bd);
    layout(c, sizeof c, cd);
    layout(d, sizeof d, dd);
    int32_t ta = 0, tb = 0;
    uint32_t epi = 0;
    void *bias = NULL;
    size_t w;
    LT(cublasLtMatmulDescGetAttribute)(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta, &w);
    LT(cublasLtMatmulDescGetAttribute)(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb, &w);
    LT(cublasLtMatmulDescGetAttribute)(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi, &w);
    LT(cublasLtMatmulDescGetAttribute)
    (desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias, &w);
    int32_t id = -1, tile = -1, splitk = -1, red = -1, stages = -1;
    if (algo) {
        LT(cublasLtMatmulAlgoConfigGetAttribute)(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
        LT(cublasLtMatmulAlgoConfigGetAttribute)
        (algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
        LT(cublasLtMatmulAlgoConfigGetAttribute)
        (algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
        LT(cublasLtMatmulAlgoConfigGetAttribute)
        (algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w);
        LT(cublasLtMatmulAlgoConfigGetAttribute)
        (algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    }
    say("cublasLtMatmul ta=%d tb=%d A=%s B=%s C=%s D=%s inplace=%d epilogue=%u bias=%d algo=%s "
        "id=%d tile=%d splitk=%d reduction=%d stages=%d ws=%zu",
        ta, tb, a, b, c, d, C == D, epi, bias != NULL, algo ? "given" : "none", id, tile, splitk,
        red, stages, wss);
    cublasStatus_t r =
        NEXT(cublasLtMatmul)(h, desc, alpha, A, ad, B, bd, beta, C, cd, D, dd, algo, ws, wss, s);
    depth--;
    return r;
}
#endif
