/*
 * xc_cost.h - what a command costs in GPU time, learned from when its completion marker is reached.
 *
 * A throttled queue may keep only so much work in flight, because everything in flight can start
 * ahead of a higher-priority command that arrives (xq_admission.h). Counting commands bounds that
 * wait badly: one training step's backward convolution outlasts a hundred element-wise kernels.
 * So admission also keeps the in-flight work's GPU time within a budget, and this module
 * predicts that time per command.
 *
 * Commands are told apart by a key the shim computes from the call (cuda_api.def, hip_api.def:
 * the kernel and its grid for launches, the executable graph for graph launches, the entry point
 * alone for the rest), because applications repeat the same commands: a training loop or an
 * inference server launches the same kernels with the same grids every step. The estimate for a
 * key is a moving average of what its commands took, slower to fall than to rise once it has a
 * few samples: a sample is short when the watcher saw the previous completion late (a host
 * stall) and this one on time, and an estimate that falls lets more work in flight than the
 * budget allows, where one that rises only admits less for a while.
 *
 * What a command took is measured on the host by the watcher, which sees markers reached at
 * most a polling period late: the time from the later of the previous completion seen and the
 * command's submission, to the moment its marker is seen reached. Markers seen reached in the
 * same poll share that span in proportion to what was predicted for them, so a batch of short
 * commands behind a long one does not teach that short ones are long. The measure includes time
 * the GPU spent on other work running beside the queue's, which makes predictions err towards
 * admitting less; the watcher does not learn from commands that were in flight while the queue
 * was suspended (then higher-priority work runs in between by design) or while a stream capture
 * stopped it from querying markers.
 *
 * The table is a fixed array: learned from the watcher thread only, read lock-free by launching
 * threads (a torn read gives one wrong prediction, never memory unsafety), and a key that finds
 * its neighbourhood full replaces the neighbourhood's first entry.
 */
#ifndef GPUPRIO_XC_COST_H
#define GPUPRIO_XC_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key from two words (never 0: 0 means "no key" in the table). */
static inline uint64_t xc_key(uint64_t a, uint64_t b)
{
    uint64_t z = a * UINT64_C(0x9e3779b97f4a7c15) ^ (b + UINT64_C(0x632be59bd9b4e019));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    z ^= z >> 31;
    return z ? z : 1;
}

/* The cost key of a command that occupies no engine of the GPU (an event record, a wait, a host
 * function, a stream-ordered allocation): it never counts against the budget, and nothing is
 * learned from it. Its time is time the stream waits, which delays nothing on other streams. */
#define XC_NO_GPU_TIME UINT64_MAX

/* A kernel launch's cost key: the function and its grid (the same kernel over a larger tensor
 * runs longer). Evaluated on every launch, so it only packs the two into a word with one
 * multiplication that spreads the grid over the pointer's bits; xc_command_key hashes it, and
 * only for scheduled queues. */
static inline uint64_t xc_launch_key(const void *function, unsigned x, unsigned y, unsigned z)
{
    uint64_t grid = (uint64_t)x | (uint64_t)(y & 0xfffff) << 32 | (uint64_t)(z & 0xfff) << 52;
    uint64_t key = (uint64_t)(uintptr_t)function ^ grid * UINT64_C(0x9e3779b97f4a7c15);
    return key == XC_NO_GPU_TIME ? 0 : key;
}

/* The key of a command of entry point `entry` with the def file's cost key `what`. */
static inline uint64_t xc_command_key(unsigned entry, uint64_t what)
{
    if (what == XC_NO_GPU_TIME)
        return XC_NO_GPU_TIME;
    uint64_t key = xc_key(entry, what);
    return key == XC_NO_GPU_TIME ? 1 : key;
}

/* The learned GPU time of key's commands in nanoseconds, or 0 when none was learned. */
uint64_t xc_predict(uint64_t key);

/* One command seen completed: its key, and what was predicted for it when it was admitted. */
struct xc_sample {
    uint64_t key;
    uint64_t predicted_ns;
};

/* n commands seen reached in one poll took span_ns together (see above); learns each keyed
 * one's share (those of key 0 take no share). Returns the mean share, for the queue's own
 * average, or 0 when none had a key. From the watcher thread only. */
uint64_t xc_learn(const struct xc_sample *done, size_t n, uint64_t span_ns);

/* Forgets everything learned (tests; the child of fork keeps the parent's, which still hold). */
void xc_reset(void);

/*
 * The longest command a queue ran recently, for `gpuprio top` and `doctor` (docs/design.md, "Long
 * kernels: GEMM slices"): a higher-priority request that arrives while such a command runs waits
 * for it, whatever the gates do, since a gate stops a queue only between commands. It is the
 * greatest learned time (xc_predict) of the commands completed in the current window of
 * XC_LONGEST_WINDOW_NS and the one before. A window begins at the first completion after the one
 * before ended, so where commands complete steadily a command shows from its completion for
 * between one and two windows, and where they complete rarely for longer. Nothing is forgotten
 * while no command completes (an idle queue shows what it ran last). The watcher
 * thread's own: each poll's completions are noted at once, with no atomic operation.
 */
#define XC_LONGEST_WINDOW_NS 2000000000ull
struct xc_longest {
    uint64_t window_from_ns;    /* when the current window began (0: none yet) */
    uint64_t now_ns, before_ns; /* the greatest of the current window, and of the one before */
    uint64_t shown_ns;          /* what xc_longest_note last said to show */
};
/* Commands whose greatest learned time is ns completed at now (ns 0: none had a learned time);
 * true when the longest moved from what was shown last by an eighth of it or more (or from or to
 * nothing), with *show the new value to show (then kept as shown). */
bool xc_longest_note(struct xc_longest *l, uint64_t ns, uint64_t now, uint64_t *show);

#endif /* GPUPRIO_XC_COST_H */
