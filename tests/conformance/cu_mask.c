/*
 * cu_mask.c - CU masks: what hipExtStreamCreateWithCUMask and hipExtStreamGetCUMask answer, and
 * that a masked stream's kernels use only its CUs.
 *
 * The program gives the simulated device 8 compute slots, which stand for CUs
 * (HIPSIM_COMPUTE_SLOTS, set before the first HIP call; docs/simulator.md). A kernel's blocks
 * spread over every free CU its stream may use, so a wide kernel fills the device; on a stream
 * masked to 6 CUs it leaves 2 free, where another stream's kernel starts at once (fault
 * "cu-mask-ignored": the wide kernel takes all 8, and the other waits for it), and it runs
 * longer, its blocks in more waves (8 blocks on 6 CUs: 4/3 of its time on 8).
 */
#include "conf.h"

static atomic_int ran;

static void show_mask(const char *label, hipStream_t s, uint32_t words)
{
    uint32_t mask[2] = {0xdead, 0xdead};
    hipError_t e = hipExtStreamGetCUMask(s, words, mask);
    printf("%s -> %s", label, conf_err(e));
    if (e == hipSuccess)
        printf(" mask 0x%x", (unsigned)mask[0]);
    printf("\n");
}

/* Launches a `blocks`-wide kernel of `ns` on s. */
static hipError_t launch_wide(hipStream_t s, unsigned blocks, uint64_t ns)
{
    void *args[] = {&ns};
    return hipLaunchKernel(conf_k.sleep, conf_dim(blocks), conf_dim(1), args, 0, s);
}

/* Whether a one-block kernel on other starts while a wide kernel on wide runs (held until the
 * answer is in: the one-block kernel gets 500 ms to start). */
static int runs_beside(hipStream_t wide, hipStream_t other)
{
    static conf_hold wide_runs;
    atomic_store(&ran, 0);
    MUST(conf_launch_hold_wide(wide, &wide_runs, 8));
    if (!conf_await(&wide_runs.started, 1, 2000))
        printf("wide kernel did not start within 2 s\n");
    MUST(conf_launch_flag(other, &ran, 1, 0));
    int beside = conf_await(&ran, 1, 500);
    conf_release(&wide_runs);
    MUST(hipDeviceSynchronize());
    return beside;
}

int main(void)
{
    setenv("HIPSIM_COMPUTE_SLOTS", "8", 1);
    conf_init();
    int cus = 0;
    SHOW("hipDeviceGetAttribute(MultiprocessorCount)",
         hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, 0));
    printf("compute units %d\n", cus);

    printf("-- creating and reading masks\n");
    hipStream_t m, full, s;
    uint32_t six = 0x3f, none = 0, outside = 0x1f0;
    SHOW("hipExtStreamCreateWithCUMask(size 0)", hipExtStreamCreateWithCUMask(&m, 0, &six));
    SHOW("hipExtStreamCreateWithCUMask(NULL mask)", hipExtStreamCreateWithCUMask(&m, 1, NULL));
    SHOW("hipExtStreamCreateWithCUMask(0x3f)", hipExtStreamCreateWithCUMask(&m, 1, &six));
    unsigned flags = 99;
    int prio = 99;
    SHOW("hipStreamGetFlags", hipStreamGetFlags(m, &flags));
    SHOW("hipStreamGetPriority", hipStreamGetPriority(m, &prio));
    printf("flags %u, priority %d\n", flags, prio);
    show_mask("hipExtStreamGetCUMask(masked)", m, 1);
    show_mask("hipExtStreamGetCUMask(masked, size 0)", m, 0);
    SHOW("hipExtStreamGetCUMask(NULL out)", hipExtStreamGetCUMask(m, 1, NULL));
    show_mask("hipExtStreamGetCUMask(null stream)", NULL, 1);
    MUST(hipStreamCreate(&s));
    show_mask("hipExtStreamGetCUMask(unmasked)", s, 1);
    MUST(hipExtStreamCreateWithCUMask(&full, 1, &none));
    show_mask("hipExtStreamGetCUMask(mask 0)", full, 1);
    MUST(hipStreamDestroy(full));
    MUST(hipExtStreamCreateWithCUMask(&full, 1, &outside));
    show_mask("hipExtStreamGetCUMask(mask 0x1f0)", full, 1);
    MUST(hipStreamDestroy(full));

    printf("-- a masked stream's kernels use its CUs only\n");
    MUST(hipStreamCreate(&full));
    printf("unmasked wide kernel leaves a CU free: %s\n", conf_yes(runs_beside(full, s)));
    printf("masked wide kernel leaves a CU free: %s\n", conf_yes(runs_beside(m, s)));
    hipEvent_t a, b;
    MUST(hipEventCreate(&a));
    MUST(hipEventCreate(&b));
    MUST(hipEventRecord(a, m));
    MUST(launch_wide(m, 8, 30 * CONF_MS));
    MUST(hipEventRecord(b, m));
    MUST(hipEventSynchronize(b));
    float ms = 0;
    MUST(hipEventElapsedTime(&ms, a, b));
    printf("8 blocks on 6 CUs take at least 4/3 of their time: %s\n", conf_yes(ms >= 39.5f));

    MUST(hipEventDestroy(a));
    MUST(hipEventDestroy(b));
    MUST(hipStreamDestroy(m));
    MUST(hipStreamDestroy(full));
    MUST(hipStreamDestroy(s));
    return 0;
}
