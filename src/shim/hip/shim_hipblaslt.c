/*
 * shim_hipblaslt.c - hipblasLtMatmul, exported by libgpuprio-hip.so so that a lower-priority
 * stream's long GEMM can run as slices of its output, each short enough that a higher priority
 * waits for one slice instead of the whole GEMM (docs/design.md, "Long kernels: GEMM slices",
 * "On ROCm: hipBLASLt"). PyTorch reaches it for its matmuls on Instinct GPUs, where hipBLASLt is
 * its default BLAS.
 *
 * The shim decides only whether slicing can help: GPUPRIO_GEMM_SLICE_US is set in the
 * environment (for hipBLASLt slicing is off unless it is: its exactness on AMD's kernels is an
 * assumption no AMD GPU has checked yet), no stream capture is in progress, and the stream's
 * queue is held by gates below a higher priority (Level 2). The slices' kernels reach the runtime
 * through the shim's own wrappers, so each is admitted and gated like any launch. What slices
 * exactly and how is the HAL's (src/hal/hip/hip_gemm.c). Everything else forwards the
 * application's call unchanged to its own hipblasLtMatmul; gpuprio never loads hipBLASLt, and a
 * process without it cannot have made the call (it then gets HIPBLAS_STATUS_NOT_INITIALIZED).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "core.h"
#include "gp_config.h"
#include "gp_options.h"
#include "hip_gemm.h"
#include "hip_gemm_clock.h"
#include "sched_board.h"
#include "xq_admission.h"
#include "xqueue.h"

#define GP_EXPORT __attribute__((visibility("default")))

/* The target in ns: GPUPRIO_GEMM_SLICE_US's where the environment sets it (a value it does not
 * accept is reported as the default used, 500, and is), else 0 (off; the option's default is
 * CUDA's). Fixed for the process. */
static uint64_t target_ns(void)
{
    static _Atomic int64_t cached = -1;
    int64_t t = atomic_load_explicit(&cached, memory_order_relaxed);
    if (t < 0) {
        const char *set = gp_config_get(gp_opt_desc(GP_OPT_GEMM_SLICE_US)->name);
        t = set ? (int64_t)(1000 * gp_opt_uint(GP_OPT_GEMM_SLICE_US)) : 0;
        atomic_store_explicit(&cached, t, memory_order_relaxed);
    }
    return (uint64_t)t;
}

static struct hiphal_gemm_when when_of(struct ihipStream_t *stream, uint64_t target)
{
    struct hiphal_gemm_when w = {.device = -1, .target_ns = target};
    core_resolve(); /* the runtime, for the stream's queue */
    w.capturing = xq_capturing();
    struct xqueue *q = core_queue_of((uintptr_t)stream, false);
    if (q) {
        w.device = q->device;
        w.gated = (atomic_load(&xq_st(q)->gate) & XQ_GATE_DEVICE) != 0;
    }
    return w;
}

/* What slicing did, said once at exit (GPUPRIO_LOG=info). */
__attribute__((destructor)) static void say_counts(void)
{
    gemm_tally_say(&hiphal_gemm_tally);
}

/* What slicing did on device, shown while the process runs: in its record on the device's board
 * (gpuprio top, metrics), on each change of a count. */
static void show_counts(int device)
{
    struct gemm_counts n;
    gemm_tally_device(&hiphal_gemm_tally, device, &n);
    sb_record_gemm(device, &n);
}

static void forget_counts(void)
{
    gemm_tally_forget(&hiphal_gemm_tally);
}

__attribute__((constructor)) static void show_counts_on_change(void)
{
    gemm_tally_on_counted(&hiphal_gemm_tally, show_counts);
    pthread_atfork(NULL, NULL, forget_counts);
    pthread_atfork(NULL, NULL, hiphal_gemm_clock_forget_all); /* its lock may be held at fork */
}

#define HLT_EXPORT_0(name, params, args)
#define HLT_DECLARE_0(name, params)
#define HLT_DECLARE_1(name, params) GP_EXPORT hiphal_lt_status name params;
#define HLT_API(name, exported, params, args) HLT_DECLARE_##exported(name, params)
#include "hipblaslt_api.def"
#undef HLT_API
/* The entry point hipblaslt_api.def marks exported (hipblasLtMatmul, whose parameter names the
 * body uses: another would need a wrapper of its own). */
#define HLT_EXPORT_1(name, params, args)                                                           \
    GP_EXPORT hiphal_lt_status name params                                                         \
    {                                                                                              \
        hiphal_pfn_##name real = hiphal_gemm_real(__builtin_return_address(0));                    \
        if (!real)                                                                                 \
            return HIPHAL_LT_NOT_INITIALIZED;                                                      \
        const struct hiphal_gemm_call c = {                                                        \
            handle, matmulDesc, alpha, A,         B,                                               \
            beta,   C,          D,     Adesc,     Bdesc,                                           \
            Cdesc,  Ddesc,      algo,  workspace, workspaceSizeInBytes,                            \
            stream};                                                                               \
        uint64_t target = target_ns();                                                             \
        if (!target || core_depth)                                                                 \
            return hiphal_gemm_matmul(real, &c, &(struct hiphal_gemm_when){.device = -1});         \
        struct hiphal_gemm_when w = when_of(stream, target);                                       \
        return hiphal_gemm_matmul(real, &c, &w);                                                   \
    }
#define HLT_API(name, exported, params, args) HLT_EXPORT_##exported(name, params, args)
#include "hipblaslt_api.def"
#undef HLT_API
