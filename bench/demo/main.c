/*
 * main.c - gpuprio-demo's command line: runs every row and prints the tables, or, with
 * --scenario ID, runs one row in this process and prints its result line (demo.h has the
 * overview, bench/README.md the walk-through).
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

static void usage(FILE *f, const char *argv0)
{
    fprintf(
        f,
        "usage: %s [--seconds S] [--rate R] [--kernels K] [--lc-us US] [--be-us US] [--csv]\n"
        "          [--table T]\n"
        "       %s --scenario ID [--role R] [same options]   (run one row, print its result)\n"
        "  --seconds S   measured window of each row (default 2)\n"
        "  --rate R      LC (and LC2) requests per second, open-loop (default 100)\n"
        "  --kernels K   kernels per LC request (default 3)\n"
        "  --lc-us US    simulated duration of an LC kernel in microseconds (default 250)\n"
        "  --be-us US    simulated duration of a BE kernel in microseconds (default 1000)\n"
        "  --csv         print the tables as one CSV on stdout, every row and column (the\n"
        "                description goes to stderr)\n"
        "  --table T     run only table T (lc-be, groups, procs or levers) and the rows its\n"
        "                ratios refer to\n"
        "  --role R      with --scenario of a cross-process row (the parent does this): run\n"
        "                only workload R (lc, lc2 or be), print \"ready\", then read t0\n"
        "                (CLOCK_MONOTONIC ns) on stdin; be runs until stdin closes. Needs\n"
        "                HIPSIM_SHARED (and, for gpuprio rows, one GPUPRIO_BOARD_DIR for all).\n"
        "rows:",
        argv0, argv0);
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

unsigned demo_setting_uint(const char *value, unsigned dflt)
{
    if (!value || !*value)
        return dflt;
    char *end = NULL;
    unsigned long v = strtoul(value, &end, 10);
    return (end != value && *end == '\0' && v > 0 && v < 65536) ? (unsigned)v : dflt;
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
    *o = (options){
        .seconds = 2, .rate = 100, .kernels = 3, .lc_us = 250, .be_us = 1000, .table = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d = 0;
        bool ok = true;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout, argv[0]);
            exit(0);
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = true;
            continue;
        } else if (v == NULL) {
            ok = false;
        } else if (strcmp(a, "--seconds") == 0) {
            ok = parse_double(v, 0.01, 3600, &o->seconds);
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

/* Runs every row, then prints the tables; the description goes where the tables do, or, with
 * --csv, to stderr, so that stdout is the CSV alone. */
static int run_all(const options *o, const char *argv0)
{
    FILE *info = o->csv ? stderr : stdout;
    demo_print_header(info, o, argv0);
    fflush(info);

    row_result *res = calloc(demo_nscenarios, sizeof *res);
    bool *ok = calloc(demo_nscenarios, sizeof *ok);
    if (!res || !ok)
        fprintf(stderr, "gpuprio-demo: out of memory\n");
    bool all_ok = res && ok && demo_run_rows(o, argv0, res, ok);
    if (all_ok) {
        demo_print_tables(stdout, o, res, ok);
        demo_print_notes(info, o, res, ok);
        for (size_t i = 0; i < demo_nscenarios; i++)
            all_ok = all_ok && (ok[i] || !demo_row_selected(o, i));
        if (!all_ok)
            fprintf(stderr, "gpuprio-demo: at least one row FAILED (see the messages above)\n");
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
