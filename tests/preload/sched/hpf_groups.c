/*
 * hpf_groups.c - highest priority first inside one process, with three priority groups like the
 * field report's six BERT tasks: two high-priority threads issue short bursts now and then, two
 * normal and two low-priority threads keep the device busy with 1 ms kernels, each thread on a
 * stream of its own, its priority set with gpuprio_thread_set_priority.
 *
 * From the simulator's kernel trace it checks Level-1 preemption's promise: once a
 * high-priority command is submitted (reaches the runtime, which the trace records; a clock
 * read by the test thread before its call would also count host stalls of that thread, which
 * no scheduler can bound), each lower-priority queue starts at most the in-flight window's
 * worth of kernels before the high-priority kernel starts, and low-priority kernels
 * start ahead of normal-priority ones at most by the window (HPF between the lower groups).
 * Everyone finishes all of its work, and gpuprio_stats shows what the scheduler did.
 *
 *   hpf_groups WINDOW          (under LD_PRELOAD of the shim with GPUPRIO_WINDOW=WINDOW)
 *   hpf_groups --violated N    the same run, expected to break the bound (GPUPRIO_POLICY=
 *                              passthrough, GPUPRIO_HW_PRIORITY=off): shows that the check can
 *                              fail
 *   hpf_groups --hcc N         the same run with the normal and low threads' kernels launched
 *                              through hipHccModuleLaunchKernel's C name (ROCm 6 and 7 export
 *                              it): scheduled like any launch, it keeps the same bounds
 *   hpf_groups --hardware N    the same run with hardware priorities alone (GPUPRIO_POLICY=
 *                              passthrough): the streams were created with the HIP priorities
 *                              of their threads' (greatest, default, least), on hardware queues
 *                              of those priorities, and the simulated device's dispatcher, which
 *                              prefers the more urgent queues, keeps the bound by itself
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "sched_test.h"

#define HIGH_THREADS 2
#define NORMAL_THREADS 2
#define LOW_THREADS 2
#define THREADS (HIGH_THREADS + NORMAL_THREADS + LOW_THREADS)
#define BURSTS 8
#define BURST_KERNELS 2
#define BURST_KERNEL_NS 200000ull
#define BURST_GAP_NS 12000000ull
#define WORK_KERNELS 40
#define WORK_KERNEL_NS 1000000ull

/* Tags: thread index in the high bits, burst (or 0) below. */
#define TAG(thread, burst) (((uint64_t)(thread) + 1) << 16 | (uint64_t)(burst))
#define TAG_THREAD(tag) ((int)((tag) >> 16) - 1)
#define TAG_BURST(tag) ((int)((tag)&0xffff))

static struct gp_api api;
static const void *kernel;
static pthread_barrier_t start;
static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int turn; /* the thread whose turn it is to create its stream */
static hipStream_t streams[THREADS];
static hipFunction_t hcc_fn; /* the kernel as a module function, when --hcc */

/* One work kernel of thread t's lower-priority queue. */
static hipError_t work_launch(int t)
{
    if (!hcc_fn)
        return busy_launch(kernel, WORK_KERNEL_NS, TAG(t, 0), streams[t]);
    uint64_t ns = WORK_KERNEL_NS, tag = TAG(t, 0);
    void *args[] = {&ns, &tag};
    return hipHccModuleLaunchKernel(hcc_fn, 1, 1, 1, 1, 1, 1, 0, streams[t], args, NULL, NULL,
                                    NULL);
}

static int group_priority(int t)
{
    return t < HIGH_THREADS                    ? GPUPRIO_PRIORITY_HIGH
           : t < HIGH_THREADS + NORMAL_THREADS ? GPUPRIO_PRIORITY_NORMAL
                                               : GPUPRIO_PRIORITY_LOW;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    EXPECT(api.thread_set_priority(group_priority(t)) == 0);
    /* Streams are created in thread order, so they share the simulator's hardware queues the
     * same way every run: each high-priority stream shares one with a low-priority stream. */
    pthread_mutex_lock(&turn_mu);
    while (turn != t)
        pthread_cond_wait(&turn_cv, &turn_mu);
    MUST(hipStreamCreate(&streams[t]));
    turn++;
    pthread_cond_broadcast(&turn_cv);
    pthread_mutex_unlock(&turn_mu);
    warm_up(streams[t]);
    pthread_barrier_wait(&start);
    if (t < HIGH_THREADS) {
        for (int b = 1; b <= BURSTS; b++) {
            sleep_ns(BURST_GAP_NS);
            for (int k = 0; k < BURST_KERNELS; k++)
                MUST(busy_launch(kernel, BURST_KERNEL_NS, TAG(t, b), streams[t]));
            MUST(hipStreamSynchronize(streams[t]));
        }
    } else {
        for (int k = 0; k < WORK_KERNELS; k++)
            MUST(work_launch(t));
        MUST(hipStreamSynchronize(streams[t]));
    }
    return NULL;
}

/* The most kernels any one lower-priority queue started in [from, to). */
static int most_started(const hipsimTraceEntry *e, size_t n, uint64_t from, uint64_t to,
                        int first_thread)
{
    int most = 0;
    for (int t = first_thread; t < THREADS; t++) {
        int count = 0;
        for (size_t i = 0; i < n; i++)
            if (TAG_THREAD(e[i].tag) == t && e[i].start_ns >= from && e[i].start_ns < to)
                count++;
        if (count > most)
            most = count;
    }
    return most;
}

/*
 * The most kernels one queue of threads [lower, THREADS) started while a kernel of threads
 * [first, end) waited between reaching the runtime and starting. Once a command is submitted
 * its queue is active and every lower queue is held, so only what they already had in flight,
 * at most the window, can start ahead of it.
 */
static int most_overtaking(const hipsimTraceEntry *e, size_t n, int first, int end, int lower)
{
    int most = 0;
    for (size_t i = 0; i < n; i++) {
        int t = TAG_THREAD(e[i].tag);
        if (t < first || t >= end)
            continue;
        int m = most_started(e, n, e[i].submit_ns, e[i].start_ns, lower);
        if (m > most)
            most = m;
    }
    return most;
}

int main(int argc, char **argv)
{
    bool expect_violation = argc == 3 && strcmp(argv[1], "--violated") == 0;
    bool hardware = argc == 3 && strcmp(argv[1], "--hardware") == 0;
    bool hcc = argc == 3 && strcmp(argv[1], "--hcc") == 0;
    if (argc != 2 && !expect_violation && !hardware && !hcc) {
        fprintf(stderr, "usage: hpf_groups [--violated | --hardware | --hcc] WINDOW\n");
        return 2;
    }
    int window = atoi(argv[argc - 1]);
    api = gp_api_find();
    kernel = busy_register();
    hipModule_t mod = NULL;
    if (hcc) {
        MUST(hipModuleLoadData(&mod, "hpf_groups"));
        MUST(hipModuleGetFunction(&hcc_fn, mod, "busy"));
    }
    enum { CAP = 4096 };
    EXPECT(hipsimTraceStart(CAP) == 0);
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);

    static hipsimTraceEntry e[CAP];
    size_t n = hipsimTraceGet(e, CAP);
    EXPECT(n == HIGH_THREADS * BURSTS * BURST_KERNELS + (THREADS - HIGH_THREADS) * WORK_KERNELS);

    /* Everyone finished all of its work. */
    int done[THREADS] = {0};
    for (size_t i = 0; i < n && i < CAP; i++)
        if (TAG_THREAD(e[i].tag) >= 0 && TAG_THREAD(e[i].tag) < THREADS)
            done[TAG_THREAD(e[i].tag)]++;
    for (int t = 0; t < THREADS; t++)
        EXPECT(done[t] == (t < HIGH_THREADS ? BURSTS * BURST_KERNELS : WORK_KERNELS));

    /* Preemption: high-priority kernels overtake the normal and low queues; HPF between the
     * lower groups: normal kernels overtake the low queues. */
    size_t traced = n < CAP ? n : CAP;
    int worst_burst = most_overtaking(e, traced, 0, HIGH_THREADS, HIGH_THREADS);
    int low_ahead = most_overtaking(e, traced, HIGH_THREADS, HIGH_THREADS + NORMAL_THREADS,
                                    HIGH_THREADS + NORMAL_THREADS);

    printf("window %d: at most %d lower-priority kernels of one queue started between a "
           "high-priority kernel's submission and its start; at most %d low-priority kernels of "
           "one queue between a normal-priority kernel's submission and its start\n",
           window, worst_burst, low_ahead);
    if (expect_violation) {
        EXPECT(worst_burst > window);
        EXPECT(low_ahead > window);
    } else if (hardware) {
        EXPECT(worst_burst <= window);
        EXPECT(low_ahead <= window);
        for (int t = 0; t < THREADS; t++) {
            int hip_priority = 99;
            MUST(hipStreamGetPriority(streams[t], &hip_priority));
            EXPECT(hip_priority == hip_priority_of(group_priority(t)));
        }
    } else {
        EXPECT(worst_burst <= window);
        EXPECT(low_ahead <= window);
        /* What the scheduler did shows in the stats. */
        for (int t = HIGH_THREADS; t < THREADS; t++) {
            struct gpuprio_queue_stats st = settled_stats(&api, streams[t]);
            EXPECT(st.priority == group_priority(t));
            /* The warm-up's event record too; it was followed if priorities already differed
             * when it came. */
            EXPECT(st.submitted == WORK_KERNELS + 1 && st.completed >= WORK_KERNELS &&
                   st.completed <= st.submitted);
            EXPECT(st.suspensions > 0 && st.held_ns > 0 && st.in_flight == 0);
        }
        struct gpuprio_queue_stats all[64];
        int count = api.stats(all, 64);
        EXPECT(count >= THREADS);
    }
    for (int t = 0; t < THREADS; t++)
        MUST(hipStreamDestroy(streams[t]));
    if (mod)
        MUST(hipModuleUnload(mod));
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
