/*
 * gp_lockrank.c - see gp_lockrank.h. A thread's held ranks are a small stack in thread-local
 * storage; locks are few and never nested deeply, so a fixed array is enough, and a thread that
 * somehow held more is reported like any other violation.
 */
#ifdef GP_LOCKRANK
#include "gp_lockrank.h"

#include <stdio.h>
#include <stdlib.h>

#define HELD_MAX 16

static const char *const rank_names[GP_RANK_COUNT] = {[GP_RANK_NONE] = "none",
#define GP_RANK_NAME(name, what) [GP_RANK_##name] = #name " (" what ")",
                                                      GP_LOCK_RANKS(GP_RANK_NAME)
#undef GP_RANK_NAME
};

static _Thread_local struct {
    unsigned char rank[HELD_MAX];
    int n;
} held;

/* Like a failed assert: a bug in gpuprio, found in a checking build. Written directly, not
 * through gp_log, whose level may filter it. */
static void violated(const char *doing, enum gp_lock_rank rank, const char *relation,
                     enum gp_lock_rank other)
{
    fprintf(stderr, "gpuprio: lock order violated: %s %s %s %s\n", doing, rank_names[rank],
            relation, rank_names[other]);
    abort();
}

void gp_rank_acquire(enum gp_lock_rank rank)
{
    for (int i = 0; i < held.n; i++)
        if (held.rank[i] >= rank)
            violated("taking", rank, "while holding", (enum gp_lock_rank)held.rank[i]);
    if (held.n == HELD_MAX)
        violated("taking", rank, "while holding too many locks, the last",
                 (enum gp_lock_rank)held.rank[held.n - 1]);
    held.rank[held.n++] = (unsigned char)rank;
}

void gp_rank_release(enum gp_lock_rank rank)
{
    for (int i = held.n - 1; i >= 0; i--)
        if (held.rank[i] == rank) {
            for (int j = i; j < held.n - 1; j++)
                held.rank[j] = held.rank[j + 1];
            held.n--;
            return;
        }
    violated("releasing", rank, "without holding it; held last:",
             held.n ? (enum gp_lock_rank)held.rank[held.n - 1] : GP_RANK_NONE);
}
#else
/* ISO C forbids an empty translation unit. */
typedef int gp_lockrank_unused;
#endif
