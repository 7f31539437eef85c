/*
 * lateness_test.c - the simulator says how much later than their simulated durations its
 * kernels ended (hipsimLateNs), in the process's counter or in one the caller names
 * (hipsimCountLatenessIn).
 *
 * A kernel's duration is counted from when its function starts; a function that itself takes
 * 20 ms of host time and says 1 ms makes the kernel end at least 19 ms late, as a host that
 * woke the kernel's thread 19 ms late would. Only lower bounds are checked: a busy host adds
 * lateness, it never takes any away.
 * Output is a few "ok"/"FAIL" lines; the exit status is the number of failures.
 */
#include "sim_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define MS (1000ull * 1000)

/* Takes 20 ms of host time, then says it lasts 1 ms. */
static uint64_t slow_kernel(hipsimLaunch *l)
{
    (void)l;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * MS};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 1 * MS;
}

static int failures;

static void expect(const char *what, int ok, uint64_t value)
{
    printf("%s: %s (%.3f ms)\n", ok ? "ok" : "FAIL", what, (double)value / 1e6);
    failures += !ok;
}

static void run_slow_kernel(hipStream_t s, const void *k)
{
    CHECK(hipLaunchKernel(k, (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL, 0, s));
    CHECK(hipStreamSynchronize(s));
}

int main(void)
{
    const void *k = hipsimRegisterKernel("slow", slow_kernel, 0, NULL);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    uint64_t before = hipsimLateNs();
    run_slow_kernel(s, k);
    uint64_t own = hipsimLateNs();
    expect("a kernel that ended 19 ms late adds at least that", own - before >= 19 * MS,
           own - before);

    uint64_t mine = 0;
    hipsimCountLatenessIn(&mine);
    run_slow_kernel(s, k);
    expect("counted in the caller's counter", mine >= 19 * MS, mine);
    expect("which hipsimLateNs reads", hipsimLateNs() == mine, hipsimLateNs());

    hipsimCountLatenessIn(NULL);
    expect("the process's counter is back, unchanged meanwhile", hipsimLateNs() == own,
           hipsimLateNs());
    uint64_t kept = mine;
    run_slow_kernel(s, k);
    expect("and counts again", hipsimLateNs() - own >= 19 * MS, hipsimLateNs() - own);
    expect("the caller's counter no longer", mine == kept, mine);
    CHECK(hipStreamDestroy(s));
    return failures;
}
