/*
 * tools_worker.c - a running GPU program for top_set.sh to look at (gpuprio top) and steer
 * (gpuprio set): under the shim, on a simulated device shared through HIPSIM_SHARED (which gives
 * the device a PCI bus id, so the shim joins a board), it creates UNUSED streams that never run
 * anything (like PyTorch's pools), then, in mode run, one stream on which it launches 1 ms
 * kernels, a few at a time, until STOPFILE exists (or SECONDS passed). Then it prints the
 * priorities gpuprio gives its streams, which gpuprio set should have changed: "priority N" for
 * the running stream, and "unused priority N" when every unused stream has N (else "unused
 * priorities" and the list).
 *
 *   tools_worker STOPFILE SECONDS [UNUSED [run|null|idle|exec|full|long|long_ext|once]]
 *
 * Mode null runs as run does, and launches each kernel on the null stream too. Mode long runs as
 * run does with kernels of 8 ms (a long kernel that a higher priority must wait for whole);
 * long_ext likewise through hipExtModuleLaunchKernel, as rocBLAS and hipBLAS launch their GEMMs'
 * kernels (which gpuprio cannot slice exactly: docs/design.md, "On ROCm"). Mode
 * once runs one 1-ms kernel on its stream, which so joins scheduling, then nothing (a server
 * between requests). Mode idle runs
 * nothing at all: none of its queues joins scheduling, so the process is on the board through its
 * record only. Mode exec creates the UNUSED streams, prints "exec" and executes itself in mode idle
 * with 2 unused streams: the same pid, a new image, whose listener must reclaim the record the
 * first image left. Mode full runs as run does, after one kernel on each of the UNUSED streams
 * (which then are not unused: they joined scheduling, each taking a board slot while there is
 * one, so 600 of them fill a board).
 *
 * It prints "ready" once its stream has run a kernel (so it is on the board), or in mode idle
 * once its streams exist. Exit status: 0, or 3 when it gave up waiting for STOPFILE.
 */
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../preload/sched/sched_test.h"

#define KERNEL_NS 1000000ull
#define LONG_KERNEL_NS 8000000ull
#define BATCH 4
#define UNUSED_MAX 1024

static hipFunction_t ext_fn; /* mode long_ext: the kernel as a module function */

/* One kernel of ns on s: through hipExtModuleLaunchKernel in mode long_ext. */
static hipError_t launch(const void *kernel, uint64_t ns, hipStream_t s)
{
    if (!ext_fn)
        return busy_launch(kernel, ns, 1, s);
    uint64_t tag = 1;
    void *args[] = {&ns, &tag};
    return hipExtModuleLaunchKernel(ext_fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL, NULL, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: tools_worker STOPFILE SECONDS [UNUSED "
                        "[run|null|idle|exec|full|long|long_ext|once]]\n");
        return 2;
    }
    const char *stop = argv[1];
    uint64_t deadline = hipsimNowNs() + strtoull(argv[2], NULL, 10) * 1000000000ull;
    int unused = argc > 3 ? atoi(argv[3]) : 0;
    const char *mode = argc > 4 ? argv[4] : "run";
    if (unused < 0 || unused > UNUSED_MAX) {
        fprintf(stderr, "tools_worker: at most %d unused streams\n", UNUSED_MAX);
        return 2;
    }
    struct gp_api api = gp_api_find();
    hipStream_t idle[UNUSED_MAX];
    for (int i = 0; i < unused; i++)
        MUST(hipStreamCreate(&idle[i]));
    if (strcmp(mode, "exec") == 0) {
        printf("exec\n");
        fflush(stdout);
        execl(argv[0], argv[0], argv[1], argv[2], "2", "idle", (char *)NULL);
        perror("tools_worker: exec");
        return 1;
    }
    bool null_too = strcmp(mode, "null") == 0, full = strcmp(mode, "full") == 0;
    bool once = strcmp(mode, "once") == 0, ext = strcmp(mode, "long_ext") == 0;
    bool longer = strcmp(mode, "long") == 0 || ext;
    bool run = strcmp(mode, "run") == 0 || null_too || full || longer || once;
    uint64_t kernel_ns = longer ? LONG_KERNEL_NS : KERNEL_NS;
    const void *kernel = busy_register();
    if (ext) {
        hipModule_t mod = NULL;
        MUST(hipModuleLoadData(&mod, "tools_worker"));
        MUST(hipModuleGetFunction(&ext_fn, mod, "busy"));
    }
    for (int i = 0; full && i < unused; i++) {
        MUST(busy_launch(kernel, KERNEL_NS / 100, 1, idle[i]));
        MUST(hipStreamSynchronize(idle[i]));
    }
    hipStream_t s = NULL;
    if (run) {
        MUST(hipStreamCreate(&s));
        MUST(launch(kernel, kernel_ns, s));
        MUST(hipStreamSynchronize(s));
    }
    if (null_too) {
        MUST(busy_launch(kernel, KERNEL_NS, 1, NULL));
        MUST(hipStreamSynchronize(NULL));
    }
    printf("ready\n");
    fflush(stdout);
    int status = 0;
    while (access(stop, F_OK) != 0) {
        if (hipsimNowNs() > deadline) {
            printf("gave up waiting for %s\n", stop);
            status = 3;
            break;
        }
        if (!run || once) {
            usleep(10000);
            continue;
        }
        for (int k = 0; k < BATCH; k++) {
            MUST(launch(kernel, kernel_ns, s));
            if (null_too)
                MUST(busy_launch(kernel, KERNEL_NS, 1, NULL));
        }
        MUST(hipStreamSynchronize(s));
        if (null_too)
            MUST(hipStreamSynchronize(NULL));
    }
    if (run) {
        int priority = -9999;
        EXPECT(api.stream_get_priority(s, &priority) == 0);
        MUST(hipStreamDestroy(s));
        printf("priority %d\n", priority);
    }
    int first = -9999;
    bool same = true;
    char list[UNUSED_MAX * 8] = "";
    for (int i = 0; i < unused; i++) {
        int priority = -9999;
        EXPECT(api.stream_get_priority(idle[i], &priority) == 0);
        if (i == 0)
            first = priority;
        same &= priority == first;
        snprintf(list + strlen(list), sizeof list - strlen(list), " %d", priority);
        MUST(hipStreamDestroy(idle[i]));
    }
    if (unused && same)
        printf("unused priority %d\n", first);
    else if (unused)
        printf("unused priorities%s\n", list);
    return failures ? 1 : status;
}
