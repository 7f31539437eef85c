/*
 * main.c - gpuprio-demo's command line: runs the headline rows and prints their short table and
 * draws the picture (default), every row and the full tables (--all), or, with --scenario ID,
 * one row in this process and its result line (demo.h has the overview, bench/README.md the
 * walk-through).
 *
 * The two modes are one program so that the parent can re-execute itself for each row
 * (/proc/self/exe, rows.c) with the very options it was given: the child parses the same
 * command line, plus --scenario and, in a cross-process row, --role. The scenario table is
 * checked before anything runs, since it is edited by hand and a mistake in it (an unknown
 * baseline id) would otherwise only show as a "-" in the tables.
 */
#include "demo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

/* How to read the default run's table and the picture: --help only. */
static void print_reading(FILE *f)
{
    fprintf(
        f,
        "\n"
        "Shows, on a simulated GPU (no GPU needed), what best-effort work does to an urgent\n"
        "client's latency when they share the device, natively and under gpuprio.\n"
        "\n"
        "By default it runs the headline rows, each 3 times for 1 s, the rows taking turns\n"
        "(about 40 s), and prints one short table:\n"
        "  LC alone      the urgent client (LC) by itself: the latency the others compare with\n"
        "  LC + BE       LC next to saturating best-effort work (BE): LC's stream has the\n"
        "                greatest priority, BE's the least\n"
        "  native        without gpuprio: the device prefers LC's queue but never preempts the\n"
        "                BE kernel that runs, and BE's queued kernels run between LC's\n"
        "  gpuprio       the same program, unchanged, with gpuprio preloaded (LD_PRELOAD of\n"
        "                libgpuprio-hip.so, its default settings): BE is held back while LC works\n"
        "  2 processes   LC and BE each in a process of its own on one device (gpuprio's\n"
        "                processes coordinate through its board)\n"
        "  3 groups      LC (high), a second client LC2 (normal) and BE (low) in one process;\n"
        "                two lines, LC's then LC2's (load on LC's)\n"
        "  wide 8 ms BE  8 CUs, BE kernels as wide as the device and 8 ms long: the hardware\n"
        "                lever that matters most. Neither holding BE back nor stream priorities\n"
        "                shorten the BE kernel LC finds running; reserving CUs for LC does\n"
        "                (GPUPRIO_CU_RESERVE=25%%, with gpuprio's defaults). Its ratios refer to\n"
        "                \"LC alone, 8 CUs\" (--all: each lever alone, and across processes).\n"
        "Columns:\n"
        "  P50, P99      LC's request latency in ms, from when a request was due (open loop) to\n"
        "                its last kernel's completion: half of the requests (P50), 99 in 100\n"
        "                (P99) took at most that\n"
        "  P99/alone     that P99 over LC alone's P99 on the same device: 1.0x is no slowdown\n"
        "  load          BE's throughput (kernels completed per second) as a share of BE's\n"
        "                alone: what the best-effort work kept; 100%% costs it nothing\n"
        "  stalled       LC's requests that the host held up, of all: while one was under way\n"
        "                the row's threads waited for a CPU, or simulated kernels ended late,\n"
        "                for over 0.5 ms in all (the simulated GPU is host threads). They are\n"
        "                left out of P50 and P99, which are the device's doing; --all gives the\n"
        "                P99 with them\n"
        "The picture (SVG; default %s):\n"
        "in LC alone and the LC + BE rows, native and gpuprio, in one process and two, the\n"
        "fraction of LC's requests (y) done within a latency (x, log scale). Further left is\n"
        "faster; a curve that reaches the top late has a long tail. Grey: alone, red: native,\n"
        "blue: gpuprio, dashed: 2 processes; dotted lines at P50 and P99.\n"
        "On a busy machine most requests are stalled and a note says so: the figures then rest\n"
        "on fewer requests, and lean to the shorter ones; run again on a quieter machine.\n",
        GPUPRIO_DEMO_SVG);
}

static void usage(FILE *f, const char *argv0)
{
    fprintf(
        f,
        "usage: %s [--all] [--svg PATH | --no-svg] [--seconds S] [--rounds N] [--rate R]\n"
        "          [--kernels K] [--lc-us US] [--be-us US] [--csv] [--table T]\n"
        "       %s --scenario ID [--role R] [same options]   (run one row, print its result)\n"
        "  --all         run every row (about 2.5 min) and print the full description, the four\n"
        "                tables and the notes (bench/README.md)\n"
        "  --svg PATH    write the picture to PATH (the default run writes it to\n"
        "                %s; --all only with --svg)\n"
        "  --no-svg      write no picture\n"
        "  --seconds S   measured window of each row, each time it runs (default 1)\n"
        "  --rounds N    times each row runs, the rows taking turns; its figures pool them\n"
        "                (default 3, at most %d)\n"
        "  --rate R      LC (and LC2) requests per second, open-loop (default 100)\n"
        "  --kernels K   kernels per LC request (default 3)\n"
        "  --lc-us US    simulated duration of an LC kernel in microseconds (default 250)\n"
        "  --be-us US    simulated duration of a BE kernel in microseconds (default 1000)\n"
        "  --csv         print the tables as one CSV on stdout, every row and column (the\n"
        "                description goes to stderr); implies --all\n"
        "  --table T     run only table T (lc-be, groups, procs or levers) and the rows its\n"
        "                ratios refer to; implies --all\n"
        "  --role R      with --scenario of a cross-process row (the parent does this): run\n"
        "                only workload R (lc, lc2 or be), print \"ready\", then read t0\n"
        "                (CLOCK_MONOTONIC ns) on stdin; be runs until stdin closes. Needs\n"
        "                HIPSIM_SHARED (and, for gpuprio rows, one GPUPRIO_BOARD_DIR for all).\n"
        "  --row-fd N    with --role (the parent does this): the page the row's processes\n"
        "                share, to see each other's host stalls\n"
        "rows:",
        argv0, argv0, GPUPRIO_DEMO_SVG, DEMO_MAX_ROUNDS);
    int col = 5;
    for (size_t i = 0; i < demo_nscenarios; i++) {
        if (col + 1 + (int)strlen(demo_scenarios[i].id) > 96) {
            fprintf(f, "\n     ");
            col = 5;
        }
        col += fprintf(f, " %s", demo_scenarios[i].id);
    }
    fprintf(f, "\n");
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

/* Exits with status 2 on a bad command line. */
static void parse_options(int argc, char **argv, options *o)
{
    /* Defaults keep LC below saturation in every row. With one slot and n BE workers, a request
     * takes about r + (n-1) be + (K-1) n be + K lc (r: rest of the BE kernel running when it
     * arrives) plus the simulator's overhead per kernel: about 6.5-7 ms for n = 2 here, under the
     * 10 ms period. With K = 4 it would be about 9.5 ms: the backlog, and P99, would then grow
     * with --seconds. With LC, LC2 and one BE worker (three groups), about r + 3 be + 6 lc, 5 ms.
     */
    *o = (options){.seconds = 1,
                   .rounds = 3,
                   .rate = 100,
                   .kernels = 3,
                   .lc_us = 250,
                   .be_us = 1000,
                   .table = -1,
                   .row_fd = -1};
    bool no_svg = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d = 0;
        bool ok = true;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout, argv[0]);
            print_reading(stdout);
            exit(0);
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = true;
            continue;
        } else if (strcmp(a, "--all") == 0) {
            o->all = true;
            continue;
        } else if (strcmp(a, "--no-svg") == 0) {
            no_svg = true;
            continue;
        } else if (v == NULL) {
            ok = false;
        } else if (strcmp(a, "--svg") == 0) {
            ok = *v != '\0';
            o->svg = v;
        } else if (strcmp(a, "--seconds") == 0) {
            ok = parse_double(v, 0.01, 3600, &o->seconds);
        } else if (strcmp(a, "--rounds") == 0) {
            ok = parse_double(v, 1, DEMO_MAX_ROUNDS, &d) && d == (double)(int)d;
            o->rounds = (int)d;
        } else if (strcmp(a, "--row-fd") == 0) {
            ok = parse_double(v, 0, 65535, &d) && d == (double)(int)d;
            o->row_fd = (int)d;
        } else if (strcmp(a, "--rate") == 0) {
            ok = parse_double(v, 0.1, 100000, &o->rate);
        } else if (strcmp(a, "--kernels") == 0) {
            ok = parse_double(v, 1, 1000, &d) && d == (double)(int)d;
            o->kernels = (int)d;
        } else if (strcmp(a, "--lc-us") == 0) {
            ok = parse_double(v, 1, 1e6, &o->lc_us);
        } else if (strcmp(a, "--be-us") == 0) {
            ok = parse_double(v, 1, 1e6, &o->be_us);
        } else if (strcmp(a, "--scenario") == 0) {
            o->scenario = v;
            ok = demo_find_scenario(v) != NULL;
        } else if (strcmp(a, "--table") == 0) {
            ok = false;
            for (int t = 0; t < NTABLES; t++)
                if (strcmp(v, demo_table_names[t]) == 0)
                    o->table = t, ok = true;
        } else if (strcmp(a, "--role") == 0) {
            ok = false;
            for (int r = ROLE_LC; r < NROLES; r++)
                if (strcmp(v, demo_role_names[r]) == 0)
                    o->role = (demo_role)r, ok = true;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "%s: bad argument: %s%s%s\n", argv[0], a, v ? " " : "", v ? v : "");
            usage(stderr, argv[0]);
            exit(2);
        }
        i++; /* consumed the value */
    }
    /* The CSV and one table are views of the full matrix, as they were before the default run
     * became the headline: commands that use them keep their output. */
    o->all = o->all || o->csv || o->table >= 0;
    /* The default run draws its picture unless told not to; --all only where asked to. */
    if (no_svg)
        o->svg = NULL;
    else if (!o->svg && !o->all)
        o->svg = GPUPRIO_DEMO_SVG;
    if (o->role != ROLE_ALL && !o->scenario) {
        fprintf(stderr, "%s: --role needs --scenario\n", argv[0]);
        exit(2);
    }
    if (o->seconds * o->rate > 1e7) {
        fprintf(stderr, "%s: --seconds x --rate must not exceed 1e7 requests\n", argv[0]);
        exit(2);
    }
}

/* A baseline id of row `sc` (NULL: the default `dflt`) must name a row that runs the workload
 * the ratio is about. */
static bool baseline_ok(const scenario *sc, const char *id, const char *dflt, bool be)
{
    const scenario *base = demo_find_scenario(id ? id : dflt);
    if (base && (be ? base->be_workers > 0 : base->lc))
        return true;
    fprintf(stderr, "gpuprio-demo: row %s: its %s baseline \"%s\" is %s\n", sc->id,
            be ? "BE" : "LC", id ? id : dflt, base ? "a row without that workload" : "no row");
    return false;
}

/* Exits with status 2 if the scenario table (scenarios.c) is inconsistent. */
static void check_scenarios(void)
{
    bool ok = baseline_ok(&demo_scenarios[0], NULL, LC_BASELINE, false) &&
              baseline_ok(&demo_scenarios[0], NULL, BE_BASELINE, true);
    for (size_t i = 0; i < demo_nscenarios; i++) {
        const scenario *sc = &demo_scenarios[i];
        if (demo_find_scenario(sc->id) != sc) {
            fprintf(stderr, "gpuprio-demo: row id %s is not unique\n", sc->id);
            ok = false;
        }
        if (sc->be_workers < 0 || sc->be_workers > MAX_BE_WORKERS) {
            fprintf(stderr, "gpuprio-demo: row %s: be_workers out of 0..%d\n", sc->id,
                    MAX_BE_WORKERS);
            ok = false;
        }
        for (int role = 0; role < NROLES && !sc->split; role++)
            if (sc->role_env[role]) {
                fprintf(stderr, "gpuprio-demo: row %s: role_env in a row of one process\n", sc->id);
                ok = false;
            }
        if (sc->lc || sc->lc2)
            ok = baseline_ok(sc, sc->lc_baseline, LC_BASELINE, false) && ok;
        if (sc->be_workers)
            ok = baseline_ok(sc, sc->be_baseline, BE_BASELINE, true) && ok;
    }
    if (!ok) {
        fprintf(stderr, "gpuprio-demo: fix the rows in bench/demo/scenarios.c\n");
        exit(2);
    }
}

/* Runs the rows (the headline's, or with --all every one), then prints their table(s); the
 * description goes where the tables do, or, with --csv, to stderr, so that stdout is the CSV
 * alone. Then draws the picture, if asked to. */
static int run_all(const options *o, const char *argv0)
{
    FILE *info = o->csv ? stderr : stdout;
    if (o->all)
        demo_print_header(info, o, argv0);
    else
        demo_print_brief_header(info, o);
    fflush(info);

    row_result *res = calloc(demo_nscenarios, sizeof *res);
    bool *ok = calloc(demo_nscenarios, sizeof *ok);
    if (!res || !ok)
        fprintf(stderr, "gpuprio-demo: out of memory\n");
    bool all_ok = res && ok && demo_run_rows(o, argv0, res, ok);
    if (all_ok) {
        if (o->all) {
            demo_print_tables(stdout, o, res, ok);
            demo_print_notes(info, o, res, ok);
        } else {
            demo_print_headline(stdout, o, res, ok);
        }
        bool picture_ok = !o->svg || demo_write_picture(o, res, ok);
        if (o->svg && picture_ok)
            fprintf(info, "Picture (LC latency, empirical CDF): %s\n", o->svg);
        for (size_t i = 0; i < demo_nscenarios; i++)
            all_ok = all_ok && (ok[i] || !demo_row_selected(o, i));
        if (!all_ok)
            fprintf(stderr, "gpuprio-demo: at least one row FAILED (see the messages above)\n");
        all_ok = all_ok && picture_ok;
    }
    free(res);
    free(ok);
    return all_ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    options o;
    check_scenarios();
    parse_options(argc, argv, &o);
    if (o.scenario) {
        /* Timer slack (50 us by default) would delay every LC arrival, which sleeps until its
         * due time; the simulator sets its own kernel threads' slack itself. */
        (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        return demo_run_scenario(demo_find_scenario(o.scenario), &o);
    }
    return run_all(&o, argv[0]);
}
