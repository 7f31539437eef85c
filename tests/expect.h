/*
 * expect.h - the assertion of the programs the tests run (tests/preload, tests/platform):
 * EXPECT(cond) prints "FAIL file:line: cond" on stdout, flushed so that it stays in order with
 * the output of the processes a test starts, and counts the failure in `failures`, which the
 * program's main turns into its exit status. Every check runs, so one run shows every failure.
 * (tests/unit has its own, check.h; tests/cuda prints on stderr, as stdout is compared.)
 * A program of several files defines EXPECT_FAILURES_SHARED and one `int failures`.
 */
#ifndef GPUPRIO_TEST_EXPECT_H
#define GPUPRIO_TEST_EXPECT_H

#include <stdio.h>

#ifdef EXPECT_FAILURES_SHARED
extern int failures;
#else
static int failures;
#endif

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                 \
            fflush(stdout);                                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif /* GPUPRIO_TEST_EXPECT_H */
