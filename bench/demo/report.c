/*
 * report.c - gpuprio-demo's output: the header (what runs, the settings, the rows), the tables or
 * the CSV, and the notes after them, from the results the parent collected.
 *
 * Columns are data, like rows: each names its headings, the text tables it appears in and a
 * function that formats one cell from the row and its result, so the text tables and the CSV
 * are two layouts of the same cells (the CSV has every column; a cell that does not apply is "-"
 * in a table and empty in the CSV). Cells are formatted first, then laid out, because a column's
 * width is its widest cell.
 *
 * The ratio columns compare a row with a baseline row: LC's (and LC2's) P99 with the LC P99 of
 * the row's lc_baseline (LC_BASELINE unless the row names one), BE's kernels/s with those of its
 * be_baseline (BE_BASELINE). A ratio means something only if both ran the same work on the same
 * device, so it is "-" where the baseline ran other kernels for that workload (grid, BE kernel
 * length) or other simulator settings (sim_env); the notes list the rows that set any of these.
 * Every percentile is over the requests the host did not stall, and "-" for a client whose
 * requests it stalled too many of (demo_client_measured); the stalled ones are counted beside.
 *
 * The default run's headline table is a third layout of the same cells: its own few columns
 * (T_HEAD, not in the CSV) over the rows with a headline label, with a second line for LC2 in
 * the three-group rows (the cells then read LC2's statistics).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "demo.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prio_name(demo_prio p)
{
    switch (p) {
    case PRIO_GREATEST:
        return "greatest priority";
    case PRIO_MIDDLE:
        return "middle priority";
    case PRIO_LEAST:
        return "least priority";
    case PRIO_DEFAULT:
        break;
    }
    return "no priority";
}

/* ---- baselines ---- */

/* Whether two NULL-terminated lists (NULL: empty) have the same entries, in any order. */
static bool same_entries(const char *const *a, const char *const *b)
{
    size_t na = 0, nb = 0;
    while (a && a[na])
        na++;
    while (b && b[nb])
        nb++;
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++)
            found = strcmp(a[i], b[j]) == 0;
        if (!found)
            return false;
    }
    return true;
}

/* Whether the baseline ran the same work as the row for one workload, on the same device. */
static bool comparable(const scenario *sc, const scenario *base, bool be, const options *o)
{
    if (!same_entries(sc->sim_env, base->sim_env))
        return false;
    if (be)
        return demo_blocks(sc->be_blocks) == demo_blocks(base->be_blocks) &&
               demo_be_us(sc, o) == demo_be_us(base, o);
    return demo_blocks(sc->lc_blocks) == demo_blocks(base->lc_blocks);
}

/* The result a row's LC or BE ratios refer to: NULL if the baseline failed or does not compare. */
static const row_result *baseline_result(const scenario *sc, bool be, const options *o,
                                         const row_result *res, const bool *ok)
{
    const scenario *base = demo_baseline_row(sc, be);
    if (!base || !comparable(sc, base, be, o))
        return NULL;
    size_t i = (size_t)(base - demo_scenarios);
    return ok[i] ? &res[i] : NULL;
}

/* ---- the tables: columns are data; each formats one cell of a row ---- */

typedef struct cell_ctx {
    const scenario *sc;
    const row_result *r;       /* NULL: the row failed */
    const row_result *lc_base; /* the LC baseline's result, or NULL */
    const row_result *be_base; /* the BE baseline's result, or NULL */
    bool csv;
    bool lc2_line; /* headline table: the line of the row's LC2 client */
} cell_ctx;

typedef void (*cell_fn)(char *buf, size_t size, const cell_ctx *c);

typedef struct column {
    const char *title; /* text table heading */
    const char *key;   /* CSV heading; NULL: not in the CSV (the headline's own columns) */
    bool left;         /* left-aligned in the text table */
    unsigned tables;   /* the text tables it appears in (bits 1 << demo_table); CSV has all */
    cell_fn cell;
} column;

#define NA(buf, size, c) snprintf(buf, size, "%s", (c)->csv ? "" : "-")

/* The row's result for the LC client (lc2 false) or LC2 (lc2 true), or NULL if it has none. */
static const client_result *client_of(const cell_ctx *c, bool lc2)
{
    if (!c->r || !(lc2 ? c->sc->lc2 : c->sc->lc))
        return NULL;
    const client_result *cr = lc2 ? &c->r->lc2 : &c->r->lc;
    return cr->reqs > 0 ? cr : NULL;
}

static bool has_be(const cell_ctx *c)
{
    return c->r && c->sc->be_workers > 0 && c->r->window_ns > 0;
}

static double be_per_s(const row_result *r)
{
    return (double)r->be_kernels / ((double)r->window_ns / 1e9);
}

static void cell_name(char *buf, size_t size, const cell_ctx *c)
{
    snprintf(buf, size, "%s", c->csv ? c->sc->id : c->sc->title);
}

static void cell_status(char *buf, size_t size, const cell_ctx *c)
{
    snprintf(buf, size, "%s", c->r ? "ok" : "FAILED");
}

enum client_stat {
    STAT_P50,
    STAT_P99,
    STAT_MAX,
    STAT_REQS,
    STAT_P99_RATIO,
    STAT_STALLED,
    STAT_P99_ALL
};

/* One statistic of a client: milliseconds, a count, or its P99 over its LC baseline's. The
 * percentiles are over the requests the host did not stall: "-" where it stalled too many. */
static void cell_client(char *buf, size_t size, const cell_ctx *c, bool lc2, enum client_stat st)
{
    const client_result *cr = client_of(c, lc2);
    bool kept_only = st == STAT_P50 || st == STAT_P99 || st == STAT_MAX || st == STAT_P99_RATIO;
    if (!cr || (kept_only && !demo_client_measured(cr)) ||
        (st == STAT_P99_RATIO && (!c->lc_base || !demo_client_measured(&c->lc_base->lc)))) {
        NA(buf, size, c);
        return;
    }
    switch (st) {
    case STAT_STALLED:
        if (c->csv)
            snprintf(buf, size, "%" PRIu64, cr->stalled);
        else
            snprintf(buf, size, "%" PRIu64 "/%" PRIu64, cr->stalled, cr->reqs);
        break;
    case STAT_P99_ALL:
        snprintf(buf, size, "%.3f", (double)cr->p99_all_ns / 1e6);
        break;
    case STAT_P50:
        snprintf(buf, size, "%.3f", (double)cr->p50_ns / 1e6);
        break;
    case STAT_P99:
        snprintf(buf, size, "%.3f", (double)cr->p99_ns / 1e6);
        break;
    case STAT_MAX:
        snprintf(buf, size, "%.3f", (double)cr->max_ns / 1e6);
        break;
    case STAT_REQS:
        snprintf(buf, size, "%" PRIu64, cr->reqs);
        break;
    case STAT_P99_RATIO:
        snprintf(buf, size, c->csv ? "%.3f" : "%.1fx",
                 (double)cr->p99_ns / (double)c->lc_base->lc.p99_ns);
        break;
    }
}

#define CLIENT_CELL(name, lc2, st)                                                                 \
    static void name(char *buf, size_t size, const cell_ctx *c)                                    \
    {                                                                                              \
        cell_client(buf, size, c, lc2, st);                                                        \
    }
CLIENT_CELL(cell_lc_p50, false, STAT_P50)
CLIENT_CELL(cell_lc_p99, false, STAT_P99)
CLIENT_CELL(cell_lc_max, false, STAT_MAX)
CLIENT_CELL(cell_lc_reqs, false, STAT_REQS)
CLIENT_CELL(cell_lc_ratio, false, STAT_P99_RATIO)
CLIENT_CELL(cell_lc_stalled, false, STAT_STALLED)
CLIENT_CELL(cell_lc_p99_all, false, STAT_P99_ALL)
CLIENT_CELL(cell_lc2_p50, true, STAT_P50)
CLIENT_CELL(cell_lc2_p99, true, STAT_P99)
CLIENT_CELL(cell_lc2_ratio, true, STAT_P99_RATIO)
CLIENT_CELL(cell_lc2_stalled, true, STAT_STALLED)

static void cell_be_rate(char *buf, size_t size, const cell_ctx *c)
{
    if (!has_be(c))
        NA(buf, size, c);
    else
        snprintf(buf, size, "%.1f", be_per_s(c->r));
}

static void cell_be_busy(char *buf, size_t size, const cell_ctx *c)
{
    if (!has_be(c))
        NA(buf, size, c);
    else {
        double f = (double)c->r->be_busy_ns /
                   ((double)c->r->window_ns * (double)(c->r->slots ? c->r->slots : 1));
        snprintf(buf, size, c->csv ? "%.4f" : "%.1f%%", c->csv ? f : 100.0 * f);
    }
}

static void cell_be_ratio(char *buf, size_t size, const cell_ctx *c)
{
    if (!has_be(c) || !c->be_base || c->be_base->be_kernels == 0)
        NA(buf, size, c);
    else
        snprintf(buf, size, "%.2f", be_per_s(c->r) / be_per_s(c->be_base));
}

/* A short name for a stream priority, for the headline's client lines. */
static const char *prio_word(demo_prio p)
{
    return p == PRIO_GREATEST ? "high" : p == PRIO_MIDDLE ? "normal" : p == PRIO_LEAST ? "low" : "";
}

/* Headline: the row's label; with LC2, the LC line ends in "LC (high)" and LC2's line, under it,
 * has only "LC2 (normal)". */
static void cell_head_name(char *buf, size_t size, const cell_ctx *c)
{
    const scenario *sc = c->sc;
    const char *label = sc->headline ? sc->headline : sc->title;
    if (!sc->lc2)
        snprintf(buf, size, "%s", label);
    else if (!c->lc2_line)
        snprintf(buf, size, "%s: LC (%s)", label, prio_word(sc->lc_prio));
    else
        snprintf(buf, size, "%*sLC2 (%s)", (int)strlen(label) + 2, "", prio_word(sc->lc2_prio));
}

/* Headline: the client of the line (LC, or LC2 on its line); FAILED where the row failed. */
static void cell_head_client(char *buf, size_t size, const cell_ctx *c, enum client_stat st)
{
    if (!c->r)
        snprintf(buf, size, "%s", st == STAT_P50 ? "FAILED" : "");
    else
        cell_client(buf, size, c, c->lc2_line, st);
}

static void cell_head_p50(char *buf, size_t size, const cell_ctx *c)
{
    cell_head_client(buf, size, c, STAT_P50);
}

static void cell_head_p99(char *buf, size_t size, const cell_ctx *c)
{
    cell_head_client(buf, size, c, STAT_P99);
}

static void cell_head_ratio(char *buf, size_t size, const cell_ctx *c)
{
    cell_head_client(buf, size, c, STAT_P99_RATIO);
}

static void cell_head_stalled(char *buf, size_t size, const cell_ctx *c)
{
    cell_head_client(buf, size, c, STAT_STALLED);
}

/* Headline: BE's throughput as a share of its baseline's ("BE vs alone" as a percentage); blank
 * on LC2's line, which has no BE of its own. */
static void cell_head_load(char *buf, size_t size, const cell_ctx *c)
{
    if (c->lc2_line)
        snprintf(buf, size, "%s", "");
    else if (!has_be(c) || !c->be_base || c->be_base->be_kernels == 0)
        NA(buf, size, c);
    else
        snprintf(buf, size, "%.0f%%", 100.0 * be_per_s(c->r) / be_per_s(c->be_base));
}

#define T_LC_BE (1u << TABLE_LC_BE)
#define T_GROUPS (1u << TABLE_GROUPS)
#define T_PROCS (1u << TABLE_PROCS)
#define T_LEVERS (1u << TABLE_LEVERS)
#define T_ALL (T_LC_BE | T_GROUPS | T_PROCS | T_LEVERS)
#define T_HEAD (1u << NTABLES) /* the default run's headline table */

static const column columns[] = {
    {"Scenario", "scenario", true, T_ALL, cell_name},
    {"Status", "status", true, T_ALL, cell_status},
    {"LC P50 ms", "lc_p50_ms", false, T_ALL, cell_lc_p50},
    {"LC P99 ms", "lc_p99_ms", false, T_ALL, cell_lc_p99},
    {"LC max ms", "lc_max_ms", false, T_LC_BE | T_LEVERS, cell_lc_max},
    {"LC reqs", "lc_requests", false, T_LC_BE, cell_lc_reqs},
    {"LC stalled", "lc_stalled", false, T_ALL, cell_lc_stalled},
    {"P99 w/ stalled", "lc_p99_all_ms", false, T_LC_BE | T_LEVERS, cell_lc_p99_all},
    {"P99 vs alone", "lc_p99_vs_alone", false, T_ALL, cell_lc_ratio},
    {"LC2 P50 ms", "lc2_p50_ms", false, T_GROUPS | T_PROCS, cell_lc2_p50},
    {"LC2 P99 ms", "lc2_p99_ms", false, T_GROUPS | T_PROCS, cell_lc2_p99},
    {"LC2 vs alone", "lc2_p99_vs_alone", false, T_GROUPS | T_PROCS, cell_lc2_ratio},
    {"LC2 stalled", "lc2_stalled", false, T_GROUPS | T_PROCS, cell_lc2_stalled},
    {"BE kern/s", "be_kernels_per_s", false, T_ALL, cell_be_rate},
    /* Not in the levers table: its BE kernels take several slots, which busy does not count. */
    {"BE busy", "be_busy_fraction", false, T_LC_BE | T_GROUPS | T_PROCS, cell_be_busy},
    {"BE vs alone", "be_vs_alone", false, T_ALL, cell_be_ratio},
    {"Row", NULL, true, T_HEAD, cell_head_name},
    {"P50 ms", NULL, false, T_HEAD, cell_head_p50},
    {"P99 ms", NULL, false, T_HEAD, cell_head_p99},
    {"P99/alone", NULL, false, T_HEAD, cell_head_ratio},
    {"load", NULL, false, T_HEAD, cell_head_load},
    {"stalled", NULL, false, T_HEAD, cell_head_stalled},
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])
#define CELL_LEN 48

typedef char row_cells[NCOLUMNS][CELL_LEN]; /* one row's cells, formatted */

/* Prints lines[0..n) with the columns of `bit` (T_*) as an aligned text table, under a heading
 * and a rule. Columns are separated by two spaces; the first is not indented. */
static void print_lines(FILE *f, const row_cells *lines, size_t n, unsigned bit)
{
    int width[NCOLUMNS] = {0};
    int total = 0;
    bool first = true;
    for (size_t j = 0; j < NCOLUMNS; j++) {
        if (!(columns[j].tables & bit))
            continue;
        width[j] = (int)strlen(columns[j].title);
        for (size_t i = 0; i < n; i++)
            if ((int)strlen(lines[i][j]) > width[j])
                width[j] = (int)strlen(lines[i][j]);
        total += width[j] + (first ? 0 : 2);
        first = false;
    }
    for (size_t i = 0; i <= n; i++) {
        /* A line is laid out first, so that a blank last cell (LC2's load) leaves no trailing
         * spaces. */
        char line[NCOLUMNS * (CELL_LEN + 2) + 1];
        size_t len = 0;
        first = true;
        for (size_t j = 0; j < NCOLUMNS; j++)
            if (columns[j].tables & bit) {
                len += (size_t)snprintf(line + len, sizeof line - len, "%s%*s", first ? "" : "  ",
                                        columns[j].left ? -width[j] : width[j],
                                        i == 0 ? columns[j].title : lines[i - 1][j]);
                first = false;
            }
        while (len > 0 && line[len - 1] == ' ')
            len--;
        fprintf(f, "%.*s\n", (int)len, line);
        for (int k = 0; i == 0 && k <= total; k++)
            fputc(k < total ? '-' : '\n', f);
    }
}

/* Prints the rows of `table` with its columns as an aligned text table, under its title. */
static void print_table(FILE *f, const row_cells *cells, demo_table table)
{
    row_cells *lines = calloc(demo_nscenarios, sizeof *lines);
    if (!lines) {
        fprintf(stderr, "gpuprio-demo: out of memory\n");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < demo_nscenarios; i++)
        if (demo_scenarios[i].table == table)
            memcpy(lines[n++], cells[i], sizeof *lines);
    fprintf(f, "%s\n", demo_table_titles[table]);
    print_lines(f, lines, n, 1u << table);
    free(lines);
}

/* Prints every row with every column as CSV (a cell that does not apply is empty). */
static void print_csv(FILE *f, const options *o, const row_cells *cells)
{
    for (size_t j = 0; j < NCOLUMNS; j++)
        if (columns[j].key)
            fprintf(f, "%s%s", j ? "," : "", columns[j].key);
    fprintf(f, "\n");
    for (size_t i = 0; i < demo_nscenarios; i++) {
        if (!demo_row_selected(o, i))
            continue;
        for (size_t j = 0; j < NCOLUMNS; j++)
            if (columns[j].key)
                fprintf(f, "%s%s", j ? "," : "", cells[i][j]);
        fprintf(f, "\n");
    }
}

/* Formats every cell of row i (of its LC2 client's line: lc2_line) into out. */
static void fill_cells(row_cells out, size_t i, const options *o, const row_result *res,
                       const bool *ok, bool lc2_line)
{
    const scenario *sc = &demo_scenarios[i];
    cell_ctx c = {sc,
                  ok[i] ? &res[i] : NULL,
                  baseline_result(sc, false, o, res, ok),
                  baseline_result(sc, true, o, res, ok),
                  o->csv,
                  lc2_line};
    for (size_t j = 0; j < NCOLUMNS; j++)
        columns[j].cell(out[j], CELL_LEN, &c);
}

void demo_print_tables(FILE *f, const options *o, const row_result *res, const bool *ok)
{
    row_cells *cells = calloc(demo_nscenarios, sizeof *cells);
    if (!cells) {
        fprintf(stderr, "gpuprio-demo: out of memory\n");
        return;
    }
    for (size_t i = 0; i < demo_nscenarios; i++)
        fill_cells(cells[i], i, o, res, ok, false);
    if (o->csv) {
        print_csv(f, o, cells);
    } else {
        for (int t = 0, printed = 0; t < NTABLES; t++) {
            if (o->table >= 0 && t != o->table)
                continue;
            if (printed++)
                fprintf(f, "\n");
            print_table(f, cells, (demo_table)t);
        }
    }
    free(cells);
}

/* ---- the header ---- */

/* Prints " NAME=value", " NAME=dflt (default)" or, without a default, " NAME unset". */
static void print_env_setting(FILE *f, const char *name, const char *dflt)
{
    const char *v = getenv(name);
    if (v)
        fprintf(f, " %s=%s", name, v);
    else if (dflt)
        fprintf(f, " %s=%s (default)", name, dflt);
    else
        fprintf(f, " %s unset", name);
}

/* Prints a row's env or sim_env entries, `lead` before the first: "NAME=VALUE", "NAME unset". */
static void print_entries(FILE *f, const char *lead, const char *const *list)
{
    for (size_t j = 0; list && list[j]; j++)
        fprintf(f, "%s%s%s", j ? " " : lead, list[j], strchr(list[j], '=') ? "" : " unset");
}

/* The widest id among the rows. */
static int id_width(void)
{
    int w = 0;
    for (size_t i = 0; i < demo_nscenarios; i++)
        if ((int)strlen(demo_scenarios[i].id) > w)
            w = (int)strlen(demo_scenarios[i].id);
    return w;
}

void demo_print_header(FILE *f, const options *o, const char *argv0)
{
    double period_ms = 1e3 / o->rate;
    fprintf(f, "gpuprio-demo: latency-critical (LC) requests next to saturating best-effort (BE) "
               "kernels,\non the simulated HIP device (tests/sim, no GPU), natively and under "
               "gpuprio.\n\n");
    fprintf(f, "What runs (same workloads in every row; a row runs only the ones it names):\n");
    fprintf(f,
            "  LC: 1 thread, 1 stream. Open-loop: request i is due at t0 + i x %.3f ms (%g/s);\n"
            "      it launches %d kernels of %g us back to back, then hipStreamSynchronize.\n"
            "      Latency = completion - due time (lateness counts).\n",
            period_ms, o->rate, o->kernels, o->lc_us);
    fprintf(f,
            "  LC2 (three-group rows): a second LC client on its own thread and stream, the same\n"
            "      requests, each due %.3f ms after LC's (while LC's is still running).\n",
            (double)LC2_OFFSET_NS / 1e6);
    fprintf(f,
            "  BE: per worker 1 thread, 1 stream, kernels of %g us, at most %d in flight (event\n"
            "      ring); starts %llu ms before t0, stops when the window ends and LC is done.\n",
            o->be_us, BE_INFLIGHT, BE_LEAD_NS / 1000000);
    fprintf(f,
            "  Streams are non-blocking, created LC, LC2, BE 1, BE 2, before any thread starts.\n"
            "  Each asks for a stream priority: LC the device's greatest, LC2 the middle, BE the\n"
            "  least (gpuprio maps HIP's -1, 0, 1 onto high 10, normal 0, low -10). In the levers\n"
            "  table streams are blocking and ask for none: gpuprio gives LC high and BE low\n"
            "  (GPUPRIO_STREAM_PRIORITIES=high,low), and each row turns some levers on.\n"
            "  Each row runs %d times (rounds: the rows take turns), each time measuring the\n"
            "  window [t0, t0 + %g s); its figures pool the rounds.\n",
            o->rounds, o->seconds);
    fprintf(f,
            "  Host stalls: the simulated device is host threads, so a busy host slows requests\n"
            "      too, in any row. A request counts as stalled when, while it was under way, the\n"
            "      row's threads (its clients' and the simulator's, in all its processes; not\n"
            "      gpuprio's, nor BE's submitting ones) waited for a CPU, or simulated kernels\n"
            "      ended late, for over %.1f ms in all, or when the request before it was stalled\n"
            "      and held it up. Percentiles are over the other requests; the tables count the\n"
            "      stalled ones and give the P99 with them.\n",
            (double)DEMO_STALL_NS / 1e6);
    fprintf(
        f,
        "  Cross-process rows: the same workloads, each in its own process (--role), on one\n"
        "      simulated device they share (HIPSIM_SHARED, a name unique to the row); gpuprio's\n"
        "      board in a temporary GPUPRIO_BOARD_DIR. One t0 for all, given once all are\n"
        "      ready; BE processes run until the client processes have exited.\n");
    fprintf(f, "Simulator:");
    print_env_setting(f, "HIPSIM_COMPUTE_SLOTS", "1");
    print_env_setting(f, "HIPSIM_HW_QUEUES", "4");
    print_env_setting(f, "HIPSIM_DEVICES", "1");
    fprintf(f, "\n          ");
    print_env_setting(f, "HIPSIM_SHARED", NULL);
    print_env_setting(f, "HIPSIM_TRACE", NULL);
    print_env_setting(f, "HIPSIM_FAULT", NULL);
    fprintf(f,
            "\n  Compute slots go to the most urgent waiting hardware queue first, then in ticket\n"
            "  order; a running kernel is never preempted (docs/simulator.md).\n"
            "  Rows run with timer slack 1 ns (prctl), so simulated durations overshoot less.\n");
    fprintf(f,
            "gpuprio rows: LD_PRELOAD=%s\n"
            "  (HPF: while a stream is active, the threads of lower-priority streams are held "
            "before\n  they submit. By default a lower-priority stream keeps at most 500 us of "
            "GPU time in\n  flight, learned per kernel (GPUPRIO_WINDOW_US); W = GPUPRIO_WINDOW "
            "with the budget off:\n  commands a lower-priority stream may have in flight.)\n",
            GPUPRIO_SHIM_PATH);
    if (getenv("HIPSIM_FAULT"))
        fprintf(f, "  WARNING: HIPSIM_FAULT is set: the simulator breaks a rule on purpose.\n");
    if (getenv("LD_PRELOAD"))
        fprintf(f,
                "  NOTE: LD_PRELOAD=%s is inherited by the native rows (gpuprio rows replace it);\n"
                "  a native row fails if it finds gpuprio loaded.\n",
                getenv("LD_PRELOAD"));
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "GPUPRIO_", 8) == 0)
            fprintf(f, "  NOTE: %s is inherited by the gpuprio rows that do not set or unset it.\n",
                    *e);
    fprintf(f,
            "Rows (each in its own process: %s --scenario ID [options];\n"
            "      a cross-process row in one process per workload, each with --role lc|lc2|be):\n",
            argv0);
    int id_w = id_width(), title_w = 0;
    for (size_t i = 0; i < demo_nscenarios; i++)
        if ((int)strlen(demo_scenarios[i].title) > title_w)
            title_w = (int)strlen(demo_scenarios[i].title);
    for (size_t i = 0; i < demo_nscenarios; i++) {
        const scenario *sc = &demo_scenarios[i];
        if (!demo_row_selected(o, i))
            continue;
        fprintf(f, "  %-*s  %-*s  runs:", id_w, sc->id, title_w, sc->title);
        if (sc->lc)
            fprintf(f, " LC (%s)", prio_name(sc->lc_prio));
        if (sc->lc2)
            fprintf(f, " + LC2 (%s)", prio_name(sc->lc2_prio));
        if (sc->be_workers)
            fprintf(f, "%s %d x BE (%s)", sc->lc ? " +" : "", sc->be_workers,
                    prio_name(sc->be_prio));
        if (sc->lc && sc->be_workers)
            fprintf(f, " concurrently");
        if (sc->split)
            fprintf(f, ", %d processes", (int)sc->lc + (int)sc->lc2 + sc->be_workers);
        if (sc->lc_blocks)
            fprintf(f, "; LC kernels of %u blocks", sc->lc_blocks);
        if (sc->be_us)
            fprintf(f, "; BE kernels of %u us", sc->be_us);
        if (sc->be_blocks)
            fprintf(f, "%s %u blocks", sc->be_us ? "," : "; BE kernels of", sc->be_blocks);
        if (sc->gpuprio)
            fprintf(f, "; gpuprio");
        print_entries(f, ": ", sc->env);
        for (int role = 0; role < NROLES; role++)
            if (sc->role_env[role]) {
                fprintf(f, "; %s process", demo_role_names[role]);
                print_entries(f, ": ", sc->role_env[role]);
            }
        if (sc->sim_env)
            fprintf(f, "; simulator");
        print_entries(f, ": ", sc->sim_env);
        fprintf(f, "\n");
    }
    fprintf(f, "Options: --seconds %g --rate %g --kernels %d --lc-us %g --be-us %g\n\n", o->seconds,
            o->rate, o->kernels, o->lc_us, o->be_us);
}

/* ---- the notes ---- */

/* Says of each client that started a request the host did not stall more than a period after
 * it was due that it did not keep up: its backlog, and its percentiles, then grow with
 * --seconds. brief: one line each (the headline's), and only for the rows it shows. */
static void print_backlog_notes(FILE *f, const options *o, const row_result *res, const bool *ok,
                                bool brief)
{
    uint64_t period_ns = (uint64_t)(1e9 / o->rate);
    for (size_t i = 0; i < demo_nscenarios; i++) {
        const scenario *sc = &demo_scenarios[i];
        const client_result *cl[2] = {sc->lc ? &res[i].lc : NULL, sc->lc2 ? &res[i].lc2 : NULL};
        for (int k = 0; k < 2; k++) {
            if (!ok[i] || !cl[k] || cl[k]->max_late_ns <= period_ns)
                continue;
            if (brief && demo_row_shown(o, i))
                fprintf(f, "note: in \"%s\" an %s request started %.1f ms late: %s fell behind\n",
                        sc->headline, k ? "LC2" : "LC", (double)cl[k]->max_late_ns / 1e6,
                        k ? "LC2" : "LC");
            else if (!brief)
                fprintf(f,
                        "NOTE: in \"%s\" an %s request started %.1f ms after it was due: %s does\n"
                        "  not keep up with %g requests/s there, so its backlog (and its\n"
                        "  percentiles) grow with --seconds.\n",
                        sc->title, k ? "LC2" : "LC", (double)cl[k]->max_late_ns / 1e6,
                        k ? "LC2" : "LC", o->rate);
        }
    }
}

/* One note on the clients (of the shown rows: brief) whose percentiles are not given because
 * the host stalled too many of their requests. */
static void print_stall_note(FILE *f, const options *o, const row_result *res, const bool *ok,
                             bool brief)
{
    size_t n = 0;
    uint64_t worst = 0;
    for (size_t i = 0; i < demo_nscenarios; i++) {
        const scenario *sc = &demo_scenarios[i];
        const client_result *cl[2] = {sc->lc ? &res[i].lc : NULL, sc->lc2 ? &res[i].lc2 : NULL};
        for (int k = 0; k < 2 && ok[i] && (!brief || demo_row_shown(o, i)); k++) {
            if (!cl[k] || cl[k]->reqs == 0 || demo_client_measured(cl[k]))
                continue;
            uint64_t pct = 100 * cl[k]->stalled / cl[k]->reqs;
            worst = pct > worst ? pct : worst;
            n++;
        }
    }
    if (n == 0)
        return;
    if (brief)
        fprintf(f,
                "note: \"-\": the host stalled over %d%% of that client's requests (up to %" PRIu64
                "%%): this machine\n  is too busy to measure it; run again on a quieter one\n",
                DEMO_STALLED_MAX_PCT, worst);
    else
        fprintf(f,
                "NOTE: the host stalled over %d%% of the requests of %zu clients (up to %" PRIu64
                "%%), whose\n  percentiles are \"-\": leaving that many out would favour the "
                "shorter requests (a\n  longer one is more likely to be under way when the host "
                "stalls). This machine is too\n  busy to measure them; run again on a quieter "
                "one.\n",
                DEMO_STALLED_MAX_PCT, n, worst);
}

/* The hardware queue an LC client (LC or LC2) shares with another stream in hwq
 * ("LC:1,LC2:2,BE:1"), or -1 when none does. */
static int lc_shared_hwq(const char *hwq)
{
    char who[MAX_ITEMS][8];
    int q[MAX_ITEMS];
    int n = demo_parse_items(hwq, who, q, MAX_ITEMS);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && q[i] == q[j] && strncmp(who[i], "LC", 2) == 0)
                return q[i];
    return -1;
}

/* Whether the row sets anything that the notes' account of the ratios and of BE busy does not
 * cover: its own baselines, kernels or simulator settings. */
static bool has_own_terms(const scenario *sc)
{
    return sc->lc_baseline || sc->be_baseline || sc->sim_env || sc->lc_blocks || sc->be_blocks ||
           sc->be_us;
}

/* One ratio's terms for a row with its own: the baseline's title, or why the ratio is "-". */
static void print_ratio_terms(FILE *f, const char *what, const scenario *sc, bool be,
                              const options *o)
{
    const scenario *base = demo_baseline_row(sc, be);
    if (!base)
        fprintf(f, "  %s - (no baseline)", what);
    else if (!comparable(sc, base, be, o))
        fprintf(f, "  %s - (\"%s\" differs)", what, base->title);
    else
        fprintf(f, "  %s \"%s\"", what, base->title);
}

void demo_print_notes(FILE *f, const options *o, const row_result *res, const bool *ok)
{
    fprintf(f,
            "\nP99 vs alone = LC P99 / P99 of \"%s\"; LC2 vs alone = LC2 P99 / that same P99.\n"
            "BE busy = BE kernels completed in the window x %g us / (window x compute slots).\n"
            "BE vs alone = BE kernels/s / that of \"%s\" (one worker).\n",
            demo_find_scenario(LC_BASELINE)->title, o->be_us,
            demo_find_scenario(BE_BASELINE)->title);
    int id_w = id_width();
    bool own_terms = false;
    for (size_t i = 0; i < demo_nscenarios; i++) {
        const scenario *sc = &demo_scenarios[i];
        if (!has_own_terms(sc) || !demo_row_selected(o, i))
            continue;
        if (!own_terms)
            fprintf(f,
                    "Rows with their own baselines, kernels or simulator settings (a ratio is -\n"
                    "where its baseline ran other kernels or simulator settings; BE busy counts\n"
                    "the row's BE kernel length):\n");
        own_terms = true;
        fprintf(f, "  %-*s", id_w, sc->id);
        if (sc->lc)
            print_ratio_terms(f, sc->lc2 ? "P99, LC2 vs" : "P99 vs", sc, false, o);
        if (sc->be_workers) {
            print_ratio_terms(f, "BE vs", sc, true, o);
            fprintf(f, "  BE kernels of %g us", demo_be_us(sc, o));
        }
        fprintf(f, "\n");
    }
    fprintf(f, "Per row: hardware queue of each stream (in cross-process rows, each in its own\n"
               "process's queues); in gpuprio rows, each stream's gpuprio priority, and how often\n"
               "gpuprio suspended the BE streams (whole run, all of them):\n");
    for (size_t i = 0; i < demo_nscenarios; i++) {
        const scenario *sc = &demo_scenarios[i];
        const row_result *r = &res[i];
        if (!demo_row_selected(o, i))
            continue;
        fprintf(f, "  %-*s  %s", id_w, sc->id, ok[i] ? r->hwq : "FAILED");
        if (ok[i] && sc->gpuprio) {
            fprintf(f, "  priorities %s", r->prio);
            if (sc->be_workers)
                fprintf(f, "  BE suspended %" PRIu64 " times", r->be_suspensions);
        }
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < demo_nscenarios; i++)
        if (ok[i] && !demo_scenarios[i].split && lc_shared_hwq(res[i].hwq) >= 0)
            fprintf(
                f,
                "NOTE: in \"%s\" an LC client shares hardware queue %d with another stream,\n"
                "  so it also waits for that stream's queued kernels (raise HIPSIM_HW_QUEUES).\n",
                demo_scenarios[i].title, lc_shared_hwq(res[i].hwq));
    print_backlog_notes(f, o, res, ok, false);
    print_stall_note(f, o, res, ok, false);
}

/* ---- the default run: the brief header and the headline table ---- */

void demo_print_brief_header(FILE *f, const options *o)
{
    size_t rows = 0;
    for (size_t i = 0; i < demo_nscenarios; i++)
        rows += demo_row_selected(o, i);
    fprintf(
        f,
        "gpuprio-demo: an urgent client (LC: %g requests/s, each %d kernels of %g us) next to\n"
        "best-effort load (BE: kernels of %g us, always queued) on a simulated GPU, natively and\n"
        "under gpuprio. 3 groups: LC high, LC2 normal, BE low priority. Wide 8 ms BE: on 8 CUs,\n"
        "BE kernels as wide. %zu rows, each run %d times for %g s, the rows taking turns\n"
        "(--all: every row; --help: how to read this)\n",
        o->rate, o->kernels, o->lc_us, o->be_us, rows, o->rounds, o->seconds);
}

void demo_print_headline(FILE *f, const options *o, const row_result *res, const bool *ok)
{
    row_cells *lines = calloc(2 * demo_nscenarios, sizeof *lines);
    if (!lines) {
        fprintf(stderr, "gpuprio-demo: out of memory\n");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < demo_nscenarios; i++) {
        if (!demo_row_shown(o, i))
            continue;
        fill_cells(lines[n++], i, o, res, ok, false);
        if (demo_scenarios[i].lc2)
            fill_cells(lines[n++], i, o, res, ok, true);
    }
    fprintf(f, "\n");
    print_lines(f, lines, n, T_HEAD);
    free(lines);
    fprintf(f,
            "P50, P99: LC request latency; P99/alone: over LC alone's; load: BE throughput, %% of "
            "BE alone\nstalled: LC requests the host held up (busy CPUs, not the device), left "
            "out of P50 and P99\n");
    print_backlog_notes(f, o, res, ok, true);
    print_stall_note(f, o, res, ok, true);
}
