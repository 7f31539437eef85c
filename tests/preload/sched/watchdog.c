/*
 * watchdog.c - admission never deadlocks an application that makes a stream wait for something
 * its own thread does later.
 *
 * The low-priority stream (a higher-priority stream exists, so it is throttled to the window of
 * GPUPRIO_WINDOW=1) first waits for a flag in host memory, then gets a kernel. The kernel cannot
 * be admitted: the wait fills the window and is reached only once the thread sets the flag,
 * which it does after the launch returns. The progress watchdog lets the launch through after
 * GPUPRIO_WATCHDOG_MS with one warning (watchdog.sh counts it), and everything completes. Until
 * the flag is set, gpuprio_stream_drain times out.
 */
#include <errno.h>
#include <stdatomic.h>

#include "sched_test.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: watchdog WATCHDOG_MS\n");
        return 2;
    }
    uint64_t watchdog_ns = strtoull(argv[1], NULL, 10) * 1000000u;
    struct gp_api api = gp_api_find();
    const void *k = busy_register();
    hipStream_t high, low;
    MUST(hipStreamCreate(&high));
    MUST(hipStreamCreate(&low));
    EXPECT(api.stream_set_priority(high, GPUPRIO_PRIORITY_HIGH) == 0);
    static _Atomic uint32_t flag; /* the simulator reads it atomically */

    uint64_t t0 = hipsimNowNs();
    MUST(hipStreamWaitValue32(low, (void *)&flag, 1, hipStreamWaitValueEq, 0xffffffffu));
    MUST(busy_launch(k, 1000, 1, low));
    uint64_t held = hipsimNowNs() - t0;
    EXPECT(api.stream_drain(low, 50) == -ETIMEDOUT); /* the wait is still in flight */
    atomic_store(&flag, 1);
    MUST(hipStreamSynchronize(low));

    struct gpuprio_queue_stats st = settled_stats(&api, low);
    EXPECT(st.submitted == 2 && st.completed == 2 && st.in_flight == 0);
    EXPECT(held >= watchdog_ns * 9 / 10);
    EXPECT(st.held_ns >= watchdog_ns * 9 / 10);
    printf("the launch behind the wait was held %.0f ms\n", (double)held / 1e6);
    printf("suspended %llu times\n", (unsigned long long)st.suspensions);
    MUST(hipStreamDestroy(low));
    MUST(hipStreamDestroy(high));
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
