/*
 * tools_worker.c - a running GPU program for top_set.sh to look at (gpuprio top) and steer
 * (gpuprio set): under the shim, on a simulated device shared through HIPSIM_SHARED (which gives
 * the device a PCI bus id, so the shim joins a board), it creates one stream and launches 1 ms
 * kernels on it, a few at a time, until STOPFILE exists (or SECONDS passed). Then it prints its
 * stream's gpuprio priority ("priority N"), which gpuprio set should have changed.
 *
 *   tools_worker STOPFILE SECONDS
 *
 * It prints "ready" once its stream has run a kernel (so it is on the board). Exit status: 0, or
 * 3 when it gave up waiting for STOPFILE.
 */
#include <time.h>
#include <unistd.h>

#include "../preload/sched/sched_test.h"

#define KERNEL_NS 1000000ull
#define BATCH 4

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: tools_worker STOPFILE SECONDS\n");
        return 2;
    }
    const char *stop = argv[1];
    uint64_t deadline = hipsimNowNs() + strtoull(argv[2], NULL, 10) * 1000000000ull;
    struct gp_api api = gp_api_find();
    const void *kernel = busy_register();
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    MUST(busy_launch(kernel, KERNEL_NS, 1, s));
    MUST(hipStreamSynchronize(s));
    printf("ready\n");
    fflush(stdout);
    int status = 0;
    while (access(stop, F_OK) != 0) {
        if (hipsimNowNs() > deadline) {
            printf("gave up waiting for %s\n", stop);
            status = 3;
            break;
        }
        for (int k = 0; k < BATCH; k++)
            MUST(busy_launch(kernel, KERNEL_NS, 1, s));
        MUST(hipStreamSynchronize(s));
    }
    int priority = -9999;
    EXPECT(api.stream_get_priority(s, &priority) == 0);
    MUST(hipStreamDestroy(s));
    printf("priority %d\n", priority);
    return failures ? 1 : status;
}
