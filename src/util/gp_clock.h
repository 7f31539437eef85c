/*
 * gp_clock.h - the one clock the library reads: CLOCK_MONOTONIC in nanoseconds. Deadlines of
 * condition-variable waits are on the same clock (their attributes say CLOCK_MONOTONIC), so a
 * time from here can be waited for directly.
 */
#ifndef GPUPRIO_CLOCK_H
#define GPUPRIO_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t gp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An absolute time of gp_now_ns as a timespec, for pthread_cond_timedwait. */
static inline struct timespec gp_timespec_at(uint64_t ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u),
                             .tv_nsec = (long)(ns % 1000000000u)};
}

#endif /* GPUPRIO_CLOCK_H */
