/*
 * budget.c - a throttled queue keeps its in-flight GPU time within GPUPRIO_WINDOW_US, learned per
 * kernel and grid, while short commands still fill the window.
 *
 * One low-priority thread submits 2 ms kernels, then 100 us kernels of another grid (another
 * cost key), as fast as it can; an idle high-priority stream exists, so the low one is throttled,
 * and now and then it submits a short kernel. Both streams share the simulator's one hardware
 * queue (HIPSIM_HW_QUEUES=1), so whatever low work the runtime holds runs first. From the
 * simulator's trace (each kernel's submission to the runtime and its end), after a few kernels of
 * each kind to learn from:
 *   - at most budget / 2 ms + 1 long kernels are ever in flight (submitted and not ended; the
 *     shim counts a command until it has seen it end, so its count is never lower): the work
 *     still to run stays within the budget, and the oldest kernel may be near its end; and a
 *     high-priority kernel waits for at most the budget plus one long kernel of low work;
 *   - the short kernels reach more in flight than the long ones may: what was learned for one
 *     key does not hold back another.
 *
 *   budget BUDGET_US           (under LD_PRELOAD of the shim with GPUPRIO_WINDOW_US=BUDGET_US)
 *   budget --violated BUDGET_US  the same run with GPUPRIO_WINDOW_US=0 (commands counted only):
 *                              expected to break the bound, which shows that the check can fail
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "sched_test.h"

#define LONG_KERNELS 60
#define LONG_NS 2000000ull
#define SHORT_KERNELS 200
#define SHORT_NS 100000ull
#define LEARN 8 /* kernels of each kind before the estimate is expected to hold */
#define BURSTS 4
#define BURST_GAP_NS 25000000ull
#define HIGH_NS 200000ull

enum { TAG_LONG = 1, TAG_SHORT, TAG_HIGH };

static struct gp_api api;
static const void *kernel;
static hipStream_t low, high;

static hipError_t launch(uint64_t ns, uint64_t tag, unsigned grid, hipStream_t s)
{
    void *args[] = {&ns, &tag};
    dim3 g = {grid, 1, 1}, one = {1, 1, 1};
    return hipLaunchKernel(kernel, g, one, args, 0, s);
}

static void *low_worker(void *arg)
{
    (void)arg;
    for (int k = 0; k < LONG_KERNELS; k++)
        MUST(launch(LONG_NS, TAG_LONG, 1, low));
    for (int k = 0; k < SHORT_KERNELS; k++)
        MUST(launch(SHORT_NS, TAG_SHORT, 2, low));
    MUST(hipStreamSynchronize(low));
    return NULL;
}

static int by_submit(const void *a, const void *b)
{
    const hipsimTraceEntry *x = a, *y = b;
    return (x->submit_ns > y->submit_ns) - (x->submit_ns < y->submit_ns);
}

/* The most kernels tagged tag in flight at once, from the (skip+1)th submitted on; e is sorted
 * by submission. */
static int most_in_flight(const hipsimTraceEntry *e, size_t n, uint64_t tag, int skip)
{
    int most = 0, seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].tag != tag || seen++ < skip)
            continue;
        int count = 0;
        for (size_t j = 0; j <= i; j++)
            if (e[j].tag == tag && e[j].end_ns > e[i].submit_ns)
                count++;
        if (count > most)
            most = count;
    }
    return most;
}

/* The most low-priority GPU time that started while a high-priority kernel waited: nominal
 * durations, since a loaded machine stretches the simulated ones. */
static uint64_t most_ahead_ns(const hipsimTraceEntry *e, size_t n)
{
    uint64_t most = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].tag != TAG_HIGH)
            continue;
        uint64_t sum = 0;
        for (size_t j = 0; j < n; j++)
            if (e[j].tag != TAG_HIGH && e[j].start_ns >= e[i].submit_ns &&
                e[j].start_ns < e[i].start_ns)
                sum += e[j].tag == TAG_LONG ? LONG_NS : SHORT_NS;
        if (sum > most)
            most = sum;
    }
    return most;
}

int main(int argc, char **argv)
{
    bool expect_violation = argc == 3 && strcmp(argv[1], "--violated") == 0;
    if (argc != 2 && !expect_violation) {
        fprintf(stderr, "usage: budget BUDGET_US | budget --violated BUDGET_US\n");
        return 2;
    }
    uint64_t budget_ns = strtoull(argv[argc - 1], NULL, 10) * 1000;
    api = gp_api_find();
    kernel = busy_register();
    enum { CAP = 1024 };
    EXPECT(hipsimTraceStart(CAP) == 0);
    MUST(hipStreamCreate(&high));
    MUST(hipStreamCreate(&low));
    EXPECT(api.stream_set_priority(high, GPUPRIO_PRIORITY_HIGH) == 0);
    EXPECT(api.stream_set_priority(low, GPUPRIO_PRIORITY_LOW) == 0);

    pthread_t th;
    pthread_create(&th, NULL, low_worker, NULL);
    for (int b = 0; b < BURSTS; b++) {
        struct timespec ts = {0, (long)BURST_GAP_NS};
        nanosleep(&ts, NULL);
        MUST(launch(HIGH_NS, TAG_HIGH, 1, high));
        MUST(hipStreamSynchronize(high));
    }
    pthread_join(th, NULL);

    static hipsimTraceEntry e[CAP];
    size_t n = hipsimTraceGet(e, CAP);
    EXPECT(n == LONG_KERNELS + SHORT_KERNELS + BURSTS);
    n = n < CAP ? n : CAP;
    qsort(e, n, sizeof *e, by_submit);
    int long_most = most_in_flight(e, n, TAG_LONG, LEARN);
    int short_most = most_in_flight(e, n, TAG_SHORT, LEARN);
    uint64_t ahead = most_ahead_ns(e, n);
    int long_bound = (int)(budget_ns / LONG_NS) + 1;
    printf("budget %llu us: at most %d kernels of 2 ms and %d of 100 us in flight; at most %.1f ms "
           "of low-priority work started while a high-priority kernel waited\n",
           (unsigned long long)(budget_ns / 1000), long_most, short_most, ahead / 1e6);
    if (expect_violation) {
        EXPECT(long_most > long_bound);
        EXPECT(ahead > budget_ns + LONG_NS);
    } else {
        EXPECT(long_most <= long_bound);
        EXPECT(ahead <= budget_ns + LONG_NS);
        EXPECT(short_most > long_bound);
        struct gpuprio_queue_stats st = settled_stats(&api, low);
        EXPECT(st.submitted == LONG_KERNELS + SHORT_KERNELS && st.in_flight == 0);
    }
    MUST(hipStreamDestroy(low));
    MUST(hipStreamDestroy(high));
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
