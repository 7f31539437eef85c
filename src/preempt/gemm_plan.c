/*
 * gemm_plan.c - cutting a long GEMM into slices (gemm_plan.h says what and why).
 *
 * The number of slices wanted is the learned time over the target, rounded up. Along a cut, a
 * slice's width is that share of the extent rounded up to the cut's unit (the granule and the
 * tile side, both), at most half the extent, and at least what keeps GEMM_PLAN_MIN_WAVES waves
 * of tiles; the slices are
 * then as many whole widths as fit, no more than wanted, the last taking the rest, so that none
 * is narrower. Columns (n) before rows (m): along n only the pointers of B, C and D move, along
 * m those of A, C, D and a bias. A batch's items before either (any boundary between items keeps
 * every tile whole, and every pointer moves by whole items), unless a cut within the items gives
 * more of the slices wanted (a batch of two long GEMMs).
 */
#include "gemm_plan.h"

#include <stddef.h>

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
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

/* Slices of `extent` in units of `unit`, each at least min_width, `want` of them if they fit:
 * their width, or 0 when fewer than two fit. */
static uint64_t width_of(uint64_t extent, uint64_t unit, uint64_t min_width, uint64_t want)
{
    uint64_t width = div_up(div_up(extent, want), unit) * unit;
    uint64_t widest_pair = extent / 2 / unit * unit; /* the widest that still gives two */
    if (width > widest_pair)
        width = widest_pair;
    if (width < min_width)
        width = min_width;
    return width && extent / width >= 2 ? width : 0;
}

/* Slices along a dimension of `extent` whose tiles are tile_cut long, across `across` rows or
 * columns of tiles tile_across long, in each of `items`: their width, or 0 when fewer than two
 * fit. */
static uint64_t cut_width(uint64_t extent, uint64_t across, uint32_t tile_cut, uint32_t tile_across,
                          uint64_t items, uint32_t sms, uint64_t want)
{
    uint64_t unit = GEMM_PLAN_GRANULE / gcd(GEMM_PLAN_GRANULE, tile_cut) * tile_cut;
    uint64_t tiles_across = div_up(across, tile_across) * items;
    uint64_t min_tiles = div_up((uint64_t)GEMM_PLAN_MIN_WAVES * sms, tiles_across);
    return width_of(extent, unit, div_up(min_tiles * tile_cut, unit) * unit, want);
}

/* Slices of a batch of `items`, each item of `tiles` tiles: items per slice, or 0 when fewer
 * than two fit. Any item boundary will do, so the wanted count is met where two waves allow,
 * the last slice taking the rest. */
static uint64_t batch_width(uint64_t items, uint64_t tiles, uint32_t sms, uint64_t want)
{
    uint64_t width = items / want, min_width = div_up((uint64_t)GEMM_PLAN_MIN_WAVES * sms, tiles);
    if (width < min_width)
        width = min_width;
    return items / width >= 2 ? width : 0;
}

/* Slices of `width` along `cut` of `extent`, no more than wanted: the plan's count. */
static uint32_t count_of(uint64_t extent, uint64_t width, uint64_t want)
{
    uint64_t count = width ? extent / width : 0;
    return (uint32_t)(count < want ? count : want);
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
    uint64_t items = p->batch > 1 ? p->batch : 1;
    uint64_t width = cut_width(p->n, p->m, tn, tm, items, p->sms, want);
    plan->cut = GEMM_CUT_N;
    if (!width) {
        width = cut_width(p->m, p->n, tm, tn, items, p->sms, want);
        plan->cut = GEMM_CUT_M;
    }
    plan->width = width;
    plan->count = count_of(plan->cut == GEMM_CUT_N ? p->n : p->m, width, want);
    /* A batch's items first, unless a cut within the items gives more of the slices wanted. */
    uint64_t items_wide =
        items > 1 ? batch_width(items, div_up(p->m, tm) * div_up(p->n, tn), p->sms, want) : 0;
    uint32_t item_slices = count_of(items, items_wide, want);
    if (item_slices && item_slices >= plan->count)
        *plan = (struct gemm_plan){GEMM_CUT_BATCH, item_slices, items_wide, GEMM_WHOLE_NONE};
    if (!plan->count)
        *plan = (struct gemm_plan){.why = GEMM_WHOLE_SMALL};
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
