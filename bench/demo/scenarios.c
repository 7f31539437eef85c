/*
 * scenarios.c - the rows of gpuprio-demo's tables, as data.
 *
 * A row says what runs (the LC client, LC2, BE workers), which stream priority each workload
 * asks for, whether gpuprio is preloaded and with which GPUPRIO_* settings, which simulator
 * settings and kernel shapes it runs with, which rows its ratios refer to, and the table it is
 * printed in (struct scenario in demo.h says what each field means and what leaving it out
 * does). Nothing else in the demo names a row except the two default baselines (LC_BASELINE,
 * BE_BASELINE): adding one is adding a line here, and the header, the tables, the CSV, --help
 * and --scenario follow. Rows are printed in the order they stand here, each in its table.
 *
 * The default run (no --all) runs and prints only the rows with a headline label (HEAD, CURVE),
 * and runs unshown the baselines their ratios refer to: the client alone, next to BE natively and
 * under gpuprio in one process and in two, three priority groups, and, of the hardware levers,
 * the one that matters most: next to BE kernels as wide as the device and 8 ms long, which
 * neither admission nor stream priorities shorten (an LC kernel still waits for the one that
 * runs), reserved CUs with gpuprio's defaults (levers-8-all), beside the same natively. The
 * picture draws the rows marked CURVE: LC alone and next to BE, natively and under gpuprio, in
 * one process and two (one device, so their latencies share an axis).
 *
 * The workloads and their stream priorities are the same in native and gpuprio rows (the WL_*
 * macros), so that a native row and its gpuprio rows differ only in gpuprio. The program checks
 * the table when it starts (ids unique, baselines known, BE workers in range).
 */
#include "demo.h"

#include <string.h>

/* The workloads, and the stream priorities they ask for: the same in native and gpuprio rows. */
#define WL_LC .lc = true, .lc_prio = PRIO_GREATEST
#define WL_LC2 .lc2 = true, .lc2_prio = PRIO_MIDDLE
#define WL_BE(n) .be_workers = (n), .be_prio = PRIO_LEAST
#define WL_GROUPS .table = TABLE_GROUPS, WL_LC, WL_LC2, WL_BE(1) /* the second table */
#define SPLIT .table = TABLE_PROCS, .split = true /* one process per workload: the third table */
/* A gpuprio row with the given GPUPRIO_* settings. */
#define GPUPRIO(settings) .gpuprio = true, .env = (settings)
/* A row of the default run's table, with its label there; CURVE: also drawn in the picture. */
#define HEAD(label) .headline = (label)
#define CURVE(label) .headline = (label), .curve = true

/* gpuprio's settings per row. "default" unsets GPUPRIO_WINDOW and GPUPRIO_WINDOW_US, so an
 * inherited one cannot leak in: the row shows what an unconfigured deployment gets (500 us of
 * GPU time in flight, at most 16 commands, grace 150 us). The W rows count commands only. */
static const char *const gp_default[] = {"GPUPRIO_WINDOW", "GPUPRIO_WINDOW_US", NULL};
static const char *const gp_w1[] = {"GPUPRIO_WINDOW=1", "GPUPRIO_WINDOW_US=0", NULL};
static const char *const gp_w2[] = {"GPUPRIO_WINDOW=2", "GPUPRIO_WINDOW_US=0", NULL};
static const char *const gp_w4[] = {"GPUPRIO_WINDOW=4", "GPUPRIO_WINDOW_US=0", NULL};
static const char *const gp_w8[] = {"GPUPRIO_WINDOW=8", "GPUPRIO_WINDOW_US=0", NULL};

/* The levers table: a device of 8 CUs (compute slots), BE kernels as wide as it, of 2 or 8 ms,
 * LC kernels of one block. Streams ask for no priority (as PyTorch's ordinary ones) and are
 * blocking, so gpuprio can give them one: GPUPRIO_STREAM_PRIORITIES names LC high and BE low
 * (creation order), and each row turns on some levers only. */
static const char *const sim_8cus[] = {"HIPSIM_COMPUTE_SLOTS=8", NULL};
#define LEVERS(be_kernel_us)                                                                       \
    .table = TABLE_LEVERS, .sim_env = sim_8cus, .be_blocks = 8, .be_us = (be_kernel_us),           \
    .lc_prio = PRIO_DEFAULT, .be_prio = PRIO_DEFAULT, .blocking = true,                            \
    .lc_baseline = "levers-lc-alone"
#define LEVERS_BE(be_kernel_us) LEVERS(be_kernel_us), .be_baseline = "levers-be" #be_kernel_us
#define LEVERS_PRIORITIES "GPUPRIO_STREAM_PRIORITIES=high,low"
#define LV_LC .lc = true
#define LV_BE .be_workers = 1
/* Admission alone (Level 1, no hardware priority); hardware priority alone (admission off);
 * reserved CUs alone; everything at its default with 25% of the CUs reserved. */
static const char *const lv_admission[] = {LEVERS_PRIORITIES, "GPUPRIO_HW_PRIORITY=off",
                                           "GPUPRIO_WINDOW", "GPUPRIO_WINDOW_US", NULL};
static const char *const lv_hw[] = {LEVERS_PRIORITIES, "GPUPRIO_POLICY=passthrough", NULL};
static const char *const lv_reserve[] = {LEVERS_PRIORITIES, "GPUPRIO_POLICY=passthrough",
                                         "GPUPRIO_HW_PRIORITY=off", "GPUPRIO_CU_RESERVE=25%", NULL};
static const char *const lv_all[] = {LEVERS_PRIORITIES, "GPUPRIO_CU_RESERVE=25%", "GPUPRIO_WINDOW",
                                     "GPUPRIO_WINDOW_US", NULL};
/* Across processes (LC and BE each in a process of its own), where each process's priority is
 * its GPUPRIO_PRIORITY, and gpuprio holds BE back through the board: Level 1 (admission on the
 * host) or Level 2 (gates on the device, the default there). */
static const char *const lv_lc_high[] = {"GPUPRIO_PRIORITY=high", NULL};
static const char *const lv_be_low[] = {"GPUPRIO_PRIORITY=low", NULL};
#define LV_2P .split = true, .role_env = {[ROLE_LC] = lv_lc_high, [ROLE_BE] = lv_be_low}
static const char *const lv2p_l1[] = {"GPUPRIO_LEVEL=1", "GPUPRIO_HW_PRIORITY=off",
                                      "GPUPRIO_WINDOW", "GPUPRIO_WINDOW_US", NULL};
static const char *const lv2p_l2[] = {"GPUPRIO_LEVEL=2", "GPUPRIO_HW_PRIORITY=off",
                                      "GPUPRIO_WINDOW", "GPUPRIO_WINDOW_US", NULL};
static const char *const lv2p_hw[] = {"GPUPRIO_POLICY=passthrough", NULL};
static const char *const lv2p_reserve[] = {"GPUPRIO_POLICY=passthrough", "GPUPRIO_HW_PRIORITY=off",
                                           "GPUPRIO_CU_RESERVE=25%", NULL};
static const char *const lv2p_all[] = {"GPUPRIO_LEVEL=2", "GPUPRIO_CU_RESERVE=25%",
                                       "GPUPRIO_WINDOW", "GPUPRIO_WINDOW_US", NULL};

/* clang-format off */
const scenario demo_scenarios[] = {
    /* Baselines, native: the ratio columns refer to these two. */
    {.id = "lc-alone",   .title = "LC alone",               WL_LC, CURVE("LC alone")},
    {.id = "be-alone",   .title = "BE alone",               WL_BE(1)},
    /* LC next to one, then two BE workers: native, gpuprio's defaults, windows 1, 2, 4, 8. */
    {.id = "lc-1be",     .title = "LC + 1 BE",              WL_LC, WL_BE(1),
                         CURVE("LC + BE, native")},
    {.id = "lc-1be-gp",  .title = "LC + 1 BE, gpuprio",     WL_LC, WL_BE(1), GPUPRIO(gp_default),
                         CURVE("LC + BE, gpuprio")},
    {.id = "lc-1be-w1",  .title = "LC + 1 BE, gpuprio W=1", WL_LC, WL_BE(1), GPUPRIO(gp_w1)},
    {.id = "lc-1be-w2",  .title = "LC + 1 BE, gpuprio W=2", WL_LC, WL_BE(1), GPUPRIO(gp_w2)},
    {.id = "lc-1be-w4",  .title = "LC + 1 BE, gpuprio W=4", WL_LC, WL_BE(1), GPUPRIO(gp_w4)},
    {.id = "lc-1be-w8",  .title = "LC + 1 BE, gpuprio W=8", WL_LC, WL_BE(1), GPUPRIO(gp_w8)},
    {.id = "lc-2be",     .title = "LC + 2 BE",              WL_LC, WL_BE(2)},
    {.id = "lc-2be-gp",  .title = "LC + 2 BE, gpuprio",     WL_LC, WL_BE(2), GPUPRIO(gp_default)},
    {.id = "lc-2be-w1",  .title = "LC + 2 BE, gpuprio W=1", WL_LC, WL_BE(2), GPUPRIO(gp_w1)},
    {.id = "lc-2be-w2",  .title = "LC + 2 BE, gpuprio W=2", WL_LC, WL_BE(2), GPUPRIO(gp_w2)},
    {.id = "lc-2be-w4",  .title = "LC + 2 BE, gpuprio W=4", WL_LC, WL_BE(2), GPUPRIO(gp_w4)},
    {.id = "lc-2be-w8",  .title = "LC + 2 BE, gpuprio W=8", WL_LC, WL_BE(2), GPUPRIO(gp_w8)},
    /* Three priority groups (LC high, LC2 normal, BE low): native, gpuprio's defaults, W=1. */
    {.id = "3groups",    .title = "3 groups",               WL_GROUPS, HEAD("3 groups, native")},
    {.id = "3groups-gp", .title = "3 groups, gpuprio",      WL_GROUPS, GPUPRIO(gp_default),
                         HEAD("3 groups, gpuprio")},
    {.id = "3groups-w1", .title = "3 groups, gpuprio W=1",  WL_GROUPS, GPUPRIO(gp_w1)},
    /* The same workloads as separate processes on one shared device: native, gpuprio's defaults. */
    {.id = "lc-1be-2p",     .title = "LC + 1 BE, 2 processes",          WL_LC, WL_BE(1), SPLIT,
                            CURVE("LC + BE, 2 processes, native")},
    {.id = "lc-1be-2p-gp",  .title = "LC + 1 BE, 2 processes, gpuprio", WL_LC, WL_BE(1), SPLIT,
                            GPUPRIO(gp_default), CURVE("LC + BE, 2 processes, gpuprio")},
    {.id = "3groups-3p",    .title = "3 groups, 3 processes",  WL_LC, WL_LC2, WL_BE(1), SPLIT},
    {.id = "3groups-3p-gp", .title = "3 groups, 3 processes, gpuprio", WL_LC, WL_LC2, WL_BE(1),
                            SPLIT, GPUPRIO(gp_default)},
    /* The hardware levers (8 CUs, BE kernels 8 wide): alone, then next to 2 ms and 8 ms BE
     * kernels natively, with admission alone, hardware priorities alone, 25% of the CUs
     * reserved alone, and all of them. */
    {.id = "levers-lc-alone", .title = "LC alone, 8 CUs",             LV_LC, LEVERS(0),
                              HEAD("LC alone, 8 CUs")},
    {.id = "levers-be2000",   .title = "BE alone, 2 ms kernels",      LV_BE, LEVERS_BE(2000)},
    {.id = "levers-be8000",   .title = "BE alone, 8 ms kernels",      LV_BE, LEVERS_BE(8000)},
    {.id = "levers-2",        .title = "LC + BE 2 ms",                LV_LC, LV_BE, LEVERS_BE(2000)},
    {.id = "levers-2-adm",    .title = "LC + BE 2 ms, admission",     LV_LC, LV_BE, LEVERS_BE(2000),
                              GPUPRIO(lv_admission)},
    {.id = "levers-2-hw",     .title = "LC + BE 2 ms, HW priority",   LV_LC, LV_BE, LEVERS_BE(2000),
                              GPUPRIO(lv_hw)},
    {.id = "levers-2-cu",     .title = "LC + BE 2 ms, 25% CUs",       LV_LC, LV_BE, LEVERS_BE(2000),
                              GPUPRIO(lv_reserve)},
    {.id = "levers-2-all",    .title = "LC + BE 2 ms, all + 25% CUs", LV_LC, LV_BE, LEVERS_BE(2000),
                              GPUPRIO(lv_all)},
    {.id = "levers-8",        .title = "LC + BE 8 ms",                LV_LC, LV_BE, LEVERS_BE(8000),
                              HEAD("LC + wide 8 ms BE, native")},
    {.id = "levers-8-adm",    .title = "LC + BE 8 ms, admission",     LV_LC, LV_BE, LEVERS_BE(8000),
                              GPUPRIO(lv_admission)},
    {.id = "levers-8-hw",     .title = "LC + BE 8 ms, HW priority",   LV_LC, LV_BE, LEVERS_BE(8000),
                              GPUPRIO(lv_hw)},
    {.id = "levers-8-cu",     .title = "LC + BE 8 ms, 25% CUs",       LV_LC, LV_BE, LEVERS_BE(8000),
                              GPUPRIO(lv_reserve)},
    {.id = "levers-8-all",    .title = "LC + BE 8 ms, all + 25% CUs", LV_LC, LV_BE, LEVERS_BE(8000),
                              GPUPRIO(lv_all), HEAD("LC + wide 8 ms BE, gpuprio + 25% CUs")},
    /* The same next to 8 ms BE kernels, LC and BE in processes of their own: natively, Level 1
     * and Level 2 alone, hardware priorities alone, reserved CUs alone, and all. */
    {.id = "levers-8-2p",     .title = "LC + BE 8 ms, 2 processes",   LV_LC, LV_BE, LEVERS_BE(8000),
                              .split = true},
    {.id = "levers-8-2p-l1",  .title = "LC + BE 8 ms, 2 processes, Level 1",LV_LC, LV_BE, LEVERS_BE(8000),
                              LV_2P, GPUPRIO(lv2p_l1)},
    {.id = "levers-8-2p-l2",  .title = "LC + BE 8 ms, 2 processes, Level 2",LV_LC, LV_BE, LEVERS_BE(8000),
                              LV_2P, GPUPRIO(lv2p_l2)},
    {.id = "levers-8-2p-hw",  .title = "LC + BE 8 ms, 2 processes, HW priority",LV_LC, LV_BE, LEVERS_BE(8000),
                              LV_2P, GPUPRIO(lv2p_hw)},
    {.id = "levers-8-2p-cu",  .title = "LC + BE 8 ms, 2 processes, 25% CUs",LV_LC, LV_BE, LEVERS_BE(8000),
                              LV_2P, GPUPRIO(lv2p_reserve)},
    {.id = "levers-8-2p-all", .title = "LC + BE 8 ms, 2 processes, all + 25% CUs", LV_LC, LV_BE,
                              LEVERS_BE(8000), LV_2P, GPUPRIO(lv2p_all)},
};
/* clang-format on */
const size_t demo_nscenarios = sizeof demo_scenarios / sizeof demo_scenarios[0];

const char *const demo_table_titles[NTABLES] = {
    [TABLE_LC_BE] = "LC next to BE workers",
    [TABLE_GROUPS] = "Three priority groups: LC (high), LC2 (normal), BE (low)",
    [TABLE_PROCS] = "Across processes: each workload in its own process, one shared device",
    [TABLE_LEVERS] = "Hardware levers: BE kernels as wide as the device (8 CUs), 2 and 8 ms long",
};

const char *const demo_table_names[NTABLES] = {
    [TABLE_LC_BE] = "lc-be",
    [TABLE_GROUPS] = "groups",
    [TABLE_PROCS] = "procs",
    [TABLE_LEVERS] = "levers",
};

bool demo_row_shown(const options *o, size_t i)
{
    const scenario *sc = &demo_scenarios[i];
    if (!o->all)
        return sc->headline != NULL;
    return o->table < 0 || sc->table == (demo_table)o->table;
}

bool demo_row_selected(const options *o, size_t i)
{
    const scenario *sc = &demo_scenarios[i];
    if (demo_row_shown(o, i))
        return true;
    /* A baseline of a shown row runs too, so that its ratios can be worked out. */
    for (size_t j = 0; j < demo_nscenarios; j++) {
        const scenario *r = &demo_scenarios[j];
        if (!demo_row_shown(o, j))
            continue;
        if (((r->lc || r->lc2) && demo_baseline_row(r, false) == sc) ||
            (r->be_workers && demo_baseline_row(r, true) == sc))
            return true;
    }
    return false;
}

const scenario *demo_baseline_row(const scenario *sc, bool be)
{
    const char *id = be ? sc->be_baseline : sc->lc_baseline;
    return demo_find_scenario(id ? id : be ? BE_BASELINE : LC_BASELINE);
}

const scenario *demo_find_scenario(const char *id)
{
    for (size_t i = 0; i < demo_nscenarios; i++)
        if (strcmp(demo_scenarios[i].id, id) == 0)
            return &demo_scenarios[i];
    return NULL;
}
