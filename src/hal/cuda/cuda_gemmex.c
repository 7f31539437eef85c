/*
 * cuda_gemmex.c - cublasGemmEx and cublasGemmStridedBatchedEx, whole or translated into cuBLASLt
 * and sliced (cuda_gemmex.h says when, and how far the slices are exact).
 *
 * The order keeps the common case cheap: slicing off costs nothing here (the shim forwards);
 * on, the handle's settings are read, then the call's whole GPU time is looked up under a key of
 * its own (the call's arguments, not an algorithm: cuBLAS's choice is not known), and only a
 * long call on a stream held by gates (or, with graph gates on, captured on its own stream) is
 * translated: descriptor, layouts (a strided batch's with its count and strides), preference and
 * the heuristic, created for the call and destroyed after it. Both entry points share every step; a
 * batched call differs only in its layouts, its key and the function that forwards it. A call left
 * whole is the application's, unchanged, timed now and then like a whole cublasLtMatmul
 * (cuda_gemm_clock.c).
 */
#include "cuda_gemmex.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "cuda_blas_real.h"
#include "cuda_gemm_clock.h"
#include "gp_lockrank.h"

/* ---- the application's cuBLAS ---- */

static struct {
#define BLAS_API(name, exported, params, args) cudahal_pfn_##name name;
#include "cublas_api.def"
#undef BLAS_API
    cudahal_pfn_cublasLtMatmul lt_matmul; /* the one cuBLAS's own dependencies define */
    bool ok;
} blas;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

/* The functions of the cuBLAS a caller without one of its own reaches, and the cuBLASLt it
 * uses: translated calls go to that cuBLASLt only when it is the one slicing reads. */
static void find_blas(void)
{
    void *gemm = cudahal_blas_next("cublasGemmEx", "libcublas");
    bool all = gemm != NULL;
#define BLAS_API(name, exported, params, args)                                                     \
    *(void **)&blas.name = gemm ? cudahal_blas_sym_beside(gemm, #name) : NULL;                     \
    all = all && blas.name;
#include "cublas_api.def"
#undef BLAS_API
    *(void **)&blas.lt_matmul = gemm ? cudahal_blas_sym_beside(gemm, "cublasLtMatmul") : NULL;
    blas.ok = all && (void *)blas.cublasGemmEx == gemm && blas.lt_matmul &&
              cudahal_gemm_sliceable_lib(blas.lt_matmul);
}

/* ---- workspaces set on handles ---- */

/* A handle keeps its slot when its workspace is forgotten (PyTorch sets the stream, which forgets
 * it, and the workspace again before every matmul): the next set finds the slot at once. A slot
 * whose workspace is not set is free for another handle. */
#define WORKSPACE_HANDLES 128
static struct {
    cudahal_blas_handle handle;
    bool set;
    void *workspace;
    size_t size;
} workspaces[WORKSPACE_HANDLES];
static pthread_mutex_t workspaces_mu = PTHREAD_MUTEX_INITIALIZER;

/* The slot of handle (not NULL), or -1; *spare, the first slot free for it. Under workspaces_mu. */
static int slot_of(cudahal_blas_handle handle, int *spare)
{
    *spare = -1;
    for (int i = 0; i < WORKSPACE_HANDLES; i++) {
        if (workspaces[i].handle == handle)
            return i;
        if (*spare < 0 && !workspaces[i].set)
            *spare = i;
    }
    return -1;
}

void cudahal_gemmex_workspace_set(cudahal_blas_handle handle, void *workspace, size_t size)
{
    if (!handle)
        return;
    gp_mutex_lock(&workspaces_mu, GP_RANK_BLAS_WORKSPACES);
    int spare, i = slot_of(handle, &spare);
    if (i < 0)
        i = spare; /* a handle that finds no slot stays unknown: whole */
    if (i >= 0)
        workspaces[i].handle = handle, workspaces[i].set = true,
        workspaces[i].workspace = workspace, workspaces[i].size = size;
    gp_mutex_unlock(&workspaces_mu, GP_RANK_BLAS_WORKSPACES);
}

void cudahal_gemmex_workspace_forget(cudahal_blas_handle handle)
{
    if (!handle)
        return;
    gp_mutex_lock(&workspaces_mu, GP_RANK_BLAS_WORKSPACES);
    int spare, i = slot_of(handle, &spare);
    if (i >= 0)
        workspaces[i].set = false;
    gp_mutex_unlock(&workspaces_mu, GP_RANK_BLAS_WORKSPACES);
}

void cudahal_gemmex_workspaces_forget_all(void)
{
    pthread_mutex_init(&workspaces_mu, NULL);
    memset(workspaces, 0, sizeof workspaces);
}

static bool workspace_of(cudahal_blas_handle handle, void **workspace, size_t *size)
{
    if (!handle)
        return false;
    gp_mutex_lock(&workspaces_mu, GP_RANK_BLAS_WORKSPACES);
    int spare, i = slot_of(handle, &spare);
    bool set = i >= 0 && workspaces[i].set;
    if (set)
        *workspace = workspaces[i].workspace, *size = workspaces[i].size;
    gp_mutex_unlock(&workspaces_mu, GP_RANK_BLAS_WORKSPACES);
    return set;
}

/* ---- the call's form ---- */

/* The types translated: A and B of `ab`, C of `c`, computed as `compute` with float scalars. */
static const struct {
    uint32_t ab, c;
    int32_t compute;
} translatable[] = {
    {CUDAHAL_LT_R_16BF, CUDAHAL_LT_R_16BF, CUDAHAL_BLAS_COMPUTE_32F},
    {CUDAHAL_LT_R_16F, CUDAHAL_LT_R_16F, CUDAHAL_BLAS_COMPUTE_32F},
    {CUDAHAL_LT_R_32F, CUDAHAL_LT_R_32F, CUDAHAL_BLAS_COMPUTE_32F},
};

static bool types_translatable(const struct cudahal_gemmex_call *c)
{
    for (size_t i = 0; i < sizeof translatable / sizeof *translatable; i++)
        if (c->Atype == translatable[i].ab && c->Btype == translatable[i].ab &&
            c->Ctype == translatable[i].c && c->compute == translatable[i].compute)
            return true;
    return false;
}

static bool op_plain(int32_t op)
{
    return op == CUDAHAL_LT_OP_N || op == CUDAHAL_LT_OP_T;
}

/* A stored matrix of op's rows x cols (as op(X)), its leading dimension. */
static bool ld_fits(int32_t op, int rows, int cols, int ld)
{
    return ld >= (op == CUDAHAL_LT_OP_N ? rows : cols);
}

/* A batch's count and strides: one item (strides unused, as cuBLAS ignores them), or items at
 * positive strides (a stride of 0 broadcasts a matrix; cuda_gemm.c leaves overlapping items
 * whole). */
static bool batch_translatable(const struct cudahal_gemmex_call *c)
{
    return !c->batched || c->batch_count == 1 ||
           (c->batch_count > 1 && c->stride_a > 0 && c->stride_b > 0 && c->stride_c > 0);
}

/* Whether the call and its handle's settings are ones the translation carries. */
static bool form_translatable(const struct cudahal_gemmex_call *c)
{
    int32_t pointer_mode = -1, atomics = -1;
    uint32_t math = ~0u;
    int sm_target = -1; /* cublasGemmEx's kernels use at most these SMs (0: all) */
    return c->m > 0 && c->n > 0 && c->k > 0 && op_plain(c->transa) && op_plain(c->transb) &&
           ld_fits(c->transa, c->m, c->k, c->lda) && ld_fits(c->transb, c->k, c->n, c->ldb) &&
           c->ldc >= c->m && c->alpha && c->beta && c->A && c->B && c->C &&
           (c->algo == CUDAHAL_BLAS_GEMM_DEFAULT ||
            c->algo == CUDAHAL_BLAS_GEMM_DEFAULT_TENSOR_OP) &&
           types_translatable(c) && batch_translatable(c) &&
           blas.cublasGetPointerMode_v2(c->handle, &pointer_mode) == CUDAHAL_LT_SUCCESS &&
           pointer_mode == CUDAHAL_BLAS_POINTER_HOST &&
           blas.cublasGetAtomicsMode(c->handle, &atomics) == CUDAHAL_LT_SUCCESS &&
           atomics == CUDAHAL_BLAS_ATOMICS_NOT_ALLOWED &&
           blas.cublasGetMathMode(c->handle, &math) == CUDAHAL_LT_SUCCESS &&
           math == CUDAHAL_BLAS_DEFAULT_MATH &&
           blas.cublasGetSmCountTarget(c->handle, &sm_target) == CUDAHAL_LT_SUCCESS &&
           sm_target == 0;
}

/* The key of the call's learned time: its arguments, and a tag of the entry point (with a
 * batch's count) in place of an algorithm. */
#define GEMMEX_TAG 0x78456d6d6547ull  /* "GemmEx" */
#define BATCHED_TAG 0x42536d6d6547ull /* "GemmSB" */
static void key_of(const struct cudahal_gemmex_call *c, struct cudahal_gemm_key *key)
{
    memset(key, 0, sizeof *key);
    key->m = (uint64_t)c->m;
    key->n = (uint64_t)c->n;
    key->k = (uint64_t)c->k;
    key->types[0] = c->Atype;
    key->types[1] = c->Btype;
    key->types[2] = key->types[3] = c->Ctype;
    key->compute = c->compute;
    key->transa = c->transa;
    key->transb = c->transb;
    key->algo.data[0] = c->batched ? BATCHED_TAG : GEMMEX_TAG;
    key->algo.data[1] = (uint32_t)c->algo;
    key->algo.data[2] = c->batched ? (uint32_t)c->batch_count : 0;
}

/* ---- the translation ---- */

struct translated {
    cudahal_lt_desc_opaque *desc;
    cudahal_lt_layout_opaque *a, *b, *c;
    cudahal_lt_pref_opaque *pref;
    cudahal_lt_heuristic top;
};

static void drop(const struct cudahal_lt_api *lt, struct translated *t)
{
    if (t->pref)
        lt->cublasLtMatmulPreferenceDestroy(t->pref);
    cudahal_lt_layout_opaque *layouts[] = {t->a, t->b, t->c};
    for (size_t i = 0; i < 3; i++)
        if (layouts[i])
            lt->cublasLtMatrixLayoutDestroy(layouts[i]);
    if (t->desc)
        lt->cublasLtMatmulDescDestroy(t->desc);
    memset(t, 0, sizeof *t);
}

/* The largest power of two, up to 256, that the matrix at p and each item of a batch of
 * elements of esize at stride elements are aligned to (cuBLASLt's alignment preferences). */
static uint32_t alignment_of(const void *p, long long stride, uint32_t esize, bool items)
{
    uintptr_t bits = (uintptr_t)p | (items ? (uintptr_t)stride * esize : 0);
    uint32_t a = 256;
    while (a > 1 && bits % a)
        a /= 2;
    return a;
}

/* The bytes of an element of the table's types. */
static uint32_t element_bytes(uint32_t type)
{
    return type == CUDAHAL_LT_R_32F ? 4 : 2;
}

static bool pref_set(const struct cudahal_lt_api *lt, cudahal_lt_pref_opaque *pref, uint32_t attr,
                     const void *value, size_t size)
{
    return lt->cublasLtMatmulPreferenceSetAttribute(pref, attr, value, size) == CUDAHAL_LT_SUCCESS;
}

/* The layout of a matrix stored as op(X) of rows x cols, in each item of c's batch when it has
 * more than one (count and stride set; cuBLASLt's default is one item). */
static bool layout(const struct cudahal_lt_api *lt, const struct cudahal_gemmex_call *c,
                   uint32_t type, int32_t op, int rows, int cols, int ld, long long stride,
                   cudahal_lt_layout_opaque **out)
{
    bool n = op == CUDAHAL_LT_OP_N;
    int32_t count = c->batched ? c->batch_count : 1;
    int64_t offset = stride;
    return lt->cublasLtMatrixLayoutCreate(out, type, (uint64_t)(n ? rows : cols),
                                          (uint64_t)(n ? cols : rows), ld) == CUDAHAL_LT_SUCCESS &&
           (count == 1 ||
            (lt->cublasLtMatrixLayoutSetAttribute(*out, CUDAHAL_LT_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof count) == CUDAHAL_LT_SUCCESS &&
             lt->cublasLtMatrixLayoutSetAttribute(*out, CUDAHAL_LT_LAYOUT_BATCH_STRIDE, &offset,
                                                  sizeof offset) == CUDAHAL_LT_SUCCESS));
}

/* The call in cuBLASLt's terms, with the heuristic's first algorithm for a workspace of
 * workspace_size: 0, or -1 (t released) when any step fails or the algorithm needs more. */
static int translate(const struct cudahal_lt_api *lt, const struct cudahal_gemmex_call *c,
                     size_t workspace_size, struct translated *t)
{
    memset(t, 0, sizeof *t);
    uint64_t max_workspace = workspace_size;
    bool items = c->batched && c->batch_count > 1;
    uint32_t align_a = alignment_of(c->A, c->stride_a, element_bytes(c->Atype), items),
             align_b = alignment_of(c->B, c->stride_b, element_bytes(c->Btype), items),
             align_c = alignment_of(c->C, c->stride_c, element_bytes(c->Ctype), items);
    int found = 0;
    bool ok = lt->cublasLtMatmulDescCreate(&t->desc, CUDAHAL_BLAS_COMPUTE_32F, CUDAHAL_LT_R_32F) ==
                  CUDAHAL_LT_SUCCESS &&
              lt->cublasLtMatmulDescSetAttribute(t->desc, CUDAHAL_LT_DESC_TRANSA, &c->transa,
                                                 sizeof c->transa) == CUDAHAL_LT_SUCCESS &&
              lt->cublasLtMatmulDescSetAttribute(t->desc, CUDAHAL_LT_DESC_TRANSB, &c->transb,
                                                 sizeof c->transb) == CUDAHAL_LT_SUCCESS &&
              layout(lt, c, c->Atype, c->transa, c->m, c->k, c->lda, c->stride_a, &t->a) &&
              layout(lt, c, c->Btype, c->transb, c->k, c->n, c->ldb, c->stride_b, &t->b) &&
              layout(lt, c, c->Ctype, CUDAHAL_LT_OP_N, c->m, c->n, c->ldc, c->stride_c, &t->c) &&
              lt->cublasLtMatmulPreferenceCreate(&t->pref) == CUDAHAL_LT_SUCCESS &&
              pref_set(lt, t->pref, CUDAHAL_LT_PREF_MAX_WORKSPACE, &max_workspace,
                       sizeof max_workspace) &&
              pref_set(lt, t->pref, CUDAHAL_LT_PREF_ALIGN_A, &align_a, sizeof align_a) &&
              pref_set(lt, t->pref, CUDAHAL_LT_PREF_ALIGN_B, &align_b, sizeof align_b) &&
              pref_set(lt, t->pref, CUDAHAL_LT_PREF_ALIGN_C, &align_c, sizeof align_c) &&
              pref_set(lt, t->pref, CUDAHAL_LT_PREF_ALIGN_D, &align_c, sizeof align_c) &&
              lt->cublasLtMatmulAlgoGetHeuristic((cudahal_lt_handle)c->handle, t->desc, t->a, t->b,
                                                 t->c, t->c, t->pref, 1, &t->top,
                                                 &found) == CUDAHAL_LT_SUCCESS &&
              found == 1 && t->top.state == CUDAHAL_LT_SUCCESS &&
              t->top.workspaceSize <= workspace_size;
    if (!ok)
        drop(lt, t);
    return ok ? 0 : -1;
}

/* ---- the call ---- */

/* The application's call, unchanged, to its own function. */
static cudahal_lt_status forward(union cudahal_gemmex_real real,
                                 const struct cudahal_gemmex_call *c)
{
    if (c->batched)
        return real.batched(c->handle, c->transa, c->transb, c->m, c->n, c->k, c->alpha, c->A,
                            c->Atype, c->lda, c->stride_a, c->B, c->Btype, c->ldb, c->stride_b,
                            c->beta, c->C, c->Ctype, c->ldc, c->stride_c, c->batch_count,
                            c->compute, c->algo);
    return real.gemm(c->handle, c->transa, c->transb, c->m, c->n, c->k, c->alpha, c->A, c->Atype,
                     c->lda, c->B, c->Btype, c->ldb, c->beta, c->C, c->Ctype, c->ldc, c->compute,
                     c->algo);
}

/* Whole, and timed when the clock asks (key not NULL). */
static cudahal_lt_status whole(union cudahal_gemmex_real real, const struct cudahal_gemmex_call *c,
                               struct CUstream_st *stream, const struct cudahal_gemm_key *key)
{
    void *token = key ? cudahal_gemm_clock_start(key, stream) : NULL;
    cudahal_lt_status st = forward(real, c);
    if (token)
        cudahal_gemm_clock_end(token, stream, st == CUDAHAL_LT_SUCCESS);
    return st;
}

cudahal_lt_status cudahal_gemmex(union cudahal_gemmex_real real,
                                 const struct cudahal_gemmex_call *c, uint64_t target_ns,
                                 cudahal_gemm_when_fn when_of)
{
    pthread_once(&blas_once, find_blas);
    const struct cudahal_lt_api *lt = cudahal_gemm_lt();
    bool ours = c->batched ? real.batched == blas.cublasGemmStridedBatchedEx
                           : real.gemm == blas.cublasGemmEx;
    if (!target_ns || !blas.ok || !lt || !ours)
        return forward(real, c);
    const enum cudahal_gemm_entry entry =
        c->batched ? CUDAHAL_GEMM_FROM_BATCHED : CUDAHAL_GEMM_FROM_GEMMEX;
    struct CUstream_st *stream = NULL;
    void *workspace = NULL;
    size_t workspace_size = 0;
    if (blas.cublasGetStream_v2(c->handle, &stream) != CUDAHAL_LT_SUCCESS) {
        cudahal_gemm_count_whole(entry, -1, GEMM_WHOLE_UNSUPPORTED, 0, target_ns);
        return forward(real, c);
    }
    struct cudahal_gemm_when w = when_of(stream, target_ns);
    w.entry = entry;
    if (w.capturing && !w.into_capture) {
        cudahal_gemm_count_whole(entry, w.device, GEMM_WHOLE_CAPTURING, 0, target_ns);
        return forward(real, c);
    }
    if (!form_translatable(c) || !workspace_of(c->handle, &workspace, &workspace_size)) {
        cudahal_gemm_count_whole(entry, w.device, GEMM_WHOLE_UNSUPPORTED, 0, target_ns);
        return forward(real, c);
    }
    struct cudahal_gemm_key key;
    key_of(c, &key);
    bool time_this;
    uint64_t learned = cudahal_gemm_clock_learned(&key, &time_this);
    /* Never timed into a capture, whose events would become its nodes; sliced there whatever
     * gated says (the queue of its replays is not known): cuda_gemm.h. */
    const struct cudahal_gemm_key *timed = time_this && !w.capturing ? &key : NULL;
    enum gemm_whole_reason why = !learned                      ? GEMM_WHOLE_UNLEARNED
                                 : learned <= target_ns        ? GEMM_WHOLE_SHORT
                                 : !w.gated && !w.into_capture ? GEMM_WHOLE_NOT_GATED
                                                               : GEMM_WHOLE_NONE;
    if (why != GEMM_WHOLE_NONE) {
        cudahal_gemm_count_whole(entry, w.device, cudahal_gemm_captured_why(&w, why), learned,
                                 target_ns);
        return whole(real, c, stream, timed);
    }
    struct translated t;
    if (translate(lt, c, workspace_size, &t)) {
        cudahal_gemm_count_whole(entry, w.device, GEMM_WHOLE_UNSUPPORTED, 0, target_ns);
        return whole(real, c, stream, timed);
    }
    struct cudahal_gemm_call call = {(cudahal_lt_handle)c->handle,
                                     t.desc,
                                     c->alpha,
                                     c->A,
                                     c->B,
                                     c->beta,
                                     c->C,
                                     c->C,
                                     t.a,
                                     t.b,
                                     t.c,
                                     t.c,
                                     &t.top.algo,
                                     workspace,
                                     workspace_size,
                                     stream};
    cudahal_lt_status st;
    bool sliced =
        cudahal_gemm_slice_translated(blas.lt_matmul, &call, &w, learned, timed, &why, &st);
    drop(lt, &t);
    if (sliced)
        return st;
    cudahal_gemm_count_whole(entry, w.device, cudahal_gemm_captured_why(&w, why), learned,
                             target_ns);
    return whole(real, c, stream, timed);
}
