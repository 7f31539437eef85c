/*
 * shared_device_test.c - several processes share one simulated device (HIPSIM_SHARED).
 *
 * 1. Two processes launch kernels at once on a one-slot shared device: their kernels never
 *    overlap in time (they really contend for one device) and both make progress in turns.
 * 2. A process is killed (SIGKILL) while its 10 s kernel holds the only slot: another
 *    process's kernel still runs, long before the dead one's kernel would have ended, because
 *    waiters reclaim the tickets of dead processes.
 * Output is a few "ok"/"FAIL" lines; the exit status is the number of failures.
 */
#include "sim_check.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int started_fd = -1;

/* Sleeps for the duration in its argument; tells the parent it started through a pipe. */
static uint64_t timed_kernel(hipsimLaunch *l)
{
    if (started_fd >= 0 && write(started_fd, "s", 1) < 0)
        perror("write");
    return *(uint64_t *)l->args[0];
}

static void run_kernels(int count, uint64_t ns)
{
    size_t sizes[] = {sizeof(uint64_t)};
    const void *k = hipsimRegisterKernel("timed", timed_kernel, 1, sizes);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    for (int i = 0; i < count; i++) {
        void *args[] = {&ns};
        CHECK(hipLaunchKernel(k, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, s));
    }
    CHECK(hipStreamSynchronize(s));
}

static pid_t spawn(int count, uint64_t ns)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        run_kernels(count, ns);
        _exit(0);
    }
    return pid;
}

struct span {
    int pid;
    uint64_t start, end;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int test_contention(const char *trace)
{
    pid_t a = spawn(20, 2000000), b = spawn(20, 2000000);
    int sa, sb;
    waitpid(a, &sa, 0);
    waitpid(b, &sb, 0);
    if (!WIFEXITED(sa) || WEXITSTATUS(sa) || !WIFEXITED(sb) || WEXITSTATUS(sb)) {
        printf("FAIL contention: a worker failed\n");
        return 1;
    }
    FILE *f = fopen(trace, "r");
    struct span spans[64];
    int n = 0, dev, hwq;
    uint64_t stream, tag, submitted, waited;
    char name[64];
    while (f && n < 64 &&
           fscanf(f,
                  "%d %d %" SCNu64 " %d %63s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                  " %" SCNu64,
                  &spans[n].pid, &dev, &stream, &hwq, name, &tag, &spans[n].start, &spans[n].end,
                  &submitted, &waited) == 10)
        n++;
    if (f)
        fclose(f);
    qsort(spans, (size_t)n, sizeof spans[0], cmp_span);
    int overlaps = 0, switches = 0;
    for (int i = 1; i < n; i++) {
        overlaps += spans[i].start < spans[i - 1].end;
        switches += spans[i].pid != spans[i - 1].pid;
    }
    int failed = n != 40 || overlaps || switches < 10;
    printf("%s contention: %d kernels of 2 processes, %d overlapping, %d turns\n",
           failed ? "FAIL" : "ok", n, overlaps, switches);
    return failed;
}

static int test_kill(void)
{
    int fds[2];
    if (pipe(fds) < 0)
        return 1;
    fflush(stdout);
    pid_t victim = fork();
    if (victim == 0) {
        started_fd = fds[1];
        run_kernels(1, 10000000000u); /* 10 s on the only slot */
        _exit(0);
    }
    char c;
    if (read(fds[0], &c, 1) != 1) {
        printf("FAIL kill: the victim's kernel never started\n");
        return 1;
    }
    pid_t other = spawn(1, 1000000);
    usleep(50000);
    uint64_t t0 = hipsimNowNs();
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);
    int st;
    waitpid(other, &st, 0);
    double ms = (double)(hipsimNowNs() - t0) / 1e6;
    /* Well before the dead holder's 10 s kernel would have ended; sanitizers slow start-up. */
    int failed = !WIFEXITED(st) || WEXITSTATUS(st) || ms > 5000;
    printf("%s kill: the other process finished %.0f ms after the holder was killed\n",
           failed ? "FAIL" : "ok", ms);
    close(fds[0]);
    close(fds[1]);
    return failed;
}

int main(void)
{
    char name[64], trace[128], segment[128];
    snprintf(name, sizeof name, "test%d", (int)getpid());
    snprintf(trace, sizeof trace, "/tmp/hipsim-trace-%s", name);
    snprintf(segment, sizeof segment, "/hipsim-%u-%s-0", (unsigned)getuid(), name);
    unlink(trace);
    setenv("HIPSIM_SHARED", name, 1);
    setenv("HIPSIM_COMPUTE_SLOTS", "1", 1);
    setenv("HIPSIM_TRACE", trace, 1);

    int failures = test_contention(trace);
    unsetenv("HIPSIM_TRACE");
    failures += test_kill();

    unlink(trace);
    shm_unlink(segment);
    return failures;
}
