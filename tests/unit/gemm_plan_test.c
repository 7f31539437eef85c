/*
 * gemm_plan_test.c - unit.gemm_plan: the cut of a long GEMM into slices (src/preempt/gemm_plan.c).
 *
 * The shapes the H200 measured (GPT-2 medium's LM head, docs/design.md "Long kernels: GEMM
 * slices") with their expected plans, each reason for staying whole, and random problems against
 * the rules, checked by brute force: slices cover the dimension exactly, every boundary is a
 * multiple of 1024 and of the tile's side (or, in a batch, between items), every slice has two
 * waves of CTAs (of all its items; a tile's CTAs are its split of k), no more slices than the
 * learned time over the target; of every width along the items, n and m (never m where the rows
 * must stay whole), the slicing whose longest slice has the fewest waves, then the smallest share
 * of its extent, then the fewest slices (items, n, m on a tie), as trying every width finds it;
 * where no cut keeps two such slices, the most slices along n (else m) whose waves summed are
 * within 4/3 of the whole's; and whole only where there are none (SMALL, or UNSUPPORTED where only
 * the fixed rows would cut). Large extents (to 2^22) are checked against every width too.
 */
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "gemm_plan.h"

#define MS 1000000ull

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* The smallest multiple of both 1024 and the tile's side. */
static uint64_t unit_of(uint32_t tile_cut)
{
    uint64_t unit = GEMM_PLAN_GRANULE;
    while (unit % tile_cut)
        unit += GEMM_PLAN_GRANULE;
    return unit;
}

/* The narrowest width along a cut with two waves of CTAs (`ctas` of each tile's length of it),
 * found by walking the unit's multiples. */
static uint64_t narrowest(uint64_t ctas, uint32_t tile_cut, uint32_t sms)
{
    uint64_t unit = unit_of(tile_cut), w = unit;
    while (ctas * div_up(w, tile_cut) < 2ull * sms)
        w += unit;
    return w;
}

static uint64_t min_u(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The waves of slices `width` wide along a cut of `extent` (the last taking the rest), count of
 * them. */
static uint64_t waves(uint64_t extent, uint64_t width, uint64_t count, uint64_t ctas,
                      uint32_t tile_cut, uint32_t sms)
{
    uint64_t last = extent - (count - 1) * width;
    return (count - 1) * div_up(div_up(width, tile_cut) * ctas, sms) +
           div_up(div_up(last, tile_cut) * ctas, sms);
}

/* The most slices (at most want) of any width along a cut whose waves summed are within 4/3 of
 * the whole's, by trying every multiple of the unit; 0 if fewer than two. */
static uint64_t costed_most(uint64_t extent, uint64_t ctas, uint32_t tile_cut, uint32_t sms,
                            uint64_t want)
{
    uint64_t whole = waves(extent, extent, 1, ctas, tile_cut, sms), most = 0;
    for (uint64_t w = unit_of(tile_cut); extent / w >= 2; w += unit_of(tile_cut)) {
        uint64_t count = min_u(extent / w, want);
        if (3 * waves(extent, w, count, ctas, tile_cut, sms) <= 4 * whole && count > most)
            most = count;
    }
    return most >= 2 ? most : 0;
}

/* One way to cut: along `extent` in units of `unit`, `ctas` CTAs per `tile_cut` of it (a batch:
 * unit and tile_cut 1, an item's CTAs), no slice narrower than `narrowest` (two waves). */
struct way {
    uint64_t extent, unit, ctas, narrowest;
    uint32_t tile_cut;
};

/* How a request arriving as the longest slice begins sees a slicing: that slice's waves, its
 * share of the extent, and the count; waves 0: no slicing. */
struct seen {
    uint64_t waves, count, longest;
    long double share;
};

/* Slices w wide along x (at most want; the rest a slice of its own where it is at least the
 * narrowest, else the last one's), seen as above. */
static struct seen seen_at(const struct way *x, uint64_t w, uint64_t want, uint32_t sms)
{
    uint64_t count = min_u(x->extent / w + (x->extent % w >= x->narrowest), want);
    if (count < 2)
        return (struct seen){0};
    uint64_t last = x->extent - (count - 1) * w, longest = last > w ? last : w;
    return (struct seen){div_up(div_up(longest, x->tile_cut) * x->ctas, sms), count, longest,
                         (long double)longest / x->extent};
}

static bool seen_sooner(const struct seen *a, const struct seen *b)
{
    if (!a->waves || !b->waves)
        return a->waves && !b->waves;
    if (a->waves != b->waves)
        return a->waves < b->waves;
    if (a->share != b->share)
        return a->share < b->share;
    return a->count < b->count;
}

/* The soonest-ending slicing along x, every width (unit multiple) tried. */
static struct seen soonest(const struct way *x, uint64_t want, uint32_t sms)
{
    struct seen best = {0};
    for (uint64_t w = x->narrowest; x->narrowest <= x->extent && w <= x->extent - x->narrowest;
         w += x->unit) {
        struct seen s = seen_at(x, w, want, sms);
        if (seen_sooner(&s, &best))
            best = s;
    }
    return best;
}

static void check_rules(const struct gemm_problem *p, const struct gemm_plan *plan)
{
    uint32_t tm = p->tile_m ? p->tile_m : 256, tn = p->tile_n ? p->tile_n : 256;
    uint64_t items = p->batch > 1 ? p->batch : 1, splits = p->splits > 1 ? p->splits : 1;
    uint64_t tile_ctas = div_up(p->m, tm) * div_up(p->n, tn) * splits; /* an item's CTAs */
    /* The CTAs of one tile's length along n (every row of tiles, of every item), and along m. */
    uint64_t ctas_n = div_up(p->m, tm) * items * splits, ctas_m = div_up(p->n, tn) * items * splits;
    uint64_t min_n = narrowest(ctas_n, tn, p->sms), min_m = narrowest(ctas_m, tm, p->sms);
    uint64_t min_items = 1; /* the fewest items of two waves */
    while (min_items * tile_ctas < 2ull * p->sms)
        min_items++;
    uint64_t want = min_u(div_up(p->learned_ns, p->target_ns), GEMM_PLAN_MAX_SLICES);
    /* Each cut's soonest-ending slicing of two waves, in the order ties go (batch, n, m). */
    const struct way ways[3] = {{items, 1, tile_ctas, min_items, 1},
                                {p->n, unit_of(tn), ctas_n, min_n, tn},
                                {p->m, unit_of(tm), ctas_m, min_m, tm}};
    static const enum gemm_cut names[3] = {GEMM_CUT_BATCH, GEMM_CUT_N, GEMM_CUT_M};
    struct seen best[3] = {items > 1 ? soonest(&ways[0], want, p->sms) : (struct seen){0},
                           soonest(&ways[1], want, p->sms), soonest(&ways[2], want, p->sms)};
    int soon = -1;
    for (int i = 0; i < 3; i++)
        if ((i != 2 || !p->rows_fixed) && best[i].waves &&
            (soon < 0 || seen_sooner(&best[i], &best[soon])))
            soon = i;
    bool two_waves = soon >= 0;
    uint64_t costed_n = two_waves ? 0 : costed_most(p->n, ctas_n, tn, p->sms, want);
    uint64_t costed_m =
        two_waves || costed_n || p->rows_fixed ? 0 : costed_most(p->m, ctas_m, tm, p->sms, want);
    if (!plan->count) {
        /* Whole: SMALL, or UNSUPPORTED where only the rows, which must stay whole, would cut. */
        bool rows_would =
            p->rows_fixed && (best[2].waves || costed_most(p->m, ctas_m, tm, p->sms, want));
        CHECK_INT(plan->why, rows_would ? GEMM_WHOLE_UNSUPPORTED : GEMM_WHOLE_SMALL);
        CHECK(!two_waves && !costed_n && !costed_m);
        return;
    }
    CHECK(!p->rows_fixed || plan->cut != GEMM_CUT_M);
    CHECK_INT(plan->why, GEMM_WHOLE_NONE);
    CHECK(plan->count >= 2);
    CHECK(plan->count <= want);
    if (!two_waves) { /* slices of fewer waves: the most the cost bound allows, n first */
        CHECK_INT(plan->cut, costed_n ? GEMM_CUT_N : GEMM_CUT_M);
        CHECK_INT(plan->count, costed_n ? costed_n : costed_m);
    } else { /* the soonest-ending of all, seen as every width would be */
        CHECK_INT(plan->cut, names[soon]);
        int i = plan->cut == GEMM_CUT_BATCH ? 0 : plan->cut == GEMM_CUT_N ? 1 : 2;
        struct seen s = seen_at(&ways[i], plan->width, want, p->sms);
        CHECK_INT(s.count, plan->count);
        CHECK_INT(s.waves, best[soon].waves);
        CHECK_INT(s.longest, best[soon].longest); /* the same cut: checked above */
        CHECK_INT(s.count, best[soon].count);
    }
    bool batch_cut = plan->cut == GEMM_CUT_BATCH;
    uint64_t extent = batch_cut ? items : plan->cut == GEMM_CUT_N ? p->n : p->m;
    uint32_t tcut = plan->cut == GEMM_CUT_N ? tn : tm;
    uint64_t ctas = plan->cut == GEMM_CUT_N ? ctas_n : ctas_m;
    if (!two_waves)
        CHECK(3 * waves(extent, plan->width, plan->count, ctas, tcut, p->sms) <=
              4 * waves(extent, extent, 1, ctas, tcut, p->sms));
    uint64_t next = 0;
    for (uint32_t i = 0; i < plan->count; i++) {
        uint64_t first, size;
        gemm_plan_slice(plan, extent, i, &first, &size);
        if (!CHECK_INT(first, next))
            break;
        /* Each as wide as the first but the last: wider, or (two waves) narrower. */
        CHECK(i + 1 == plan->count ? size >= plan->width || two_waves : size == plan->width);
        if (batch_cut) {
            CHECK(size * tile_ctas >= 2ull * p->sms);
        } else {
            CHECK_INT(first % GEMM_PLAN_GRANULE, 0);
            CHECK_INT(first % tcut, 0);
            CHECK(!two_waves || ctas * div_up(size, tcut) >= 2ull * p->sms);
        }
        next = first + size;
    }
    CHECK_INT(next, extent);
}

/* Plans p, expecting count slices along cut, `width` wide unless width is 0, and checks the plan
 * against the rules; the plan in *plan. */
static void expect_plan(const struct gemm_problem *p, uint32_t count, enum gemm_cut cut,
                        uint64_t width, struct gemm_plan *plan)
{
    CHECK_INT(gemm_plan_make(p, plan), count);
    if (count)
        CHECK_INT(plan->cut, cut);
    if (count && width)
        CHECK_INT(plan->width, width);
    check_rules(p, plan);
}

static void measured_shapes(void)
{
    struct gemm_plan plan;
    /* The LM head's logits: 50,257 x 4096 (8 x 512 tokens), 128x256 tiles, 132 SMs, 4.4 ms: five
     * wanted at 1 ms. Along n, four 1024-column slices (a quarter each); along m, four of 10,240
     * rows and the rest, 9297 (a fifth): m. */
    struct gemm_problem head = {50257, 4096, 128, 256, 132, 4400000, 1 * MS, 0, 0, false};
    CHECK_INT(gemm_plan_make(&head, &plan), 5);
    CHECK_INT(plan.cut, GEMM_CUT_M);
    CHECK_INT(plan.width, 10240);
    uint64_t first, size;
    gemm_plan_slice(&plan, head.m, 4, &first, &size);
    CHECK_INT(size, 50257 - 4 * 10240);
    check_rules(&head, &plan);
    /* With a bias that cannot move with the rows, n. */
    head.rows_fixed = true;
    expect_plan(&head, 4, GEMM_CUT_N, 1024, &plan);
    /* Its gradient over the 1024-row weight: 1024 x 50,257; a slice needs 33 columns of tiles
     * (8448 columns, so 9216), three wanted: two of 17,408 and the rest, 15,441, of two waves
     * too (two of 17,408 and a last of 32,849 took half as long again). */
    struct gemm_problem grad = {1024, 50257, 128, 256, 132, 3 * MS, 1 * MS, 0, 0, false};
    CHECK_INT(gemm_plan_make(&grad, &plan), 3);
    CHECK_INT(plan.cut, GEMM_CUT_N);
    CHECK_INT(plan.width, 17408);
    gemm_plan_slice(&plan, grad.n, 2, &first, &size);
    CHECK_INT(first, 2 * 17408);
    CHECK_INT(size, 50257 - 2 * 17408);
    check_rules(&grad, &plan);
    /* The hidden state's gradient, 1024 x 4096 with k = 50,257 split in three (384 CTAs, three
     * waves on 132 SMs; 4.4 ms): no two slices of two waves, but four slices of 1024 tokens, one
     * wave each (96 CTAs), are four waves in all, within 4/3 of three (the H200 measured 1.35x). */
    struct gemm_problem input_grad = {1024, 4096, 128, 256, 132, 4400000, 500000, 0, 3, false};
    expect_plan(&input_grad, 4, GEMM_CUT_N, 1024, &plan);
    /* Without the split of k (128 CTAs, one wave), any cut costs twice the whole: whole. */
    struct gemm_problem small = {1024, 4096, 128, 256, 132, 4 * MS, 1 * MS, 0, 0, false};
    CHECK_INT(gemm_plan_make(&small, &plan), 0);
    CHECK_INT(plan.why, GEMM_WHOLE_SMALL);
    check_rules(&small, &plan);
    /* Split in two (256 CTAs, two waves): two slices of 2048 are two waves, as the whole. */
    small.splits = 2;
    expect_plan(&small, 2, GEMM_CUT_N, 2048, &plan);
    /* Too few columns, enough rows: along m (n = 1024 leaves one slice at most). */
    struct gemm_problem tall = {65536, 1024, 128, 256, 132, 8 * MS, 1 * MS, 0, 0, false};
    CHECK(gemm_plan_make(&tall, &plan) >= 2);
    CHECK_INT(plan.cut, GEMM_CUT_M);
    check_rules(&tall, &plan);
    /* ...unless its rows must stay whole: then its form does not slice. */
    tall.rows_fixed = true;
    CHECK_INT(gemm_plan_make(&tall, &plan), 0);
    CHECK_INT(plan.why, GEMM_WHOLE_UNSUPPORTED);
    check_rules(&tall, &plan);
}

/* PyTorch's bmm at the shapes of tests/gpu/gemmex_identical.py, on an H200's 132 SMs. */
static void batches(void)
{
    struct gemm_plan plan;
    /* (64, 512, 4096) x (64, 4096, 512): 64 items of 512 x 512, 8 tiles of 128x256 each, 512
     * in all: under four waves, no two slices of two. */
    struct gemm_problem bmm = {512, 512, 128, 256, 132, 4 * MS, 1 * MS, 64, 0, false};
    CHECK_INT(gemm_plan_make(&bmm, &plan), 0);
    CHECK_INT(plan.why, GEMM_WHOLE_SMALL);
    check_rules(&bmm, &plan);
    /* The same on 128x128 tiles: 16 each, 17 items make two waves; four wanted, three fit, of 21,
     * 21 and 22 items (three waves the longest; 17, 17 and 30 would be four). */
    bmm.tile_n = 128;
    CHECK_INT(gemm_plan_make(&bmm, &plan), 3);
    CHECK_INT(plan.cut, GEMM_CUT_BATCH);
    CHECK_INT(plan.width, 21);
    uint64_t first, size;
    gemm_plan_slice(&plan, 64, 2, &first, &size);
    CHECK_INT(first, 42);
    CHECK_INT(size, 22);
    check_rules(&bmm, &plan);
    /* 32 items of 2048 x 2048 (128 tiles each), 3 ms at 1 ms: slices of 11, 11 and 10 items (11
     * waves the longest, against 16 for 1024 of n or m). */
    struct gemm_problem wide = {2048, 2048, 128, 256, 132, 3 * MS, 1 * MS, 32, 0, false};
    expect_plan(&wide, 3, GEMM_CUT_BATCH, 11, &plan);
    /* Two items of 8192 x 8192, 8 ms: eight along n of both, 4 waves each, not two slices of one
     * item, 16 waves each. */
    struct gemm_problem two = {8192, 8192, 128, 256, 132, 8 * MS, 1 * MS, 2, 0, false};
    expect_plan(&two, 8, GEMM_CUT_N, 1024, &plan);
    /* At 4 ms: four along n, 8 waves each, against 16 for an item. At 2 ms two along n are 16
     * waves too, half of it each, as an item: the items, on the tie. */
    two.learned_ns = 4 * MS;
    expect_plan(&two, 4, GEMM_CUT_N, 2048, &plan);
    two.learned_ns = 2 * MS;
    expect_plan(&two, 2, GEMM_CUT_BATCH, 1, &plan);
    /* A batch of one is one GEMM: along m, as without a batch. */
    struct gemm_problem one = {50257, 4096, 128, 256, 132, 4400000, 1 * MS, 1, 0, false};
    CHECK_INT(gemm_plan_make(&one, &plan), 5);
    CHECK_INT(plan.cut, GEMM_CUT_M);
}

static void reasons(void)
{
    struct gemm_plan plan;
    struct gemm_problem p = {50257, 4096, 128, 256, 132, 4 * MS, 0, 0, 0, false};
    CHECK_INT(gemm_plan_make(&p, &plan), 0);
    CHECK_INT(plan.why, GEMM_WHOLE_OFF);
    p.target_ns = MS;
    p.learned_ns = 0;
    CHECK_INT(gemm_plan_make(&p, &plan), 0);
    CHECK_INT(plan.why, GEMM_WHOLE_UNLEARNED);
    p.learned_ns = MS;
    CHECK_INT(gemm_plan_make(&p, &plan), 0);
    CHECK_INT(plan.why, GEMM_WHOLE_SHORT);
    p.learned_ns = MS + 1;
    CHECK_INT(gemm_plan_make(&p, &plan), 2);
    p.sms = 0;
    CHECK_INT(gemm_plan_make(&p, &plan), 0);
    CHECK_INT(plan.why, GEMM_WHOLE_SMALL);
    CHECK(gemm_plan_reason(GEMM_WHOLE_CAPTURING)[0] != '?');
    CHECK(gemm_plan_reason(GEMM_WHOLE_COUNT)[0] == '?');
}

/* A 768-row tile: boundaries along m at multiples of 3072, the least multiple of both. */
static void odd_tile(void)
{
    struct gemm_plan plan;
    struct gemm_problem p = {24576, 512, 768, 64, 16, 10 * MS, 1 * MS, 0, 0, false};
    CHECK(gemm_plan_make(&p, &plan) >= 2);
    CHECK_INT(plan.cut, GEMM_CUT_M);
    CHECK_INT(plan.width % 3072, 0);
    check_rules(&p, &plan);
}

/* Values no device runs but an application can state (an algorithm's split of k, a batch count,
 * an SM count target, dimensions of layouts): CTA counts past 2^64 must not wrap (a count of 0
 * divided by), and the plan keeps its shape: at most GEMM_PLAN_MAX_SLICES slices, boundaries at
 * the unit, the last slice not empty, the dimension covered. */
static void extremes(void)
{
    static const uint64_t dims[] = {1, 1024, 16 * 256, 70000, 1ull << 24, 1ull << 40};
    static const uint64_t batches[] = {0, 2, 1ull << 30, 0x7fffffff};
    static const uint32_t splits[] = {0, 3, 1u << 30, 0x7fffffff, UINT32_MAX};
    static const uint32_t sms[] = {1, 132, 0x7fffffff, UINT32_MAX};
    for (size_t a = 0; a < sizeof dims / sizeof *dims; a++)
        for (size_t b = 0; b < sizeof dims / sizeof *dims; b++)
            for (size_t c = 0; c < sizeof batches / sizeof *batches; c++)
                for (size_t d = 0; d < sizeof splits / sizeof *splits; d++)
                    for (size_t e = 0; e < sizeof sms / sizeof *sms; e++) {
                        struct gemm_problem p = {dims[a],    dims[b], 0,          64,        sms[e],
                                                 UINT64_MAX, 1,       batches[c], splits[d], false};
                        struct gemm_plan plan;
                        uint32_t count = gemm_plan_make(&p, &plan);
                        if (!CHECK_INT(count, plan.count) || !count)
                            continue;
                        CHECK(count >= 2 && count <= GEMM_PLAN_MAX_SLICES);
                        bool batch_cut = plan.cut == GEMM_CUT_BATCH;
                        uint64_t extent = batch_cut                ? batches[c]
                                          : plan.cut == GEMM_CUT_N ? p.n
                                                                   : p.m;
                        uint64_t first, size;
                        gemm_plan_slice(&plan, extent, count - 1, &first, &size);
                        CHECK(size > 0);
                        CHECK(first + size == extent);
                        if (!batch_cut)
                            CHECK_INT(plan.width % GEMM_PLAN_GRANULE, 0);
                    }
    /* Along n, every item's rows of tiles times the split of k: 16 x 2^30 x 2^30 CTAs, 2^64. */
    struct gemm_problem wraps = {16 * 256, 1ull << 20, 0,          0,        132,
                                 10 * MS,  1 * MS,     1ull << 30, 1u << 30, false};
    struct gemm_plan plan;
    CHECK(gemm_plan_make(&wraps, &plan) >= 2);
}

static void random_problems(void)
{
    static const uint32_t tiles[] = {0, 64, 96, 128, 160, 192, 256, 512, 768};
    unsigned long long seed = 45;
    for (int i = 0; i < 20000; i++) {
        struct gemm_problem p = {
            .m = 1 + check_rand_below(&seed, 70000),
            .n = 1 + check_rand_below(&seed, 70000),
            .tile_m = tiles[check_rand_below(&seed, 9)],
            .tile_n = tiles[check_rand_below(&seed, 9)],
            .sms = 1 + check_rand_below(&seed, 200),
            .learned_ns = 1 + check_rand_below(&seed, 100000000),
            .target_ns = 1 + check_rand_below(&seed, 5000000),
            .batch = i % 2 ? 0 : check_rand_below(&seed, 300),
            .splits = (uint32_t)check_rand_below(&seed, 5),
            .rows_fixed = i % 3 == 0,
        };
        struct gemm_plan plan;
        gemm_plan_make(&p, &plan);
        if (p.learned_ns <= p.target_ns)
            CHECK_INT(plan.why, GEMM_WHOLE_SHORT);
        else
            check_rules(&p, &plan);
    }
}

/* Shapes where an earlier rule fell short: each check_rules against every width. */
static void soonest_cases(void)
{
    struct gemm_plan plan;
    /* 2^21 square, 64 wanted: the even split, 64 of 32,768 (a grid of 1024 widths from the
     * narrowest missed it). */
    struct gemm_problem square = {1u << 21, 1u << 21, 128, 256, 132, 64 * MS, 1 * MS, 0, 0, false};
    expect_plan(&square, 64, GEMM_CUT_N, 32768, &plan);
    /* Seven items of 8192 x 8192, four wanted: four slices along n of a quarter each, not items
     * of 1, 1, 1 and 4 (counting slices chose those). */
    struct gemm_problem seven = {8192, 8192, 128, 256, 132, 4 * MS, 1 * MS, 7, 0, false};
    expect_plan(&seven, 4, GEMM_CUT_N, 0, &plan);
    /* Waves, not elements: along m 5120 rows of 6 waves, where n's shortest longest, a smaller
     * share, runs 7. */
    struct gemm_problem waves = {45218, 10329, 256, 256, 146, 10 * MS, 1 * MS, 0, 0, false};
    CHECK(gemm_plan_make(&waves, &plan) >= 2);
    CHECK_INT(plan.cut, GEMM_CUT_M);
    check_rules(&waves, &plan);
    /* Large random extents, against every width (at most a few thousand a cut). */
    unsigned long long seed = 29;
    for (int i = 0; i < 300; i++) {
        struct gemm_problem p = {
            .m = 1 + check_rand_below(&seed, 1u << 22),
            .n = 1 + check_rand_below(&seed, 1u << 22),
            .tile_m = 128,
            .tile_n = 256,
            .sms = 1 + check_rand_below(&seed, 200),
            .learned_ns = 1 + check_rand_below(&seed, 100000000),
            .target_ns = 1 + check_rand_below(&seed, 2000000),
            .splits = (uint32_t)check_rand_below(&seed, 4),
            .rows_fixed = i % 4 == 0,
        };
        gemm_plan_make(&p, &plan);
        if (p.learned_ns > p.target_ns)
            check_rules(&p, &plan);
    }
}

int main(void)
{
    measured_shapes();
    batches();
    reasons();
    odd_tile();
    random_problems();
    soonest_cases();
    extremes();
    return check_finish("unit.gemm_plan");
}
