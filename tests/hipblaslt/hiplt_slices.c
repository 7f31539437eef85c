/*
 * hiplt_slices.c - gpuprio's hipBLASLt slices over the simulated device and the fake hipBLASLt
 * (fake_hipblaslt.c), run by hiplt.sh under libgpuprio-hip.so.
 *
 *   hiplt_slices CASE [EXPECT]
 *
 * The process runs at low priority, next to an idle high-priority process on the same device
 * (hiplt.sh with HIPLT_HIGH=1), so that its stream's queue is held by gates; or alone. A GEMM on
 * its stream is made three times: directly through the fake (the reference D), then through
 * gpuprio twice: the first call is whole (its time is not known yet; the fake takes 1 ns per
 * multiply-add), the second as the plan says. D must equal the reference bit for bit after each,
 * and every call the fake received is checked against what the application passed or what the
 * plan gives (handle, descriptor, scalars, algorithm, workspace and stream the application's;
 * pointers and sizes the slice's):
 *
 *   conformance     every form below is cut into 3 slices (1024, 1024 and the rest, 1536)
 *                   along n, or along m for the tall ones (its first call too where a form of
 *                   the same kind, whose time gpuprio knows, came before): fp32, fp16 and bf16,
 *                   each with every transpose; C is D; beta 0; bias epilogues (along n); the
 *                   algorithm the application passed is unchanged, and the check ran
 *   n EXPECT        one fp32 form: EXPECT sliced, whole (nothing checked) or checked_whole
 *                   (whole although the algorithm was checked: FAKE_HIPBLASLT_CHECK_FAIL, a
 *                   workspace larger than the call's, or FAKE_HIPBLASLT_FALLBACK: the check
 *                   wrote into the algorithm, a copy, the application's left as it was)
 *   whole           each form that does not slice exactly is forwarded whole, with the
 *                   application's arguments and the fake's status, twice
 *   capture         whole while a stream capture is in progress (of another stream), sliced
 *                   after it
 *   workspace       the n case's GEMM with a workspace that every slice has enough of but the
 *                   whole call has not (FAKE_HIPBLASLT_WORKSPACE_PER=32768): forwarded as called,
 *                   the fake's refusal returned, as without gpuprio; sliced again with all of it
 *   reset           the n case's GEMM timed, hipDeviceReset, the GEMM again on a new stream: no
 *                   event of the reset device used, D right
 *   fail_slice      FAKE_HIPBLASLT_FAIL_AFTER=3: the second slice fails; its status is returned
 *                   and no later slice is issued
 *   fork_held       a thread of the program's own holds the learned times' lock
 *                   (hip_gemm_clock.c's table, "times", ../cuda/held_lock.h) while it forks; the
 *                   child makes a stream of its own and runs n sliced, within 60 s
 *   oracle          no gpuprio: slices made by hand through the fake equal the whole call at
 *                   tile boundaries and differ from it when the first boundary is one off, along
 *                   n and along m (what makes the bit comparisons above fail for such a slice)
 *
 * With GEMM_HOLD (a FIFO), says "held" once the case is done and waits for a line from it
 * (../cuda/gemm_hold.h), so that hiplt.sh can read the process's record with gpuprio top.
 * Prints "ok CASE" and exits 0, or FAIL lines and exits 1.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/gemm_hold.h"
#include "../cuda/held_lock.h"
#include "../expect.h"
#include "fake_hipblaslt.h"
#include "hip_compat.h"
#include "hipsim.h"

#define EXECUTION_FAILED 5
#define MUST(call)                                                                                 \
    do {                                                                                           \
        long must_rc = (long)(call);                                                               \
        if (must_rc != 0) {                                                                        \
            printf("FATAL %s:%d: %s returned %ld\n", __FILE__, __LINE__, #call, must_rc);          \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

/* The GEMMs: D is M x N (or N x M, tall), k = K. */
#define M 512
#define N 3584
#define K 4

hiphal_lt_status hipblasLtCreate(hiphal_lt_handle *handle);
hiphal_lt_status hipblasLtDestroy(hiphal_lt_handle handle);
hiphal_lt_status hipblasLtMatmulDescCreate(hiphal_lt_desc_opaque **desc, int32_t compute,
                                           uint32_t scale);
hiphal_lt_status hipblasLtMatmulDescDestroy(hiphal_lt_desc_opaque *desc);
hiphal_lt_status hipblasLtMatmulDescSetAttribute(hiphal_lt_desc_opaque *desc, uint32_t attr,
                                                 const void *buf, size_t size);
hiphal_lt_status hipblasLtMatrixLayoutSetAttribute(hiphal_lt_layout_opaque *layout, uint32_t attr,
                                                   const void *buf, size_t size);
#define HLT_API(name, exported, params, args) hiphal_lt_status name params;
#include "hipblaslt_api.def"
#undef HLT_API

struct form {
    const char *name;
    uint32_t type;
    bool ta, tb, in_place, zero_beta, tall;
    uint32_t epilogue;
};

struct gemm {
    struct form f;
    uint64_t m, n, k;
    size_t es;
    int64_t lda, ldb, ldc, ldd;
    char *A, *B, *C, *D, *D0, *bias;
    float alpha, beta;
    hiphal_lt_handle handle;
    hiphal_lt_layout_opaque *la, *lb, *lc, *ld;
    hiphal_lt_desc_opaque *desc;
    hiphal_lt_algo algo, algo_before;
    const hiphal_lt_algo *algo_arg; /* what calls pass: &algo, or NULL */
    char workspace[64];
    size_t workspace_size; /* what calls say they give: all of it, unless a case says less */
};

static hipStream_t low;
static hiphal_pfn_hipblasLtMatmul fake_matmul; /* the fake's own, around the shim */

/* HIPLT_STREAM=legacy: the GEMMs on hipStreamLegacy, the null stream by the name no runtime call
 * gpuprio makes may take for a stream object, rather than on a stream of the program's. */
static bool on_legacy(void)
{
    const char *which = getenv("HIPLT_STREAM");
    return which && !strcmp(which, "legacy");
}

static void start(void)
{
    if (on_legacy())
        low = hipStreamLegacy;
    else
        MUST(hipStreamCreate(&low));
    void *lib = dlopen("libhipblaslt.so.1", RTLD_NOW | RTLD_NOLOAD);
    *(void **)&fake_matmul = lib ? dlsym(lib, "hipblasLtMatmul") : NULL;
    if (!fake_matmul) {
        printf("FATAL: the fake hipBLASLt's own hipblasLtMatmul not found\n");
        exit(2);
    }
}

static size_t esize(uint32_t type)
{
    return type == HIPHAL_LT_R_32F ? 4 : 2;
}

/* Values of many exponents and all mantissa bits, so that the order of a sum shows in its bits:
 * floats in [0.25, 8), fp16 and bf16 of exponents -2 to 2, either sign. */
static char *matrix(uint32_t type, int64_t ld, uint64_t cols, unsigned seed)
{
    size_t count = (size_t)ld * cols;
    char *x = NULL;
    MUST(hipMalloc((void **)&x, count * esize(type) + 1));
    for (size_t i = 0; i < count; i++) {
        uint32_t r = (uint32_t)(i * 2654435761u + seed * 40503u);
        r ^= r >> 13;
        r *= 0x5bd1e995u;
        r ^= r >> 15;
        uint32_t sign = r >> 31, exp = (r >> 24) % 5; /* 0..4: 2^-2 .. 2^2 */
        if (type == HIPHAL_LT_R_32F) {
            uint32_t u = sign << 31 | (125 + exp) << 23 | (r & 0x7fffff);
            memcpy(x + 4 * i, &u, 4);
        } else if (type == HIPHAL_LT_R_16BF) {
            uint16_t h = (uint16_t)(sign << 15 | (125 + exp) << 7 | (r & 0x7f));
            memcpy(x + 2 * i, &h, 2);
        } else {
            uint16_t h = (uint16_t)(sign << 15 | (13 + exp) << 10 | (r & 0x3ff));
            memcpy(x + 2 * i, &h, 2);
        }
    }
    return x;
}

static void make(struct gemm *g, const struct form *f)
{
    memset(g, 0, sizeof *g);
    g->f = *f;
    g->m = f->tall ? N : M;
    g->n = f->tall ? M : N;
    g->k = K;
    g->es = esize(f->type);
    g->alpha = 1.5f;
    g->beta = f->zero_beta ? 0.0f : f->in_place ? 1.0f : 0.5f;
    uint64_t m = g->m, n = g->n, k = g->k;
    uint64_t ar = f->ta ? k : m, ac = f->ta ? m : k, br = f->tb ? n : k, bc = f->tb ? k : n;
    g->lda = (int64_t)ar + 3;
    g->ldb = (int64_t)br + 1;
    g->ldd = (int64_t)m + 5;
    g->ldc = f->in_place ? g->ldd : (int64_t)m + 2;
    g->A = matrix(f->type, g->lda, ac, 1);
    g->B = matrix(f->type, g->ldb, bc, 2);
    g->D0 = matrix(f->type, g->ldd, n, 3);
    MUST(hipMalloc((void **)&g->D, (size_t)g->ldd * n * g->es));
    g->C = f->in_place ? g->D : matrix(f->type, g->ldc, n, 4);
    g->bias = matrix(f->type, (int64_t)m, 1, 5);
    MUST(hipblasLtCreate(&g->handle));
    MUST(hipblasLtMatrixLayoutCreate(&g->la, f->type, ar, ac, g->lda));
    MUST(hipblasLtMatrixLayoutCreate(&g->lb, f->type, br, bc, g->ldb));
    MUST(hipblasLtMatrixLayoutCreate(&g->lc, f->type, m, n, g->ldc));
    MUST(hipblasLtMatrixLayoutCreate(&g->ld, f->type, m, n, g->ldd));
    MUST(hipblasLtMatmulDescCreate(&g->desc, HIPHAL_LT_COMPUTE_32F, HIPHAL_LT_R_32F));
    int32_t opa = f->ta ? HIPHAL_LT_OP_T : HIPHAL_LT_OP_N;
    int32_t opb = f->tb ? HIPHAL_LT_OP_T : HIPHAL_LT_OP_N;
    uint32_t epilogue = f->epilogue ? f->epilogue : HIPHAL_LT_EPILOGUE_DEFAULT;
    MUST(hipblasLtMatmulDescSetAttribute(g->desc, HIPHAL_LT_DESC_TRANSA, &opa, sizeof opa));
    MUST(hipblasLtMatmulDescSetAttribute(g->desc, HIPHAL_LT_DESC_TRANSB, &opb, sizeof opb));
    MUST(hipblasLtMatmulDescSetAttribute(g->desc, HIPHAL_LT_DESC_EPILOGUE, &epilogue,
                                         sizeof epilogue));
    const void *bias = epilogue & HIPHAL_LT_EPILOGUE_BIAS ? g->bias : NULL;
    MUST(hipblasLtMatmulDescSetAttribute(g->desc, HIPHAL_LT_DESC_BIAS_POINTER, &bias, sizeof bias));
    uint32_t magic = FAKE_HLT_ALGO_MAGIC;
    memcpy(g->algo.data, &magic, sizeof magic);
    g->algo.max_workspace_bytes = sizeof g->workspace;
    g->workspace_size = sizeof g->workspace;
    g->algo_before = g->algo;
    g->algo_arg = &g->algo;
}

static void drop(struct gemm *g, char *ref)
{
    MUST(hipblasLtMatrixLayoutDestroy(g->la));
    MUST(hipblasLtMatrixLayoutDestroy(g->lb));
    MUST(hipblasLtMatrixLayoutDestroy(g->lc));
    MUST(hipblasLtMatrixLayoutDestroy(g->ld));
    MUST(hipblasLtMatmulDescDestroy(g->desc));
    MUST(hipblasLtDestroy(g->handle));
    if (!g->f.in_place)
        MUST(hipFree(g->C));
    MUST(hipFree(g->A));
    MUST(hipFree(g->B));
    MUST(hipFree(g->D));
    MUST(hipFree(g->D0));
    MUST(hipFree(g->bias));
    free(ref);
}

static size_t d_bytes(const struct gemm *g)
{
    return (size_t)g->ldd * g->n * g->es;
}

static void reset_d(struct gemm *g)
{
    memcpy(g->D, g->D0, d_bytes(g));
}

static hiphal_lt_status call_with(hiphal_pfn_hipblasLtMatmul fn, struct gemm *g)
{
    hiphal_lt_status st =
        fn(g->handle, g->desc, &g->alpha, g->A, g->la, g->B, g->lb, &g->beta, g->C, g->lc, g->D,
           g->ld, g->algo_arg, g->workspace, g->workspace_size, (struct ihipStream_t *)low);
    MUST(hipStreamSynchronize(low));
    return st;
}

/* What the fake computes for the whole call, made directly: a copy of D. */
static char *reference(struct gemm *g)
{
    reset_d(g);
    MUST(call_with(fake_matmul, g));
    char *ref = malloc(d_bytes(g));
    if (!ref)
        exit(2);
    memcpy(ref, g->D, d_bytes(g));
    return ref;
}

/* The fake's i-th call is the application's own, unchanged. */
static bool as_called(int i, const struct gemm *g)
{
    const struct fake_hlt_call *c = fake_hipblaslt_call(i);
    return c && c->handle == g->handle && c->desc == g->desc && c->alpha == &g->alpha &&
           c->A == g->A && c->Adesc == g->la && c->B == g->B && c->Bdesc == g->lb &&
           c->beta == &g->beta && c->C == g->C && c->Cdesc == g->lc && c->D == g->D &&
           c->Ddesc == g->ld && c->algo == g->algo_arg && c->workspace == g->workspace &&
           c->workspace_size == g->workspace_size && c->stream == (struct ihipStream_t *)low;
}

/* The fake's i-th call is slice i of the plan: 1024 wide, the last taking the rest, along n
 * (columns) or m (rows). */
static bool is_slice(int i, int count, const struct gemm *g)
{
    const struct fake_hlt_call *c = fake_hipblaslt_call(i);
    bool along_n = !g->f.tall;
    uint64_t first = (uint64_t)i * 1024, extent = along_n ? g->n : g->m;
    uint64_t size = i + 1 < count ? 1024 : extent - first;
    if (!c)
        return false;
    bool same = c->handle == g->handle && c->desc == g->desc && c->alpha == &g->alpha &&
                c->beta == &g->beta && c->algo == &g->algo && c->workspace == g->workspace &&
                c->workspace_size == g->workspace_size && c->stream == (struct ihipStream_t *)low &&
                c->status == HIPHAL_LT_SUCCESS;
    if (along_n)
        return same && c->m == g->m && c->n == size && c->A == g->A && c->Adesc == g->la &&
               c->B == g->B + (g->f.tb ? first : first * (uint64_t)g->ldb) * g->es &&
               c->C == g->C + first * (uint64_t)g->ldc * g->es &&
               c->D == g->D + first * (uint64_t)g->ldd * g->es;
    return same && c->m == size && c->n == g->n && c->B == g->B && c->Bdesc == g->lb &&
           c->A == g->A + (g->f.ta ? first * (uint64_t)g->lda : first) * g->es &&
           c->C == g->C + first * g->es && c->D == g->D + first * g->es;
}

/* One call through gpuprio, D fresh: its status. */
static hiphal_lt_status call_low(struct gemm *g)
{
    reset_d(g);
    fake_hipblaslt_reset();
    return call_with(hipblasLtMatmul, g);
}

static bool d_is(const struct gemm *g, const char *ref)
{
    return memcmp(g->D, ref, d_bytes(g)) == 0;
}

static void expect_whole(struct gemm *g, const char *ref)
{
    EXPECT(call_low(g) == HIPHAL_LT_SUCCESS);
    EXPECT(fake_hipblaslt_calls() == 1);
    EXPECT(as_called(0, g));
    EXPECT(d_is(g, ref));
}

static void expect_sliced(struct gemm *g, const char *ref, int slices)
{
    EXPECT(call_low(g) == HIPHAL_LT_SUCCESS);
    EXPECT(fake_hipblaslt_calls() == slices);
    for (int i = 0; i < slices; i++)
        EXPECT(is_slice(i, slices, g));
    EXPECT(d_is(g, ref));
    EXPECT(fake_hipblaslt_checks() > 0);
    EXPECT(memcmp(&g->algo, &g->algo_before, sizeof g->algo) == 0);
}

/* Whether a form of f's kind (what gpuprio learns a time by: dimensions, types, transposes and
 * the algorithm, not the epilogue or where C lies) was called before. */
static bool kind_seen(const struct form *f)
{
    static struct form seen[64];
    static size_t n;
    for (size_t i = 0; i < n; i++)
        if (seen[i].type == f->type && seen[i].ta == f->ta && seen[i].tb == f->tb &&
            seen[i].tall == f->tall)
            return true;
    if (n < sizeof seen / sizeof *seen)
        seen[n++] = *f;
    return false;
}

static void sliced_form(const struct form *f)
{
    struct gemm g;
    make(&g, f);
    char *ref = reference(&g);
    int before = failures;
    if (kind_seen(f)) /* its time is known */
        expect_sliced(&g, ref, 3);
    else
        expect_whole(&g, ref); /* learns its time */
    expect_sliced(&g, ref, 3);
    if (failures != before)
        printf("FAIL form %s\n", f->name);
    drop(&g, ref);
}

#define F32 HIPHAL_LT_R_32F
#define F16 HIPHAL_LT_R_16F
#define BF16 HIPHAL_LT_R_16BF

static void case_conformance(void)
{
    static const struct form forms[] = {
        {"fp32 NN", F32, false, false, false, false, false, 0},
        {"fp32 TN", F32, true, false, false, false, false, 0},
        {"fp32 NT", F32, false, true, false, false, false, 0},
        {"fp32 TT", F32, true, true, false, false, false, 0},
        {"fp16 NN", F16, false, false, false, false, false, 0},
        {"fp16 TN", F16, true, false, false, false, false, 0},
        {"fp16 NT", F16, false, true, false, false, false, 0},
        {"fp16 TT", F16, true, true, false, false, false, 0},
        {"bf16 NN", BF16, false, false, false, false, false, 0},
        {"bf16 TN", BF16, true, false, false, false, false, 0},
        {"bf16 NT", BF16, false, true, false, false, false, 0},
        {"bf16 TT", BF16, true, true, false, false, false, 0},
        {"fp32 TN, C is D", F32, true, false, true, false, false, 0},
        {"bf16 NT, C is D", BF16, false, true, true, false, false, 0},
        {"fp16 NN, beta 0", F16, false, false, false, true, false, 0},
        {"bf16 NN, C is D, beta 0", BF16, false, false, true, true, false, 0},
        {"fp32 NN, bias", F32, false, false, false, false, false, HIPHAL_LT_EPILOGUE_BIAS},
        {"bf16 TT, gelu bias", BF16, true, true, false, false, false, HIPHAL_LT_EPILOGUE_GELU_BIAS},
        {"fp16 NT, C is D, relu bias", F16, false, true, true, false, false,
         HIPHAL_LT_EPILOGUE_RELU_BIAS},
        {"fp32 NN, along m", F32, false, false, false, false, true, 0},
        {"bf16 TN, along m, C is D", BF16, true, false, true, false, true, 0},
        {"fp16 TT, along m, relu", F16, true, true, false, false, true, HIPHAL_LT_EPILOGUE_RELU},
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        sliced_form(&forms[i]);
}

static const struct form plain = {"fp32 NT", F32, false, true, false, false, false, 0};

static void case_n(const char *expect)
{
    struct gemm g;
    make(&g, &plain);
    char *ref = reference(&g);
    expect_whole(&g, ref);
    if (!strcmp(expect, "sliced")) {
        expect_sliced(&g, ref, 3);
    } else {
        expect_whole(&g, ref);
        EXPECT((fake_hipblaslt_checks() > 0) == !strcmp(expect, "checked_whole"));
        EXPECT(memcmp(&g.algo, &g.algo_before, sizeof g.algo) == 0);
    }
    drop(&g, ref);
}

/* ---- forms that do not slice exactly ---- */

enum refusal { NO_ALGO, AUX_EPILOGUE, C_OVERLAPS_D, BATCHED, BIAS_ALONG_M, AMAX, ALPHA_VECTOR };

static void refused(enum refusal r)
{
    struct form f = plain;
    f.tall = r == BIAS_ALONG_M;
    f.epilogue = r == BIAS_ALONG_M ? HIPHAL_LT_EPILOGUE_BIAS : 0;
    struct gemm g;
    make(&g, &f);
    char *own_c = g.C;
    hiphal_lt_status want = HIPHAL_LT_SUCCESS;
    if (r == NO_ALGO)
        g.algo_arg = NULL;
    if (r == AUX_EPILOGUE) {
        uint32_t e = FAKE_HLT_EPILOGUE_RELU_AUX;
        MUST(hipblasLtMatmulDescSetAttribute(g.desc, HIPHAL_LT_DESC_EPILOGUE, &e, sizeof e));
    }
    if (r == C_OVERLAPS_D) { /* C one element into D, with D's leading dimension */
        MUST(hipblasLtMatrixLayoutDestroy(g.lc));
        MUST(hipblasLtMatrixLayoutCreate(&g.lc, f.type, g.m, g.n, g.ldd));
        g.C = g.D + g.es;
    }
    if (r == BATCHED) { /* two items: the fake does not compute batches, and says so */
        int32_t two = 2;
        hiphal_lt_layout_opaque *all[] = {g.la, g.lb, g.lc, g.ld};
        for (int i = 0; i < 4; i++)
            MUST(hipblasLtMatrixLayoutSetAttribute(all[i], HIPHAL_LT_LAYOUT_BATCH_COUNT, &two,
                                                   sizeof two));
        want = HIPHAL_LT_NOT_SUPPORTED;
    }
    if (r == AMAX) {
        const void *amax = g.bias;
        MUST(hipblasLtMatmulDescSetAttribute(g.desc, HIPHAL_LT_DESC_AMAX_D_POINTER, &amax,
                                             sizeof amax));
    }
    if (r == ALPHA_VECTOR) {
        int32_t mode = 4; /* HIPBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST */
        MUST(hipblasLtMatmulDescSetAttribute(g.desc, HIPHAL_LT_DESC_POINTER_MODE, &mode,
                                             sizeof mode));
    }
    char *ref = NULL;
    if (want == HIPHAL_LT_SUCCESS) {
        ref = reference(&g);
    } else {
        reset_d(&g);
        EXPECT(call_with(fake_matmul, &g) == want);
    }
    for (int call = 0; call < 2; call++) { /* a long one too, once its time is known */
        EXPECT(call_low(&g) == want);
        EXPECT(fake_hipblaslt_calls() == 1);
        EXPECT(as_called(0, &g));
        EXPECT(!ref || d_is(&g, ref));
        EXPECT(fake_hipblaslt_checks() == 0);
    }
    if (failures)
        printf("FAIL refusal %d\n", (int)r);
    g.C = own_c;
    drop(&g, ref);
}

static void case_whole(void)
{
    for (enum refusal r = NO_ALGO; r <= ALPHA_VECTOR; r++)
        refused(r);
}

/* ---- a capture elsewhere ---- */

static void case_capture(void)
{
    struct gemm g;
    make(&g, &plain);
    char *ref = reference(&g);
    expect_whole(&g, ref);
    hipStream_t other;
    hipGraph_t graph;
    MUST(hipStreamCreate(&other));
    MUST(hipStreamBeginCapture(other, hipStreamCaptureModeRelaxed));
    expect_whole(&g, ref);
    EXPECT(fake_hipblaslt_checks() == 0);
    MUST(hipStreamEndCapture(other, &graph));
    MUST(hipGraphDestroy(graph));
    expect_sliced(&g, ref, 3);
    MUST(hipStreamDestroy(other));
    drop(&g, ref);
}

/* A workspace enough for every slice but not for the whole call (FAKE_HIPBLASLT_WORKSPACE_PER:
 * the whole call needs 56 bytes, the slices 16 and 24): forwarded as called, it fails as it does
 * without gpuprio, not made to succeed by slices that need less; with all 64 bytes, the same
 * call slices. */
static void case_workspace(void)
{
    struct gemm g;
    make(&g, &plain);
    char *ref = reference(&g);
    expect_whole(&g, ref);
    expect_sliced(&g, ref, 3);
    g.workspace_size = 32;
    reset_d(&g);
    hiphal_lt_status native = call_with(fake_matmul, &g);
    hiphal_lt_status st = call_low(&g);
    EXPECT(native == HIPHAL_LT_INVALID_VALUE);
    EXPECT(st == native);
    EXPECT(fake_hipblaslt_calls() == 1);
    EXPECT(as_called(0, &g));
    g.workspace_size = sizeof g.workspace;
    expect_sliced(&g, ref, 3);
    drop(&g, ref);
}

/* A call timed (its first: the events recorded around it are kept for the next call of its kind
 * to read), then hipDeviceReset: the same kind of call on a new stream touches no event of the
 * reset device (the simulator counts such uses, and fails the process at exit), and is right. */
static void case_reset(void)
{
    struct gemm g;
    make(&g, &plain);
    char *ref = reference(&g);
    expect_whole(&g, ref);
    drop(&g, ref);
    MUST(hipDeviceReset());
    MUST(hipStreamCreate(&low));
    uint64_t before = hipsimStaleUses();
    make(&g, &plain);
    ref = reference(&g);
    expect_whole(&g, ref);
    EXPECT(hipsimStaleUses() == before);
    drop(&g, ref);
}

static void case_fail_slice(void)
{
    struct gemm g;
    make(&g, &plain);
    char *ref = reference(&g); /* the fake's first call */
    expect_whole(&g, ref);     /* its second */
    EXPECT(call_low(&g) == EXECUTION_FAILED);
    EXPECT(fake_hipblaslt_calls() == 2);
    EXPECT(is_slice(0, 3, &g));
    drop(&g, ref);
}

/* ---- the oracle ---- */

/* D made by the fake in slices of `first` and the rest along the form's cut, directly. */
static bool by_hand_equals(struct gemm *g, const char *ref, uint64_t first)
{
    bool along_n = !g->f.tall;
    uint64_t extent = along_n ? g->n : g->m;
    reset_d(g);
    for (int s = 0; s < 2; s++) {
        uint64_t at = s ? first : 0, size = s ? extent - first : first;
        uint64_t m = along_n ? g->m : size, n = along_n ? size : g->n;
        hiphal_lt_layout_opaque *la = g->la, *lb = g->lb, *lc, *ld;
        const char *A = g->A, *B = g->B;
        char *C = g->C, *D = g->D;
        if (along_n) {
            MUST(hipblasLtMatrixLayoutCreate(&lb, g->f.type, g->f.tb ? n : g->k, g->f.tb ? g->k : n,
                                             g->ldb));
            B += (g->f.tb ? at : at * (uint64_t)g->ldb) * g->es;
            C += at * (uint64_t)g->ldc * g->es;
            D += at * (uint64_t)g->ldd * g->es;
        } else {
            MUST(hipblasLtMatrixLayoutCreate(&la, g->f.type, g->f.ta ? g->k : m, g->f.ta ? m : g->k,
                                             g->lda));
            A += (g->f.ta ? at * (uint64_t)g->lda : at) * g->es;
            C += at * g->es;
            D += at * g->es;
        }
        MUST(hipblasLtMatrixLayoutCreate(&lc, g->f.type, m, n, g->ldc));
        MUST(hipblasLtMatrixLayoutCreate(&ld, g->f.type, m, n, g->ldd));
        MUST(fake_matmul(g->handle, g->desc, &g->alpha, A, la, B, lb, &g->beta, C, lc, D, ld,
                         &g->algo, g->workspace, sizeof g->workspace, (struct ihipStream_t *)low));
        MUST(hipStreamSynchronize(low));
        MUST(hipblasLtMatrixLayoutDestroy(along_n ? lb : la));
        MUST(hipblasLtMatrixLayoutDestroy(lc));
        MUST(hipblasLtMatrixLayoutDestroy(ld));
    }
    return d_is(g, ref);
}

static void case_oracle(void)
{
    static const struct form forms[] = {
        {"fp32 NT", F32, false, true, false, false, false, 0},
        {"bf16 TN, along m, C is D", BF16, true, false, true, false, true, 0},
        {"fp16 TT, bias", F16, true, true, false, false, false, HIPHAL_LT_EPILOGUE_BIAS},
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        struct gemm g;
        make(&g, &forms[i]);
        char *ref = reference(&g);
        EXPECT(by_hand_equals(&g, ref, 1024));
        EXPECT(!by_hand_equals(&g, ref, 1023));
        EXPECT(!by_hand_equals(&g, ref, 1025));
        drop(&g, ref);
    }
}

static int fork_held_child(void)
{
    MUST(hipStreamCreate(&low));
    case_n("sliced");
    printf("child: n sliced done\n");
    return failures ? 1 : 0;
}

static void case_fork_held(void)
{
    const char *fail = held_lock_fork("hip_gemm_clock.c", "times", 60, fork_held_child);
    if (fail) {
        printf("FAIL fork_held: %s\n", fail);
        failures++;
    }
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    start();
    if (!strcmp(which, "conformance"))
        case_conformance();
    else if (!strcmp(which, "n") && argc > 2)
        case_n(argv[2]);
    else if (!strcmp(which, "whole"))
        case_whole();
    else if (!strcmp(which, "capture"))
        case_capture();
    else if (!strcmp(which, "workspace"))
        case_workspace();
    else if (!strcmp(which, "reset"))
        case_reset();
    else if (!strcmp(which, "fail_slice"))
        case_fail_slice();
    else if (!strcmp(which, "fork_held"))
        case_fork_held();
    else if (!strcmp(which, "oracle"))
        case_oracle();
    else {
        printf("usage: hiplt_slices conformance|n EXPECT|whole|capture|workspace|reset|fail_slice|"
               "fork_held|oracle\n");
        return 2;
    }
    gemm_hold(); /* its stream still there: a process without queues has no entry in top */
    if (!on_legacy())
        MUST(hipStreamDestroy(low));
    if (!failures)
        printf("ok %s\n", which);
    return failures ? 1 : 0;
}
