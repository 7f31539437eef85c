/*
 * fuzz_plan.h - what the fuzzers' program generators share (fuzz_prog.c for HIP,
 * tests/cuda/fuzz_cuda.c for CUDA): the random numbers a seed draws, the weighted choice of an
 * operation's kind, and the command line that fuzz.sh drives, SEED [--skip I,J,...] [--list].
 */
#ifndef GPUPRIO_FUZZ_PLAN_H
#define GPUPRIO_FUZZ_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fuzz_rng_state;

/* splitmix64: every program is the same on every machine for its seed. */
static inline uint64_t fuzz_random(void)
{
    uint64_t z = (fuzz_rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline int fuzz_below(int n)
{
    return (int)(fuzz_random() % (uint64_t)n);
}

/* One of n kinds, kind k drawn weights[k] times in sum(weights). */
static inline int fuzz_weighted(const unsigned *weights, int n)
{
    unsigned total = 0;
    for (int k = 0; k < n; k++)
        total += weights[k];
    unsigned r = (unsigned)(fuzz_random() % total);
    int k = 0;
    while (k < n - 1 && r >= weights[k])
        r -= weights[k++];
    return k;
}

/* The seed (argv[1]); 0, or 2 after a message. */
static inline int fuzz_seed(const char *prog, int argc, char **argv, uint64_t *seed)
{
    char *end;
    if (argc < 2) {
        fprintf(stderr, "usage: %s SEED [--skip I,J,...] [--list]\n", prog);
        return 2;
    }
    *seed = strtoull(argv[1], &end, 10);
    if (*end || end == argv[1]) {
        fprintf(stderr, "%s: SEED must be a number, not %s\n", prog, argv[1]);
        return 2;
    }
    return 0;
}

/* The options after the seed, for a program of nops operations: skipped[i] for each index
 * --skip names, *list for --list; 0, or 2 after a message. */
static inline int fuzz_options(const char *prog, int argc, char **argv, int nops, bool *skipped,
                               bool *list)
{
    *list = false;
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "--list") == 0) {
            *list = true;
            continue;
        }
        const char *p = strcmp(argv[a], "--skip") == 0 && a + 1 < argc ? argv[++a] : NULL;
        while (p && *p) {
            char *end;
            long i = strtol(p, &end, 10);
            if (end == p || i < 0 || i >= nops || (*end && *end != ',')) {
                p = NULL;
                break;
            }
            skipped[i] = true;
            p = *end ? end + 1 : end;
        }
        if (!p) {
            fprintf(stderr, "%s: bad argument %s (accepted: --skip I,J,... --list)\n", prog,
                    argv[a]);
            return 2;
        }
    }
    return 0;
}
#endif /* GPUPRIO_FUZZ_PLAN_H */
