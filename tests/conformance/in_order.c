/*
 * in_order.c - a stream runs its commands in submission order.
 *
 * Kernels and host functions append their index to a log (from the simulator's worker threads).
 * Long kernels are followed by commands that take no compute slot (host functions, copies), so a
 * stream whose commands could overlap or reorder (fault "stream-unordered") shows up in the log:
 * the slot-free command would run while the long kernel still holds the slot. Every fourth
 * command is launched through hipHccModuleLaunchKernel's C name (exported by ROCm 6 and 7), which
 * keeps its place like any other launch (also under the shim and the scheduler: the shim and hpf
 * variants).
 */
#include "conf.h"

#define N 16

static conf_log log_a, log_b;
static conf_hlog hl_a[N], hl_b[2 * N];
static hipFunction_t log_fn; /* the conf_log kernel as a module function */

/* Command i of a sequence: every fourth a 20 ms kernel, then a 0 ms kernel, a host function and
 * a 0 ms kernel through hipHccModuleLaunchKernel. */
static void enqueue(hipStream_t s, conf_log *log, conf_hlog *hl, int value, int i)
{
    uint64_t ns = 0;
    void *args[] = {&log, &value, &ns};
    switch (i % 4) {
    case 0:
        MUST(conf_launch_log(s, log, value, 20 * CONF_MS));
        break;
    case 2:
        hl->log = log;
        hl->value = value;
        MUST(hipLaunchHostFunc(s, conf_host_log, hl));
        break;
    case 3:
        MUST(hipHccModuleLaunchKernel(log_fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL, NULL, NULL));
        break;
    default:
        MUST(conf_launch_log(s, log, value, 0));
        break;
    }
}

static int is_b1(int v)
{
    return v >= 100 && v < 200;
}

static int is_b2(int v)
{
    return v >= 200 && v < 300;
}

static int in_range(conf_log *l, int lo, int hi)
{
    /* 1 when the entries in [lo, hi) appear exactly once each, ascending. */
    int n = conf_log_count(l), next = lo;
    for (int i = 0; i < n && i < CONF_LOG_MAX; i++) {
        int v = atomic_load(&l->v[i]);
        if (v < lo || v >= hi)
            continue;
        if (v != next)
            return 0;
        next++;
    }
    return next == hi;
}

int main(void)
{
    conf_init();
    hipStream_t s1, s2, s3;
    MUST(hipStreamCreate(&s1));
    MUST(hipStreamCreate(&s2));
    MUST(hipStreamCreate(&s3));
    hipModule_t mod;
    MUST(hipModuleLoadData(&mod, "hipsim conformance module"));
    MUST(hipModuleGetFunction(&log_fn, mod, "conf_log"));

    /* One stream. */
    conf_log_reset(&log_a);
    for (int i = 0; i < N; i++)
        enqueue(s1, &log_a, &hl_a[i], i, i);
    SHOW("hipStreamSynchronize(s1)", hipStreamSynchronize(s1));
    conf_log_print("s1 order", &log_a);
    printf("s1 in submission order: %s\n", conf_yes(in_range(&log_a, 0, N)));

    /* Two streams, enqueued alternately, synchronised only per stream: each stream's commands
     * appear in its own submission order (the interleaving of the two is not defined). */
    conf_log_reset(&log_b);
    for (int i = 0; i < N; i++) {
        enqueue(s2, &log_b, &hl_b[2 * i], 100 + i, i);
        enqueue(s3, &log_b, &hl_b[2 * i + 1], 200 + i, i + 2);
    }
    SHOW("hipStreamSynchronize(s2)", hipStreamSynchronize(s2));
    SHOW("hipStreamSynchronize(s3)", hipStreamSynchronize(s3));
    printf("log entries: %d\n", conf_log_count(&log_b));
    conf_log_print_if("s2 order", &log_b, is_b1);
    conf_log_print_if("s3 order", &log_b, is_b2);
    printf("s2 in submission order: %s\n", conf_yes(in_range(&log_b, 100, 100 + N)));
    printf("s3 in submission order: %s\n", conf_yes(in_range(&log_b, 200, 200 + N)));

    /* Copies, memsets and kernels of one stream also take effect in order. */
    int *d = NULL, *d2 = NULL;
    MUST(hipMalloc((void **)&d, sizeof(int)));
    MUST(hipMalloc((void **)&d2, sizeof(int)));
    MUST(hipMemset(d2, 0, sizeof(int)));
    MUST(conf_launch_fill(s1, d, 5, 1, 20 * CONF_MS));
    MUST(conf_launch_add(s1, d, 1));
    MUST(hipMemcpyAsync(d2, d, sizeof(int), hipMemcpyDeviceToDevice, s1));
    MUST(conf_launch_add(s1, d2, 10));
    MUST(hipMemsetAsync(d, 0, sizeof(int), s1));
    MUST(conf_launch_add(s1, d, 7));
    SHOW("hipStreamSynchronize(s1)", hipStreamSynchronize(s1));
    printf("d = %d (fill 5, +1, memset 0, +7)\n", conf_read_int(d));
    printf("d2 = %d (copy of 6, +10)\n", conf_read_int(d2));

    MUST(hipFree(d));
    MUST(hipFree(d2));
    MUST(hipStreamDestroy(s1));
    MUST(hipStreamDestroy(s2));
    MUST(hipStreamDestroy(s3));
    MUST(hipModuleUnload(mod));
    return conf_done();
}
