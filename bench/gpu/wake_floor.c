/*
 * wake_floor.c - the host's own floor under the activation figures of docs/benchmarks.md: a
 * thread on the co-location client's cadence (asleep until half a millisecond before each
 * request is due, then spinning until it is), timing a fixed piece of work of the size of an
 * activation at the moment the client would call the runtime. No GPU, no gpuprio.
 *
 * The work: lock and unlock a mutex, read and write WORK_LINES cache lines spread over a
 * buffer larger than the last-level cache share of one core (so each is a miss unless a
 * previous request left it cached), and read the clock. On an idle, quiet host it takes a
 * microsecond or two; what its P90/P99 add above that is the host's (interrupts, preemption,
 * the caches' state after the sleep), which gpuprio's activation pays as well.
 *
 *   wake_floor [RATE [SECONDS]]     defaults 40 requests/s, 6 s (the client's)
 *
 * Prints "wake_floor: n=N work P50/P90/P99/max us: a / b / c / d".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORK_LINES 64
#define BUFFER_BYTES (64u << 20)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    double rate = argc > 1 ? atof(argv[1]) : 40.0;
    double seconds = argc > 2 ? atof(argv[2]) : 6.0;
    if (rate <= 0 || seconds <= 0) {
        fprintf(stderr, "usage: wake_floor [RATE [SECONDS]] (both > 0)\n");
        return 2;
    }
    size_t n = (size_t)(rate * seconds);
    uint64_t *took = calloc(n ? n : 1, sizeof *took);
    volatile uint8_t *buf = malloc(BUFFER_BYTES);
    if (!took || !buf) {
        fprintf(stderr, "wake_floor: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < BUFFER_BYTES; i += 4096)
        buf[i] = 1;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    uint64_t period = (uint64_t)(1e9 / rate), t0 = now_ns() + 200000000u;
    unsigned seed = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t due = t0 + i * period, now = now_ns();
        if (now + 500000 < due) {
            uint64_t nap = due - now - 500000;
            struct timespec ts = {(time_t)(nap / 1000000000u), (long)(nap % 1000000000u)};
            nanosleep(&ts, NULL);
        }
        while (now_ns() < due)
            ;
        uint64_t start = now_ns();
        pthread_mutex_lock(&lock);
        for (int k = 0; k < WORK_LINES; k++) {
            size_t at = ((size_t)rand_r(&seed) * 64u) % BUFFER_BYTES;
            buf[at] = (uint8_t)(buf[at] + 1);
        }
        pthread_mutex_unlock(&lock);
        took[i] = now_ns() - start;
    }
    qsort(took, n, sizeof *took, cmp_u64);
    if (n == 0)
        return 0;
#define PCT(p) (took[(size_t)((double)(n - 1) * (p))] / 1e3)
    printf("wake_floor: n=%zu work P50/P90/P99/max us: %.1f / %.1f / %.1f / %.1f\n", n, PCT(0.5),
           PCT(0.9), PCT(0.99), took[n - 1] / 1e3);
    free(took);
    free((void *)buf);
    return 0;
}
