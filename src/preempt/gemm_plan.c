/*
 * gemm_plan.c - cutting a long GEMM into slices (gemm_plan.h says what and why).
 *
 * The number of slices wanted is the learned time over the target, rounded up, and no more are
 * made. A cut runs along a batch's items (any boundary between items keeps every tile whole, and
 * every pointer moves by whole items), D's columns (n: only the pointers of B, C and D move) or
 * its rows (m: those of A, C, D and a bias; not where rows_fixed says the BLAS layer cannot move
 * the bias). Along a cut the slices' width is a multiple of its unit (the granule and the tile
 * side, both; an item), short enough to leave two slices, and at least what keeps
 * GEMM_PLAN_MIN_WAVES waves of CTAs; the rest after the whole widths is a slice of its own where it
 * keeps the waves too, else part of the last. Of every such slicing along every cut, the plan takes
 * the one that ends soonest for a request arriving as its longest slice begins, since that request
 * waits for all of it: the fewest waves of CTAs in that slice, then its smallest share of the
 * extent, then the fewest slices; items, n, m in that order on a tie. (On an H200 GPT-2's LM-head
 * logits cut into four 1024-token columns of 1.1 ms, where the vocabulary gave slices of 0.65 ms,
 * were most of the language-model row's wait: h200-run-29-trace.md.) Where no cut keeps two waves,
 * the most slices (n, then m) whose waves summed stay within the cost bound.
 */
#include "gemm_plan.h"

#include <stdbool.h>
#include <stddef.h>

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* a * b, or UINT64_MAX where that does not fit: a CTA count an application's values (a split of
 * k, a batch, layouts' sizes) push past 2^64 is "more than any device runs", never a small or
 * zero count that wrapped. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Slices of width along a cut of `extent`, no more than wanted: the plan's count (the last
 * takes the rest). */
static uint32_t count_of(uint64_t extent, uint64_t width, uint64_t want)
{
    uint64_t count = width ? extent / width : 0;
    return (uint32_t)(count < want ? count : want);
}

/* A cut along a dimension of `extent` (or a batch's items) whose tiles are tile_cut long: its
 * unit (the granule and the tile side, both; an item), and the CTAs of one tile's length of it
 * (`ctas_across`: every tile across it, in every item, times the split of k; an item's CTAs). */
struct cut {
    uint64_t extent, unit, ctas_across;
    uint32_t tile_cut;
};

static struct cut cut_of(uint64_t extent, uint64_t across, uint32_t tile_cut, uint32_t tile_across,
                         uint64_t items, uint64_t splits)
{
    return (struct cut){extent, GEMM_PLAN_GRANULE / gcd(GEMM_PLAN_GRANULE, tile_cut) * tile_cut,
                        mul_sat(mul_sat(div_up(across, tile_across), items), splits), tile_cut};
}

/* The waves a slice `width` wide along c runs. */
static uint64_t waves_of(const struct cut *c, uint64_t width, uint32_t sms)
{
    return div_up(mul_sat(div_up(width, c->tile_cut), c->ctas_across), sms);
}

/* The widths costed_width tries along c: multiples of its unit, but no more than 1024 of them
 * spread over it (a few hundred at most where the SM count is the device's: a longer dimension
 * has slices of two waves). */
static uint64_t width_step(const struct cut *c)
{
    return c->unit * (c->extent / 2 / c->unit / 1024 + 1);
}

/* Slices along one cut: `count` of them, `width` wide but the last, which is `last` wide. */
struct slicing {
    uint64_t width, last;
    uint32_t count;
};

static uint64_t longest_of(const struct slicing *s)
{
    return s->last > s->width ? s->last : s->width;
}

/* Slices `width` wide along c, at most want: the rest after the whole widths a slice of its own
 * where it is at least `narrowest` wide, else the last one's. count 0: fewer than two. */
static struct slicing slicing_at(const struct cut *c, uint64_t width, uint64_t narrowest,
                                 uint64_t want)
{
    uint64_t count = c->extent / width, rest = c->extent - count * width;
    count += rest >= narrowest;
    if (count > want)
        count = want;
    if (count < 2)
        return (struct slicing){0};
    return (struct slicing){width, c->extent - (count - 1) * width, (uint32_t)count};
}

/* Whether a (along ca) ends sooner than b (along cb), as a request arriving when its longest
 * slice begins sees it: fewer waves of CTAs in that slice (the same CTAs along any cut of one
 * GEMM), then a smaller share of its extent, then fewer slices. A plan of no slices never does. */
static bool sooner(const struct slicing *a, const struct cut *ca, const struct slicing *b,
                   const struct cut *cb, uint32_t sms)
{
    if (!a->count || !b->count)
        return a->count && !b->count;
    uint64_t wa = waves_of(ca, longest_of(a), sms), wb = waves_of(cb, longest_of(b), sms);
    if (wa != wb)
        return wa < wb;
    long double sa = (long double)longest_of(a) / (long double)ca->extent,
                sb = (long double)longest_of(b) / (long double)cb->extent;
    if (sa != sb)
        return sa < sb;
    return a->count < b->count;
}

/* Slices along c that each keep GEMM_PLAN_MIN_WAVES waves, at most want: of every width (a
 * multiple of the unit, at least the narrowest of those waves), the slicing that ends soonest.
 * Below the extent over want a width only lengthens the last slice, and past the best slicing's
 * longest slice none can end sooner, so only the widths between are tried (at most
 * GEMM_PLAN_MAX_WIDTHS of them; few where the SM count is a device's). count 0: fewer than two
 * fit. */
static struct slicing two_wave_cut(const struct cut *c, uint32_t sms, uint64_t want)
{
    uint64_t min_tiles = div_up((uint64_t)GEMM_PLAN_MIN_WAVES * sms, c->ctas_across);
    uint64_t narrowest = mul_sat(div_up(mul_sat(min_tiles, c->tile_cut), c->unit), c->unit);
    uint64_t from = c->extent / want / c->unit * c->unit;
    struct slicing best = {0};
    uint32_t tried = 0;
    for (uint64_t width = from > narrowest ? from : narrowest;
         narrowest <= c->extent && width <= c->extent - narrowest &&
         (!best.count || width <= longest_of(&best)) && tried < GEMM_PLAN_MAX_WIDTHS;
         width += c->unit, tried++) {
        struct slicing s = slicing_at(c, width, narrowest, want);
        if (sooner(&s, c, &best, c, sms))
            best = s;
    }
    return best;
}

/* Slices along c of any number of waves: the width of the most (at most want) whose waves summed
 * are within GEMM_PLAN_COST_NUM / GEMM_PLAN_COST_DEN of the whole's (of those, the cheapest, then
 * the widest), or 0 when no two are. The waves' rounding makes a width's cost hard to foresee, so
 * every width_step is tried. */
static uint64_t costed_width(const struct cut *c, uint32_t sms, uint64_t want)
{
    uint64_t whole = waves_of(c, c->extent, sms), best = 0, best_cost = 0;
    uint32_t best_count = 0;
    uint64_t step = width_step(c);
    for (uint64_t width = c->unit; c->extent / width >= 2; width += step) {
        uint32_t n = count_of(c->extent, width, want);
        uint64_t last = c->extent - (uint64_t)(n - 1) * width;
        uint64_t cost = mul_sat(n - 1, waves_of(c, width, sms)),
                 last_waves = waves_of(c, last, sms);
        cost = cost > UINT64_MAX - last_waves ? UINT64_MAX : cost + last_waves;
        if (n >= 2 && cost < UINT64_MAX / GEMM_PLAN_COST_DEN &&
            cost * GEMM_PLAN_COST_DEN <= mul_sat(whole, GEMM_PLAN_COST_NUM) &&
            (n > best_count || (n == best_count && cost <= best_cost))) {
            best = width, best_count = n, best_cost = cost;
        }
    }
    return best;
}

uint32_t gemm_plan_make(const struct gemm_problem *p, struct gemm_plan *plan)
{
    *plan = (struct gemm_plan){.why = GEMM_WHOLE_NONE};
    if (!p->target_ns)
        plan->why = GEMM_WHOLE_OFF;
    else if (!p->learned_ns)
        plan->why = GEMM_WHOLE_UNLEARNED;
    else if (p->learned_ns <= p->target_ns)
        plan->why = GEMM_WHOLE_SHORT;
    else if (!p->sms || !p->m || !p->n)
        plan->why = GEMM_WHOLE_SMALL;
    if (plan->why != GEMM_WHOLE_NONE)
        return 0;
    uint32_t tm = p->tile_m ? p->tile_m : GEMM_PLAN_UNKNOWN_TILE;
    uint32_t tn = p->tile_n ? p->tile_n : GEMM_PLAN_UNKNOWN_TILE;
    uint64_t want = div_up(p->learned_ns, p->target_ns);
    if (want > GEMM_PLAN_MAX_SLICES)
        want = GEMM_PLAN_MAX_SLICES;
    uint64_t items = p->batch > 1 ? p->batch : 1, splits = p->splits > 1 ? p->splits : 1;
    struct cut along_n = cut_of(p->n, p->m, tn, tm, items, splits);
    struct cut along_m = cut_of(p->m, p->n, tm, tn, items, splits);
    struct cut along_items = {items, 1,
                              mul_sat(mul_sat(div_up(p->m, tm), div_up(p->n, tn)), splits), 1};
    /* Of slices of two waves, along the batch's items, n or m, those that end soonest; on a tie
     * in that order: whole items move every pointer by whole items, and along n only those of
     * B, C and D move. */
    const struct cut *cuts[] = {&along_items, &along_n, &along_m};
    static const enum gemm_cut names[] = {GEMM_CUT_BATCH, GEMM_CUT_N, GEMM_CUT_M};
    struct slicing rows = two_wave_cut(&along_m, p->sms, want);
    struct slicing by[] = {
        items > 1 ? two_wave_cut(&along_items, p->sms, want) : (struct slicing){0},
        two_wave_cut(&along_n, p->sms, want), p->rows_fixed ? (struct slicing){0} : rows};
    size_t best = 0;
    for (size_t i = 1; i < 3; i++)
        if (sooner(&by[i], cuts[i], &by[best], cuts[best], p->sms))
            best = i;
    if (by[best].count)
        *plan = (struct gemm_plan){names[best], by[best].count, by[best].width, GEMM_WHOLE_NONE};
    uint64_t width;
    if (!plan->count && (width = costed_width(&along_n, p->sms, want)))
        *plan = (struct gemm_plan){GEMM_CUT_N, count_of(p->n, width, want), width, GEMM_WHOLE_NONE};
    bool rows_only =
        !plan->count && p->rows_fixed && (rows.count || costed_width(&along_m, p->sms, want));
    if (!plan->count && !p->rows_fixed && (width = costed_width(&along_m, p->sms, want)))
        *plan = (struct gemm_plan){GEMM_CUT_M, count_of(p->m, width, want), width, GEMM_WHOLE_NONE};
    if (!plan->count) /* where only the rows could be cut, it is the form that is not sliced */
        *plan = (struct gemm_plan){.why = rows_only ? GEMM_WHOLE_UNSUPPORTED : GEMM_WHOLE_SMALL};
    return plan->count;
}

void gemm_plan_slice(const struct gemm_plan *plan, uint64_t extent, uint32_t i, uint64_t *first,
                     uint64_t *size)
{
    *first = (uint64_t)i * plan->width;
    *size = i + 1 < plan->count ? plan->width : extent - *first;
}

const char *gemm_plan_reason(enum gemm_whole_reason why)
{
    static const char *const what[] = {
#define GEMM_WHOLE_TEXT(name, text, shown) text,
        GEMM_WHOLE_REASONS(GEMM_WHOLE_TEXT)
#undef GEMM_WHOLE_TEXT
    };
    return (unsigned)why < GEMM_WHOLE_COUNT ? what[why] : "?";
}
