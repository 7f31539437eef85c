/*
 * hip_reserve.c - GPUPRIO_CU_RESERVE on HIP (docs/configuration.md, "Hardware levers").
 *
 * AMD's command processor runs every process's queues side by side, and a kernel cannot be
 * preempted once its work groups hold the CUs. Reserving some CUs that lower-priority streams
 * never use lets an urgent kernel start at once, whatever runs beside it: a bound no admission
 * or gate can give against long kernels. The runtime's lever is a stream's CU mask
 * (hipExtStreamCreateWithCUMask); this module works out, per device, the mask that leaves the
 * reserved CUs out.
 *
 * The mask starts from the device's own (hipExtStreamGetCUMask of the null stream: every CU, or
 * those ROC_GLOBAL_CU_MASK leaves the process), so a restriction the user made stays. The
 * reserved CUs are spread evenly over the enabled ones rather than taken from one end: CUs are
 * numbered across shader engines, and a mask that keeps each engine busy keeps the lower
 * priorities' throughput. A count or percentage that would leave them no CU, a device with more
 * CUs than a mask here holds, or a runtime without CU masks: one warning naming the variable and
 * what is accepted, and no reservation on that device. The queries run on a thread of gpuprio's
 * own, so a failing one cannot change the application's last error.
 *
 * It also reads back the CUs of each stream created, for `gpuprio top`: on the creating thread
 * right after the creator succeeded, where the queries cannot fail.
 */
#include "hip_reserve.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gp_lockrank.h"
#include "gp_log.h"
#include "gp_options.h"
#include "hip_bind.h"
#include "hip_compat.h"
#include "hip_device.h"
#include "hip_platform.h"

#define MAX_DEVICES 64

enum reserve_state { UNKNOWN, NONE, MASKED };

static struct {
    enum reserve_state state;
    uint32_t words;
    uint32_t mask[HIPHAL_RESERVE_WORDS];
} devices[MAX_DEVICES];
/* Held while a device's mask is worked out, across the runtime's queries on gpuprio's own thread
 * (hiphal_on_own_thread), so that every creator of the device waits for the one mask: only stream
 * creators take it, holding no other lock of gpuprio's (the lowest rank, CU_RESERVE). Made anew,
 * and the masks forgotten, in a forked child (hiphal_reserve_forget_all). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    hipError_t (*attribute)(int *, hipDeviceAttribute_t, int);
    hipError_t (*get_mask)(hipStream_t, uint32_t, uint32_t *);
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&rt.attribute = hiphal_sym("hipDeviceGetAttribute");
    *(void **)&rt.get_mask = hiphal_sym("hipExtStreamGetCUMask");
}

/* What the device says, from its own thread. */
struct device_query {
    int device;
    int cus;
    uint32_t words;
    uint32_t mask[HIPHAL_RESERVE_WORDS];
    bool ok;
};

static void query_device(void *arg)
{
    struct device_query *q = arg;
    hipError_t (*set_device)(int) = hiphal_sym("hipSetDevice");
    pthread_once(&rt_once, resolve);
    q->ok = set_device && rt.attribute && rt.get_mask && set_device(q->device) == hipSuccess &&
            rt.attribute(&q->cus, hipDeviceAttributeMultiprocessorCount, q->device) == hipSuccess &&
            q->cus > 0 && q->cus <= HIPHAL_RESERVE_MAX_CUS;
    if (!q->ok)
        return;
    q->words = ((uint32_t)q->cus + 31) / 32;
    q->ok = rt.get_mask(NULL, q->words, q->mask) == hipSuccess;
}

static unsigned popcount(const uint32_t *mask, uint32_t words)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < words; i++)
        n += (unsigned)__builtin_popcount(mask[i]);
    return n;
}

/* Clears `reserve` of the `enabled` set bits of mask, one near the middle of each of `reserve`
 * equal runs of them. */
static void clear_spread(uint32_t *mask, uint32_t words, unsigned enabled, unsigned reserve)
{
    unsigned seen = 0, next = 0;
    uint64_t target = (uint64_t)enabled / (2 * reserve);
    for (uint32_t bit = 0; bit < words * 32 && next < reserve; bit++) {
        uint32_t m = UINT32_C(1) << (bit % 32);
        if (!(mask[bit / 32] & m))
            continue;
        if (seen == target) {
            mask[bit / 32] &= ~m;
            next++;
            target = (2 * (uint64_t)next + 1) * enabled / (2 * reserve);
        }
        seen++;
    }
}

static const char *setting(char *buf, size_t size, const struct gp_amount *a)
{
    snprintf(buf, size, "%u%s", (unsigned)a->value, a->percent ? "%" : "");
    return buf;
}

/* Works device's mask out (mu held). */
static void prepare(int device, const struct gp_amount *amount)
{
    char text[24];
    devices[device].state = NONE;
    if (!hiphal_sym("hipExtStreamCreateWithCUMask")) {
        gp_log(GP_LOG_WARN,
               "GPUPRIO_CU_RESERVE=%s: the HIP runtime has no hipExtStreamCreateWithCUMask, so "
               "streams cannot be confined to CUs; no compute units are reserved",
               setting(text, sizeof text, amount));
        return;
    }
    struct device_query q = {.device = device};
    if (hiphal_on_own_thread(query_device, &q) != 0 || !q.ok) {
        gp_log(GP_LOG_WARN,
               "GPUPRIO_CU_RESERVE=%s: cannot read device %d's compute units and CU mask from the "
               "HIP runtime (devices of at most %d CUs are supported); no compute units are "
               "reserved there",
               setting(text, sizeof text, amount), device, HIPHAL_RESERVE_MAX_CUS);
        return;
    }
    unsigned enabled = popcount(q.mask, q.words);
    unsigned reserve = gp_amount_of(amount, enabled);
    if (reserve == 0)
        return;
    if (reserve >= enabled) {
        gp_log(GP_LOG_WARN,
               "GPUPRIO_CU_RESERVE=%s: device %d has %u compute units for this process; accepted: "
               "a count below %u or a percentage that leaves at least one; no compute units are "
               "reserved there",
               setting(text, sizeof text, amount), device, enabled, enabled);
        return;
    }
    clear_spread(q.mask, q.words, enabled, reserve);
    memcpy(devices[device].mask, q.mask, sizeof q.mask);
    devices[device].words = q.words;
    devices[device].state = MASKED;
    gp_log(GP_LOG_INFO,
           "device %d: %u of its %u compute units reserved for the process's highest priority "
           "(GPUPRIO_CU_RESERVE=%s)",
           device, reserve, enabled, setting(text, sizeof text, amount));
}

void hiphal_stream_cus(hipStream_t stream, int device, struct xq_cus *out)
{
    pthread_once(&rt_once, resolve);
    int cus = 0;
    uint32_t mask[HIPHAL_RESERVE_WORDS];
    *out = (struct xq_cus){0};
    if (!rt.attribute || !rt.get_mask ||
        rt.attribute(&cus, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess ||
        cus <= 0 || cus > HIPHAL_RESERVE_MAX_CUS)
        return;
    uint32_t words = ((uint32_t)cus + 31) / 32;
    if (rt.get_mask(stream, words, mask) != hipSuccess)
        return;
    unsigned usable = popcount(mask, words);
    *out = (struct xq_cus){.usable = (uint16_t)usable,
                           .total = (uint16_t)cus,
                           .mask = usable < (unsigned)cus ? XQ_CU_MASKED : XQ_CU_ALL};
}

bool hiphal_reserve_mask(uint32_t *mask, uint32_t *words)
{
    struct gp_amount amount;
    if (!gp_opt_amount(GP_OPT_CU_RESERVE, &amount) || amount.value == 0)
        return false;
    int device = hiphal_platform.current_device();
    if (device < 0 || device >= MAX_DEVICES)
        return false;
    gp_mutex_lock(&mu, GP_RANK_CU_RESERVE);
    if (devices[device].state == UNKNOWN)
        prepare(device, &amount);
    bool masked = devices[device].state == MASKED;
    if (masked) {
        *words = devices[device].words;
        memcpy(mask, devices[device].mask, *words * sizeof *mask);
    }
    gp_mutex_unlock(&mu, GP_RANK_CU_RESERVE);
    return masked;
}

void hiphal_reserve_forget_all(void)
{
    pthread_mutex_init(&mu, NULL);
    /* UNKNOWN again: a mask a thread of the parent was working out reads NONE until it is done. */
    memset(devices, 0, sizeof devices);
}
