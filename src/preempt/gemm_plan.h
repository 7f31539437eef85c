/*
 * gemm_plan.h - how to cut one long GEMM into slices of its output that each end soon enough for
 * a higher priority to get the device, or why it stays whole. Pure: dimensions, the algorithm's
 * tile, the device's SM count, the call's learned GPU time and the target in, a plan out; it
 * knows nothing of BLAS libraries, streams or time (unit.gemm_plan tests it on its own).
 *
 * The exactness of slices is the BLAS layer's to establish (docs/design.md, "Long kernels: GEMM
 * slices"); the plan only keeps what that argument needs of the cut: every boundary a multiple
 * of GEMM_PLAN_GRANULE and of the tile's side along the cut, so that every tile and cluster of
 * the whole problem lies within one slice; a batch of GEMMs (strided batched) may be cut between
 * its items, where any boundary keeps every item whole. And it keeps slicing cheap: every slice
 * keeps at least GEMM_PLAN_MIN_WAVES waves of CTAs (one CTA per SM per wave; a tile runs one CTA
 * per part of a split k, and a slice of a batch counts the CTAs of all its items), since a slice
 * that leaves SMs idle costs the load far more than the latency it saves (4x on an H200 under one
 * wave). Where no cut keeps that, slices of fewer waves are taken when the waves of all of them
 * together are at most GEMM_PLAN_COST_NUM / GEMM_PLAN_COST_DEN of the whole's: a GEMM of a few
 * waves of long CTAs (an LM head's input gradient: three waves of about 1 ms on an H200) is then
 * cut into single waves at a bounded cost (there, a third more of that kernel's time).
 */
#ifndef GPUPRIO_GEMM_PLAN_H
#define GPUPRIO_GEMM_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#define GEMM_PLAN_GRANULE 1024
#define GEMM_PLAN_MIN_WAVES 2
#define GEMM_PLAN_COST_NUM 4
#define GEMM_PLAN_COST_DEN 3
#define GEMM_PLAN_MAX_SLICES 64
/* The most widths a plan tries along one cut (a bound on its host time, for values no device
 * runs). */
#define GEMM_PLAN_MAX_WIDTHS 4096
/* The tile side taken when the algorithm's tile is not known. */
#define GEMM_PLAN_UNKNOWN_TILE 256

/* Why a call is left whole, or GEMM_WHOLE_NONE when it is sliced. X(name, what a user reads,
 * shown): shown is 1 for the reasons a process's record on the board shows (board.h's
 * GP_RECORD_GEMM_WHOLE, which must name exactly these: sched_board.c checks it when it compiles),
 * those a user can act on or must know of while the process runs. */
#define GEMM_WHOLE_REASONS(X)                                                                      \
    X(NONE, "sliced", 0)                                                                           \
    X(OFF, "slicing is off (GPUPRIO_GEMM_SLICE_US=0)", 0)                                          \
    X(UNLEARNED, "its GPU time is not known yet", 0)                                               \
    X(SHORT, "its GPU time is within the target", 0)                                               \
    X(SMALL, "every cut would leave too much of the device idle", 1)                               \
    X(NOT_GATED, "no higher priority can use the device's time it frees", 0)                       \
    X(CAPTURING, "a stream capture is in progress", 1)                                             \
    X(UNSUPPORTED, "its form is not one that slices exactly", 1)                                   \
    X(CHECK_FAILED, "the library refused the algorithm on the call or a slice", 1)

enum gemm_whole_reason {
#define GEMM_WHOLE_ENUM(name, what, shown) GEMM_WHOLE_##name,
    GEMM_WHOLE_REASONS(GEMM_WHOLE_ENUM)
#undef GEMM_WHOLE_ENUM
        GEMM_WHOLE_COUNT
};
/* GEMM_WHOLE_SHOWN_<name>: the reason's shown, as a constant for static checks. */
enum gemm_whole_shown {
#define GEMM_WHOLE_SHOWN_ENUM(name, what, shown) GEMM_WHOLE_SHOWN_##name = shown,
    GEMM_WHOLE_REASONS(GEMM_WHOLE_SHOWN_ENUM)
#undef GEMM_WHOLE_SHOWN_ENUM
};

/* The problem: D is m x n (rows x columns), in each of `batch` items (0 or 1: one GEMM); the
 * algorithm's tile (0: unknown); the SMs its tiles run on; its learned GPU time (0: not known)
 * and the longest a slice should take (0: off); the parts its k is split into (split-K: that many
 * CTAs a tile; 0 or 1: one); whether D's rows must stay whole (a bias that the BLAS layer cannot
 * move with them: a call that only a cut along m would slice is then UNSUPPORTED). */
struct gemm_problem {
    uint64_t m, n;
    uint32_t tile_m, tile_n;
    uint32_t sms;
    uint64_t learned_ns, target_ns;
    uint64_t batch;
    uint32_t splits;
    bool rows_fixed;
};

/* Along D's columns, its rows (every item's, in a batch), or a batch's items. */
enum gemm_cut { GEMM_CUT_N, GEMM_CUT_M, GEMM_CUT_BATCH };

/* A plan: `count` slices along `cut`, slice i from i * width, each `width` wide (columns, rows
 * or items) but the last, which takes the rest: at least width, or narrower where the rest keeps
 * GEMM_PLAN_MIN_WAVES waves. count 0: whole, for `why`. */
struct gemm_plan {
    enum gemm_cut cut;
    uint32_t count;
    uint64_t width;
    enum gemm_whole_reason why;
};

/* Plans p; returns plan->count (0: whole, plan->why says why). */
uint32_t gemm_plan_make(const struct gemm_problem *p, struct gemm_plan *plan);

/* Slice i of plan (i < count) along its cut, of a dimension of `extent`: its first row, column
 * or item and how many. */
void gemm_plan_slice(const struct gemm_plan *plan, uint64_t extent, uint32_t i, uint64_t *first,
                     uint64_t *size);

/* What a user reads for why (GEMM_WHOLE_REASONS). */
const char *gemm_plan_reason(enum gemm_whole_reason why);

#endif /* GPUPRIO_GEMM_PLAN_H */
