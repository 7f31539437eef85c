/*
 * cost_test.c - the learned cost table (src/preempt/xc_cost.c): nothing predicted before anything
 * is learned, a key's first sample, the moving average, the span shared in proportion to what was
 * predicted, commands without a key, keys that meet in one neighbourhood, and the keys the shims
 * build.
 */
#include "check.h"
#include "xc_cost.h"

static uint64_t learn1(uint64_t key, uint64_t predicted, uint64_t span)
{
    struct xc_sample s = {key, predicted};
    return xc_learn(&s, 1, span);
}

int main(void)
{
    /* Nothing learned: nothing predicted. */
    CHECK_INT(xc_predict(xc_key(1, 2)), 0);

    /* The first sample is the estimate; a longer one moves it by a quarter of the difference;
     * a shorter one too while the key has fewer than 8 samples (a cold first one is soon
     * forgotten), by a sixteenth after (one short sample, a host stall, hardly lowers it). */
    uint64_t k = xc_key(1, 2);
    CHECK_INT(learn1(k, 0, 1000000), 1000000);
    CHECK_INT(xc_predict(k), 1000000);
    learn1(k, 1000000, 2000000);
    CHECK_INT(xc_predict(k), 1250000);
    learn1(k, 1250000, 250000);
    CHECK_INT(xc_predict(k), 1000000); /* the third sample */
    for (int i = 0; i < 60; i++)
        learn1(k, xc_predict(k), 2000000);
    CHECK(xc_predict(k) > 1990000 && xc_predict(k) <= 2000000);
    uint64_t settled = xc_predict(k);
    learn1(k, settled, 0);
    CHECK_INT(xc_predict(k), settled - settled / 16);
    for (int i = 0; i < 100; i++)
        learn1(k, xc_predict(k), 500000);
    CHECK(xc_predict(k) >= 500000 && xc_predict(k) < 510000);

    /* Reached in one poll: the span is shared in proportion to the predictions, and the mean
     * share is returned. */
    uint64_t a = xc_key(3, 1), b = xc_key(3, 2);
    struct xc_sample both[] = {{a, 900}, {b, 100}};
    CHECK_INT(xc_learn(both, 2, 10000), 5000);
    CHECK_INT(xc_predict(a), 9000);
    CHECK_INT(xc_predict(b), 1000);

    /* Commands without a key take no share and teach nothing. */
    uint64_t c = xc_key(4, 1);
    struct xc_sample mixed[] = {{0, 5000}, {c, 100}};
    CHECK_INT(xc_learn(mixed, 2, 3000), 3000);
    CHECK_INT(xc_predict(c), 3000);
    struct xc_sample none[] = {{0, 100}, {0, 100}};
    CHECK_INT(xc_learn(none, 2, 3000), 0);

    /* A command seen to take no time is still known (1 ns): 0 means "never learned". */
    uint64_t z = xc_key(5, 1);
    learn1(z, 0, 0);
    CHECK_INT(xc_predict(z), 1);

    /* Five keys in one neighbourhood of four: the last learned is known, and the table still
     * answers for every key it holds with that key's own estimate. */
    xc_reset();
    uint64_t base = 0x10000; /* keys base + i * 4096 share the neighbourhood's first entry */
    for (uint64_t i = 0; i < 5; i++)
        learn1(base + i * 4096, 0, 1000 * (i + 1));
    CHECK_INT(xc_predict(base + 4 * 4096), 5000);
    int known = 0;
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t p = xc_predict(base + i * 4096);
        CHECK(p == 0 || p == 1000 * (i + 1));
        known += p != 0;
    }
    CHECK_INT(known, 4);
    xc_reset();
    CHECK_INT(xc_predict(base + 4 * 4096), 0);

    /* The shims' keys: never 0; the grid and the entry point tell commands apart; commands
     * without GPU time keep their mark. */
    static const int f = 0; /* only its address is a key */
    CHECK(xc_launch_key(&f, 1, 1, 1) != xc_launch_key(&f, 2, 1, 1));
    CHECK(xc_launch_key(&f, 1, 1, 1) != xc_launch_key(&f, 1, 2, 1));
    CHECK(xc_launch_key(&f, 1, 1, 1) == xc_launch_key(&f, 1, 1, 1));
    CHECK(xc_command_key(1, 7) != xc_command_key(2, 7));
    CHECK(xc_command_key(1, 0) != 0);
    CHECK_INT(xc_command_key(1, XC_NO_GPU_TIME), XC_NO_GPU_TIME);

    /* The longest recent command: shown at once, kept while it is the greatest of this window and
     * the one before, dropped two windows after it ran; a move of less than an eighth of what is
     * shown is not shown again. */
    const uint64_t W = XC_LONGEST_WINDOW_NS, t0 = 5 * W;
    struct xc_longest l = {0};
    uint64_t show = 12345;
    CHECK(!xc_longest_note(&l, 0, t0, &show)); /* nothing learned yet: nothing to show */
    CHECK_INT(show, 12345);
    CHECK(xc_longest_note(&l, 3000000, t0 + 1, &show));
    CHECK_INT(show, 3000000);
    CHECK(!xc_longest_note(&l, 100000, t0 + 2, &show));  /* shorter: still 3 ms */
    CHECK(!xc_longest_note(&l, 3300000, t0 + 3, &show)); /* 10% longer: not noticeable */
    CHECK(xc_longest_note(&l, 3500000, t0 + 4, &show));  /* an eighth or more */
    CHECK_INT(show, 3500000);
    CHECK(!xc_longest_note(&l, 100000, t0 + W + 5, &show)); /* the next window: the one before's */
    CHECK(xc_longest_note(&l, 100000, t0 + 2 * W + 6, &show)); /* two windows on: gone */
    CHECK_INT(show, 100000);
    CHECK(xc_longest_note(&l, 8000000, t0 + 2 * W + 7, &show));
    CHECK_INT(show, 8000000);
    /* Nothing completed for two windows: forgotten at the next completion. */
    CHECK(xc_longest_note(&l, 0, t0 + 10 * W, &show));
    CHECK_INT(show, 0);
    CHECK(!xc_longest_note(&l, 0, t0 + 10 * W + 1, &show));
    return check_finish("cost");
}
