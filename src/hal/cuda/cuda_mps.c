/*
 * cuda_mps.c - what NVIDIA's Multi-Process Service changes for gpuprio (docs/mps.md): whether the
 * process is an MPS client, and the share of SMs a lower-priority client may use.
 *
 * An MPS client's work runs in the server's one context beside every other client's, so the
 * device's stream priorities compare across processes, as they do between the streams of one
 * process (creation.c gives streams the priority that matches their gpuprio priority, on one
 * scale in every process). The driver says whether it is a client (the MPS attribute; before
 * the driver knew it, the SM-count execution affinity, which only Volta and later MPS clients
 * support). Clients of GPUs before Volta share the server's hardware work queues, so a stream
 * waiting at a closed gate could hold another client's stream: such a device stays on Level 1.
 *
 * The share of SMs (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) is read by the driver when it starts
 * (measured on an H100 with driver 580: set after cuInit, it is ignored), so it is settled in
 * the library's constructor, before any runtime call, from GPUPRIO_CU_RESERVE given as a
 * percentage and the process's priority: a process at normal priority or below keeps its hands
 * off the reserved share. Without MPS the driver ignores the variable. The constructor also
 * records what it set in GPUPRIO_MPS_SHARE_SET, so that a child started with another priority
 * does not take its parent's limit for the user's own.
 */
#include "cuda_mps.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_bind.h"
#include "cuda_compat.h"
#include "gp_config.h"
#include "gp_log.h"
#include "gp_options.h"
#include "gpuprio.h"

#define SHARE_VAR "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
#define SHARE_SET_VAR "GPUPRIO_MPS_SHARE_SET"
/* CU_DEVICE_ATTRIBUTE_MPS_ENABLED, by number: older headers do not name it. */
#define ATTRIBUTE_MPS_ENABLED 133

/* What the constructor found, for the line that says so once the process is known to be a
 * client. */
static struct {
    struct gp_amount reserve;
    unsigned kept; /* the user's own share, as tight as the reserve's or tighter, 0: none */
    bool applies;  /* the reserve applies to this process (normal priority or below) */
} share;

/* A percentage 1..100 in text, or 0. */
static unsigned percent_of(const char *text)
{
    uint64_t v;
    return text && gp_parse_uint(text, 1, 100, &v) ? (unsigned)v : 0;
}

void cudahal_mps_before_runtime(void)
{
    const char *had = getenv(SHARE_VAR), *set_by_parent = getenv(SHARE_SET_VAR);
    unsigned own = percent_of(had);
    if (had && set_by_parent && !strcmp(had, set_by_parent)) {
        unsetenv(SHARE_VAR); /* a gpuprio parent's, not the user's */
        own = 0;
    }
    unsetenv(SHARE_SET_VAR);
    int priority = GPUPRIO_PRIORITY_NORMAL;
    gp_opt_priority(GP_OPT_PRIORITY, &priority);
    if (!gp_opt_amount(GP_OPT_CU_RESERVE, &share.reserve) || share.reserve.value == 0 ||
        priority > GPUPRIO_PRIORITY_NORMAL)
        return;
    share.applies = true;
    if (!share.reserve.percent || share.reserve.value >= 100)
        return; /* said once the process is known to be a client (say_share) */
    unsigned want = 100 - share.reserve.value;
    if (own && own <= want) {
        share.kept = own;
        return;
    }
    char text[4];
    snprintf(text, sizeof text, "%u", want);
    if (setenv(SHARE_VAR, text, 1) == 0)
        setenv(SHARE_SET_VAR, text, 1);
}

/* Once per process, in a client: what became of GPUPRIO_CU_RESERVE, where it could not be applied
 * as given (the share itself is said with the device's line, sched_board.c). */
static void say_share(void)
{
    static _Atomic bool said;
    if (!share.applies || atomic_exchange(&said, true))
        return;
    if (!share.reserve.percent)
        gp_log(GP_LOG_WARN,
               "GPUPRIO_CU_RESERVE=%u is a count of compute units, but MPS takes a client's share "
               "of SMs as a percentage before the driver starts, when their number is not known: "
               "give it as a percentage; this process uses every SM",
               share.reserve.value);
    else if (share.reserve.value >= 100)
        gp_log(GP_LOG_WARN,
               "GPUPRIO_CU_RESERVE=100%% would leave this process no SM; it uses every SM");
    else if (share.kept)
        gp_log(GP_LOG_INFO,
               "%s=%u is already within what GPUPRIO_CU_RESERVE=%u%% leaves this process; kept",
               SHARE_VAR, share.kept, share.reserve.value);
}

int cudahal_mps(int device, struct xq_mps *out)
{
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*affinity_support)(int *, CUexecAffinityType, CUdevice);
    CUresult (*ctx_affinity)(CUexecAffinityParam *, CUexecAffinityType);
    CUresult (*ctx_device)(CUdevice *);
    *(void **)&attribute = cudahal_sym("cuDeviceGetAttribute");
    *(void **)&affinity_support = cudahal_sym("cuDeviceGetExecAffinitySupport");
    *(void **)&ctx_affinity = cudahal_sym("cuCtxGetExecAffinity");
    *(void **)&ctx_device = cudahal_sym("cuCtxGetDevice");
    *out = (struct xq_mps){.client = -1};
    int v = 0;
    if (attribute &&
        attribute(&v, (CUdevice_attribute)ATTRIBUTE_MPS_ENABLED, (CUdevice)device) == CUDA_SUCCESS)
        out->client = v != 0;
    else if (affinity_support &&
             affinity_support(&v, CU_EXEC_AFFINITY_TYPE_SM_COUNT, (CUdevice)device) == CUDA_SUCCESS)
        out->client = v ? 1 : -1; /* without support it may still be a client before Volta */
    if (out->client != 1)
        return out->client < 0 ? -ENOTSUP : 0;
    int major = 0;
    if (attribute && attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               (CUdevice)device) == CUDA_SUCCESS)
        out->shared_queues = major < 7;
    /* The driver then counts only the client's SMs, in the device's attributes too: the share is
     * the variable's, read when the driver started (this process's constructor is before that).
     * The limit is the current context's: only when it is the device's. */
    unsigned percent = percent_of(getenv(SHARE_VAR));
    CUdevice current = -1;
    CUexecAffinityParam limit = {.type = CU_EXEC_AFFINITY_TYPE_SM_COUNT};
    if (percent && percent < 100 && ctx_device && ctx_device(&current) == CUDA_SUCCESS &&
        current == (CUdevice)device && ctx_affinity &&
        ctx_affinity(&limit, CU_EXEC_AFFINITY_TYPE_SM_COUNT) == CUDA_SUCCESS) {
        out->share = percent;
        out->sms = limit.param.smCount.val;
    }
    say_share();
    return 0;
}
