/*
 * watchdog.c - admission never deadlocks an application that makes a stream wait for something
 * its own thread does later.
 *
 *   watchdog WATCHDOG_MS [suspended]
 *
 * The low-priority stream (a higher-priority stream exists, so it is throttled to the window of
 * GPUPRIO_WINDOW=1) first waits for a flag in host memory, then gets a kernel. The kernel cannot
 * be admitted: the wait fills the window and is reached only once the thread sets the flag,
 * which it does after the launch returns. The progress watchdog lets the launch through after
 * GPUPRIO_WATCHDOG_MS with one warning (watchdog.sh counts it), and everything completes. Until
 * the flag is set, gpuprio_stream_drain times out.
 *
 * With "suspended" the wait goes on the high-priority stream instead, which it keeps active, so
 * the low stream is suspended: the launch is held behind a higher queue that completes nothing
 * until this thread sets the flag, and the watchdog lets it through the same way. Meanwhile a
 * second thread puts a short kernel on the high stream every 10 ms (behind the wait), as a
 * producer would: the high queue keeps moving, so no other process takes it for stalled
 * (docs/board.md, "Stopped and hung processes"), and only the watchdog lets the launch through.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "sched_test.h"

static _Atomic uint32_t flag; /* the simulator reads it atomically */

struct producer {
    const void *kernel;
    hipStream_t stream;
};

/* Puts a short kernel on the high stream every 10 ms until the flag is set. */
static void *produce(void *arg)
{
    const struct producer *p = arg;
    while (!atomic_load(&flag)) {
        MUST(busy_launch(p->kernel, 1000, 2, p->stream));
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "suspended"))) {
        fprintf(stderr, "usage: watchdog WATCHDOG_MS [suspended]\n");
        return 2;
    }
    bool suspended = argc == 3;
    uint64_t watchdog_ns = strtoull(argv[1], NULL, 10) * 1000000u;
    struct gp_api api = gp_api_find();
    const void *k = busy_register();
    hipStream_t high, low;
    MUST(hipStreamCreate(&high));
    MUST(hipStreamCreate(&low));
    EXPECT(api.stream_set_priority(high, GPUPRIO_PRIORITY_HIGH) == 0);
    hipStream_t waiting = suspended ? high : low;
    if (suspended) { /* the low stream joins scheduling first, so that the wait's makes it held */
        MUST(busy_launch(k, 1000, 1, low));
        MUST(hipStreamSynchronize(low));
    }

    uint64_t t0 = hipsimNowNs();
    MUST(hipStreamWaitValue32(waiting, (void *)&flag, 1, hipStreamWaitValueEq, 0xffffffffu));
    struct producer producer = {k, high};
    pthread_t t;
    if (suspended && pthread_create(&t, NULL, produce, &producer) != 0)
        return 2;
    MUST(busy_launch(k, 1000, 1, low));
    uint64_t held = hipsimNowNs() - t0;
    EXPECT(api.stream_drain(waiting, 50) == -ETIMEDOUT); /* the wait is still in flight */
    atomic_store(&flag, 1);
    if (suspended)
        pthread_join(t, NULL);
    MUST(hipStreamSynchronize(low));
    MUST(hipStreamSynchronize(high));

    struct gpuprio_queue_stats st = settled_stats(&api, low);
    EXPECT(st.submitted == 2 && st.completed == st.submitted && st.in_flight == 0);
    printf("low stream: %llu submitted, %llu completed, %llu in flight\n",
           (unsigned long long)st.submitted, (unsigned long long)st.completed,
           (unsigned long long)st.in_flight);
    EXPECT(held >= watchdog_ns * 9 / 10);
    EXPECT(st.held_ns >= watchdog_ns * 9 / 10);
    if (suspended)
        EXPECT(st.suspensions > 0);
    printf("the launch behind the wait was held %.0f ms\n", (double)held / 1e6);
    printf("suspended %llu times\n", (unsigned long long)st.suspensions);
    MUST(hipStreamDestroy(low));
    MUST(hipStreamDestroy(high));
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
