/*
 * check.h - the assertions of the unit tests (tests/unit): CHECK(expr) and CHECK_INT(a, b)
 * print "FAIL file:line: expr" on stderr and count the failure, and check_finish() ends main
 * with a non-zero status if any check failed. Every check runs, so one run shows every failure.
 */
#ifndef GPUPRIO_UNIT_CHECK_H
#define GPUPRIO_UNIT_CHECK_H

#include <stdio.h>

static unsigned long check_count, check_failures;

static inline int check_at(int ok, const char *file, int line, const char *expr)
{
    check_count++;
    if (!ok) {
        check_failures++;
        fprintf(stderr, "FAIL %s:%d: %s\n", file, line, expr);
        fflush(stderr);
    }
    return ok;
}

static inline int check_int_at(long long a, long long b, const char *file, int line,
                               const char *expr)
{
    check_count++;
    if (a != b) {
        check_failures++;
        fprintf(stderr, "FAIL %s:%d: %s (%lld != %lld)\n", file, line, expr, a, b);
        fflush(stderr);
    }
    return a == b;
}

/* Both evaluate to whether the check passed, so a caller can print more context. */
#define CHECK(expr) check_at((expr) != 0, __FILE__, __LINE__, #expr)
#define CHECK_INT(a, b)                                                                            \
    check_int_at((long long)(a), (long long)(b), __FILE__, __LINE__, #a " == " #b)

/* The exit status of main: 0 when every check passed. */
static inline int check_finish(const char *name)
{
    printf("%s: %lu checks, %lu failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

/* A small fixed-seed generator (splitmix64), so random cases are the same on every libc. */
static inline unsigned long long check_rand(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform enough in [0, n), n > 0. */
static inline unsigned check_rand_below(unsigned long long *state, unsigned n)
{
    return (unsigned)(check_rand(state) % n);
}

#endif /* GPUPRIO_UNIT_CHECK_H */
