/*
 * legacy_launch.c - the legacy launch sequence of old HIP-Clang triple-chevron launches:
 * hipConfigureCall (grid, block, shared memory, stream), hipSetupArgument per argument,
 * hipLaunchByPtr (the kernel).
 *
 * Each thread has its own stack of configurations: hipConfigureCall pushes, hipSetupArgument
 * writes into the latest, hipLaunchByPtr pops the latest whatever its result. Kernels launched
 * this way see their arguments as one buffer. The program checks the stream each kernel ran on
 * and the order of kernels on a created stream and the null stream, nesting, the error cases
 * (nothing configured, a bad kernel or configuration, a configuration that fails), and two
 * threads configuring and launching in lockstep, whose configurations must stay their own.
 */
#include "conf.h"

/* The kernel's arguments as hipSetupArgument places them. */
typedef struct ll_args {
    conf_log *log;   /* offset 0 */
    int value;       /* offset 8 */
    uint64_t expect; /* offset 16: hipsimStreamId() of the stream it must run on */
    uint64_t ns;     /* offset 24 */
} ll_args;

#define OFF_LOG 0
#define OFF_VALUE 8
#define OFF_EXPECT 16
#define OFF_NS 24

/* What a kernel with value < SEEN_MAX saw. */
typedef struct ll_seen {
    int ran;
    unsigned grid, block;
    size_t shared, arg_bytes;
} ll_seen;

#define SEEN_MAX 64
static ll_seen seen[SEEN_MAX];

static const void *k_legacy;
static int not_a_kernel;
static conf_log order;

/* Appends its value to its log, or minus its value when it runs on a stream it did not expect. */
static uint64_t kernel_legacy(hipsimLaunch *l)
{
    ll_args a;
    if (l->args || !l->arg_buffer || l->arg_buffer_size < sizeof a)
        return 0;
    memcpy(&a, l->arg_buffer, sizeof a);
    conf_log_add(a.log, l->stream_id == a.expect ? a.value : -a.value);
    if (a.value >= 0 && a.value < SEEN_MAX) {
        ll_seen *s = &seen[a.value];
        s->ran = 1;
        s->grid = l->grid.x;
        s->block = l->block.x;
        s->shared = l->shared_mem_bytes;
        s->arg_bytes = l->arg_buffer_size;
    }
    return a.ns;
}

static hipError_t setup_args(conf_log *log, int value, hipStream_t s, uint64_t ns)
{
    uint64_t expect = hipsimStreamId(s);
    hipError_t e = hipSetupArgument(&log, sizeof log, OFF_LOG);
    if (e == hipSuccess)
        e = hipSetupArgument(&value, sizeof value, OFF_VALUE);
    if (e == hipSuccess)
        e = hipSetupArgument(&expect, sizeof expect, OFF_EXPECT);
    if (e == hipSuccess)
        e = hipSetupArgument(&ns, sizeof ns, OFF_NS);
    return e;
}

/* k<<<grid, block, shared, s>>>(log, value, s, ns) as old HIP-Clang emits it: no launch when
 * the configuration fails. */
static hipError_t legacy_launch(hipStream_t s, unsigned grid, unsigned block, size_t shared,
                                conf_log *log, int value, uint64_t ns)
{
    hipError_t e = hipConfigureCall(conf_dim(grid), conf_dim(block), shared, s);
    if (e != hipSuccess)
        return e;
    e = setup_args(log, value, s, ns);
    if (e != hipSuccess)
        return e;
    return hipLaunchByPtr(k_legacy);
}

static void show_seen(int value, const char *stream_name)
{
    const ll_seen *s = &seen[value];
    if (!s->ran) {
        printf("value %d: did not run\n", value);
        return;
    }
    printf("value %d: grid %u, block %u, shared %zu, %zu argument bytes, on %s\n", value, s->grid,
           s->block, s->shared, s->arg_bytes, stream_name);
}

/* ---- two threads in lockstep ---- */

#define ROUNDS 50

typedef struct ll_thread {
    int index;
    hipStream_t stream;
    conf_log log;
    hipError_t first_error;
} ll_thread;

static pthread_barrier_t lockstep;

static void note(ll_thread *t, hipError_t e)
{
    if (e != hipSuccess && t->first_error == hipSuccess)
        t->first_error = e;
}

/* Both threads configure, then both set their arguments, then both launch: a stack shared by
 * the threads would give each launch the other thread's configuration or arguments. */
static void *thread_main(void *arg)
{
    ll_thread *t = arg;
    for (int i = 0; i < ROUNDS; i++) {
        hipStream_t s = i % 2 ? NULL : t->stream;
        int value = 1000 * (t->index + 1) + i;
        note(t, hipConfigureCall(conf_dim(1), conf_dim(1), 0, s));
        pthread_barrier_wait(&lockstep);
        note(t, setup_args(&t->log, value, s, 0));
        pthread_barrier_wait(&lockstep);
        note(t, hipLaunchByPtr(k_legacy));
        pthread_barrier_wait(&lockstep);
    }
    note(t, hipStreamSynchronize(t->stream));
    note(t, hipStreamSynchronize(NULL));
    return NULL;
}

/* 1 when the log holds exactly base, base + 1, ... base + n - 1, in that order. */
static int log_is_sequence(conf_log *l, int base, int n)
{
    if (conf_log_count(l) != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (atomic_load(&l->v[i]) != base + i)
            return 0;
    return 1;
}

int main(void)
{
    conf_init();
    static const size_t sizes[] = {sizeof(conf_log *), sizeof(int), sizeof(uint64_t),
                                   sizeof(uint64_t)};
    k_legacy = conf_register("legacy", kernel_legacy, 4, sizes);

    hipStream_t s;
    MUST(hipStreamCreate(&s));

    printf("-- a created stream and the null stream\n");
    conf_log_reset(&order);
    SHOW("launch 1 on s (20 ms)", legacy_launch(s, 2, 3, 0, &order, 1, 20 * CONF_MS));
    SHOW("launch 2 on s", legacy_launch(s, 2, 3, 0, &order, 2, 0));
    SHOW("launch 3 on the null stream", legacy_launch(NULL, 4, 5, 16, &order, 3, 0));
    SHOW("launch 4 on s", legacy_launch(s, 2, 3, 0, &order, 4, 0));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    conf_log_print("order", &order);
    show_seen(1, "s");
    show_seen(3, "the null stream");

    printf("-- arguments: any order, the last write wins\n");
    conf_log_reset(&order);
    {
        conf_log *log = &order;
        int value = 5, wrong = 99;
        uint64_t ns = 0, expect = hipsimStreamId(s);
        SHOW("hipConfigureCall(s)", hipConfigureCall(conf_dim(1), conf_dim(2), 8, s));
        SHOW("hipSetupArgument(ns)", hipSetupArgument(&ns, sizeof ns, OFF_NS));
        SHOW("hipSetupArgument(wrong value)", hipSetupArgument(&wrong, sizeof wrong, OFF_VALUE));
        SHOW("hipSetupArgument(expect)", hipSetupArgument(&expect, sizeof expect, OFF_EXPECT));
        SHOW("hipSetupArgument(log)", hipSetupArgument(&log, sizeof log, OFF_LOG));
        SHOW("hipSetupArgument(value)", hipSetupArgument(&value, sizeof value, OFF_VALUE));
        SHOW("hipLaunchByPtr", hipLaunchByPtr(k_legacy));
    }
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    conf_log_print("order", &order);
    show_seen(5, "s");

    printf("-- nesting: a launch pops the latest configuration\n");
    conf_log_reset(&order);
    SHOW("hipConfigureCall(outer, s)", hipConfigureCall(conf_dim(6), conf_dim(1), 0, s));
    SHOW("inner launch on the null stream", legacy_launch(NULL, 7, 1, 0, &order, 6, 0));
    SHOW("outer arguments", setup_args(&order, 7, s, 0));
    SHOW("outer hipLaunchByPtr", hipLaunchByPtr(k_legacy));
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    conf_log_print("order", &order);
    show_seen(6, "the null stream");
    show_seen(7, "s");

    printf("-- errors\n");
    conf_log_reset(&order);
    SHOW("hipLaunchByPtr, nothing configured", hipLaunchByPtr(k_legacy));
    SHOW("hipSetupArgument, nothing configured",
         hipSetupArgument(&not_a_kernel, sizeof not_a_kernel, 0));
    SHOW("hipConfigureCall(s)", hipConfigureCall(conf_dim(1), conf_dim(1), 0, s));
    SHOW("hipLaunchByPtr(not a kernel)", hipLaunchByPtr(&not_a_kernel));
    SHOW("hipLaunchByPtr again: the failed launch used it", hipLaunchByPtr(k_legacy));
    SHOW("hipConfigureCall(grid 0)", hipConfigureCall(conf_dim(0), conf_dim(1), 0, s));
    SHOW("its arguments", setup_args(&order, 8, s, 0));
    SHOW("hipLaunchByPtr(grid 0)", hipLaunchByPtr(k_legacy));
    SHOW("hipLaunchByPtr again", hipLaunchByPtr(k_legacy));
    hipStream_t gone;
    MUST(hipStreamCreate(&gone));
    MUST(hipStreamDestroy(gone));
    SHOW("hipConfigureCall(destroyed stream)", hipConfigureCall(conf_dim(1), conf_dim(1), 0, gone));
    SHOW("its arguments", setup_args(&order, 9, gone, 0));
    SHOW("hipLaunchByPtr(destroyed stream)", hipLaunchByPtr(k_legacy));
    SHOW("hipGetLastError", hipGetLastError());

    printf("-- a configuration that fails pushes nothing\n");
    int accepted = 0;
    hipError_t e = hipSuccess;
    for (int i = 0; i < 100 && e == hipSuccess; i++) {
        e = hipConfigureCall(conf_dim(1), conf_dim(1), 0, i % 2 ? NULL : s);
        if (e == hipSuccess) {
            MUST(setup_args(&order, 20 + i, i % 2 ? NULL : s, 0));
            accepted++;
        }
    }
    printf("configurations accepted: %d, then -> %s\n", accepted, conf_err(e));
    SHOW("hipGetLastError", hipGetLastError());
    for (int i = accepted - 1; i >= 0; i--) {
        hipError_t r = hipLaunchByPtr(k_legacy);
        if (r != hipSuccess)
            printf("launch %d -> %s\n", i, conf_err(r));
    }
    SHOW("one launch more", hipLaunchByPtr(k_legacy));
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    conf_log_print("order (latest configuration first)", &order);
    SHOW("hipGetLastError", hipGetLastError());

    printf("-- two threads in lockstep\n");
    static ll_thread threads[2];
    pthread_t tid[2];
    pthread_barrier_init(&lockstep, NULL, 2);
    for (int i = 0; i < 2; i++) {
        threads[i].index = i;
        conf_log_reset(&threads[i].log);
        MUST(hipStreamCreate(&threads[i].stream));
    }
    for (int i = 0; i < 2; i++)
        pthread_create(&tid[i], NULL, thread_main, &threads[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&lockstep);
    for (int i = 0; i < 2; i++) {
        ll_thread *t = &threads[i];
        printf("thread %d: first error %s, %d kernels, its own values in order on its streams: "
               "%s\n",
               i, conf_err(t->first_error), conf_log_count(&t->log),
               conf_yes(log_is_sequence(&t->log, 1000 * (i + 1), ROUNDS)));
        MUST(hipStreamDestroy(t->stream));
    }

    MUST(hipStreamDestroy(s));
    return conf_done();
}
