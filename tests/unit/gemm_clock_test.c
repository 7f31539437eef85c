/*
 * gemm_clock_test.c - unit.gemm_clock: the learned GPU times of GEMM calls (src/preempt/
 * gemm_clock.c) over events of the test's own: the shortest time kept, a pair not done yet put
 * back for a later call, and the timings in flight of an owner (a context, a device) that a
 * teardown destroyed dropped without a read or a destroy (also one put back after another
 * owner's timing of its kind came and went while it was read), while other owners' are read and
 * the learned times stay.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "gemm_clock.h"

/* An event pair of the test's: the time it reads (0: not done yet), what was done to it, and
 * what another thread does while it is read (outside the table's lock), once. */
struct pair {
    int64_t ns;
    int reads, destroys;
    void (*while_read)(void);
};

static int64_t read_pair(void *start, void *end)
{
    struct pair *p = start;
    CHECK(start == end);
    p->reads++;
    void (*meanwhile)(void) = p->while_read;
    p->while_read = NULL;
    if (meanwhile)
        meanwhile();
    return p->ns;
}

static void destroy_pair(void *start, void *end)
{
    struct pair *p = start ? start : end;
    if (p)
        p->destroys++;
}

static const struct gemm_clock_ops ops = {read_pair, destroy_pair};

struct key {
    uint64_t id;
};

static struct gemm_clock times = GEMM_CLOCK_INIT(sizeof(struct key), &ops);

static uint64_t learned(uint64_t id, bool *time_this)
{
    struct key k = {id};
    return gemm_clock_learned(&times, &k, time_this);
}

static void keep(uint64_t id, uintptr_t owner, struct pair *p)
{
    struct key k = {id};
    gemm_clock_keep(&times, &k, owner, p, p);
}

/* While A's pair of key 5 is out being read, another thread's call of key 5 on B is timed, and a
 * third's reads that pair, done: the entry then holds no pair, and was B's. */
static struct pair b_meanwhile = {.ns = 6000};
static void b_times_key_5(void)
{
    bool time_this;
    keep(5, 2, &b_meanwhile);
    CHECK_INT(learned(5, &time_this), 6000);
}

int main(void)
{
    enum { A = 1, B = 2 };
    bool time_this;

    /* The first call of a key is timed; its pair, done, gives the time, and is destroyed. */
    CHECK_INT(learned(1, &time_this), 0);
    CHECK(time_this);
    struct pair first = {.ns = 5000};
    keep(1, A, &first);
    CHECK_INT(learned(1, &time_this), 5000);
    CHECK(!time_this);
    CHECK_INT(first.reads, 1);
    CHECK_INT(first.destroys, 1);

    /* A pair not done yet goes back, and is read again at the next call. */
    struct pair slow = {.ns = 0};
    keep(2, A, &slow);
    CHECK_INT(learned(2, &time_this), 0);
    CHECK_INT(slow.reads, 1);
    CHECK_INT(slow.destroys, 0);
    slow.ns = 9000;
    CHECK_INT(learned(2, &time_this), 9000);
    CHECK_INT(slow.reads, 2);
    CHECK_INT(slow.destroys, 1);

    /* A's teardown: its pairs in flight (one put back after a read) are dropped, neither read nor
     * destroyed again; B's is read; the times learned before stay. */
    struct pair a_kept = {.ns = 3000}, a_back = {.ns = 0}, b_kept = {.ns = 4000};
    keep(1, A, &a_kept);
    keep(3, A, &a_back);
    CHECK_INT(learned(3, &time_this), 0); /* read, not done: back */
    keep(4, B, &b_kept);
    gemm_clock_forget_owner(&times, A);
    CHECK_INT(learned(1, &time_this), 5000);
    CHECK_INT(a_kept.reads, 0);
    CHECK_INT(a_kept.destroys, 0);
    CHECK_INT(learned(3, &time_this), 0);
    CHECK(time_this); /* nothing in flight for it any more: the next call is timed */
    CHECK_INT(a_back.reads, 1);
    CHECK_INT(a_back.destroys, 0);
    CHECK_INT(learned(4, &time_this), 4000);
    CHECK_INT(b_kept.reads, 1);
    CHECK_INT(b_kept.destroys, 1);

    /* A's pair, not done, goes back as A's, though B's came and went while it was read: A's
     * teardown drops it. */
    struct pair a_out = {.ns = 0, .while_read = b_times_key_5};
    keep(5, A, &a_out);
    CHECK_INT(learned(5, &time_this), 6000);
    CHECK_INT(a_out.reads, 1);
    CHECK_INT(b_meanwhile.destroys, 1);
    gemm_clock_forget_owner(&times, A);
    learned(5, &time_this);
    CHECK_INT(a_out.reads, 1);
    CHECK_INT(a_out.destroys, 0);

    /* A new timing of A's after the teardown is read as any. */
    struct pair again = {.ns = 2000};
    keep(1, A, &again);
    CHECK_INT(learned(1, &time_this), 2000);
    CHECK_INT(again.reads, 1);
    return check_finish("unit.gemm_clock");
}
