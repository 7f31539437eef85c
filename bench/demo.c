/*
 * demo.c - gpuprio-demo: why GPU streams need priorities that the device honours, and what
 * gpuprio does about it.
 *
 * What it shows. A latency-critical (LC) service issues requests at a fixed rate; each request is a
 * few short kernels on the service's own stream. Next to it, one or more best-effort (BE) jobs
 * (training, batch inference) each keep the device saturated with long kernels on their own
 * stream. Alone, an LC request takes about the sum of its kernels. Sharing the device natively, it
 * takes many times longer: the device grants compute to whichever hardware queue asked first
 * (docs/simulator.md: compute slots in FIFO ticket order, stream priority ignored), so every LC
 * kernel waits behind the BE kernels queued ahead of it, even though the LC stream was created
 * with the greatest priority. The same workloads then run under gpuprio (LD_PRELOAD of
 * libgpuprio-hip.so, HPF policy: docs/scheduler.md), with its default settings (an in-flight
 * budget of GPU time, learned per kernel) and with in-flight windows that count commands only
 * (GPUPRIO_WINDOW of 1, 2, 4 and 8 with GPUPRIO_WINDOW_US=0), which trade the LC tail against BE
 * throughput. A BE worker puts two commands on its stream per kernel (the launch and its ring
 * event), so a window of W lets about W/2 BE kernels sit queued ahead of an LC kernel. A
 * second table has three priority groups, like the field report: the LC client (high), a second
 * client LC2 with the same requests (normal), and a BE worker (low), natively and under gpuprio.
 * A third table runs the same workloads the way they are deployed, as separate processes (LC and
 * one BE process; LC, LC2 and one BE process) on one device that the processes share, natively
 * and under gpuprio, which then schedules across them through its board (docs/board.md).
 *
 * Priorities. The program never calls gpuprio: like an unmodified application it only creates its
 * streams with hipStreamCreateWithPriority, LC with the device's greatest priority, LC2 with the
 * middle of the range, BE with the least. The simulator's range is 1 (least) .. -1 (greatest),
 * which gpuprio maps onto low (-10), normal (0) and high (10). Natively the device ignores them.
 * In a gpuprio row the child checks that the shim is really loaded (gpuprio_version found with
 * dlsym) and that its streams got distinct gpuprio priorities in the intended order
 * (gpuprio_stream_get_priority), and fails the row otherwise; a native row fails if the shim is
 * loaded. The shim's functions are looked up at run time: the demo does not link the shim.
 *
 * How. Everything runs on the simulated HIP device of tests/sim (no GPU): kernels are host
 * functions that return their simulated duration. Each scenario ("row") is data: which workloads
 * run, the stream priorities they ask for, whether gpuprio is preloaded and with which GPUPRIO_*
 * settings, and the table it belongs to. The parent re-executes itself (/proc/self/exe --scenario
 * ID ...) once per row, so each row runs in a fresh process with its own environment (gpuprio rows:
 * LD_PRELOAD=GPUPRIO_SHIM_PATH, the absolute path of the shim built next to the demo), reads the
 * child's one machine-readable result line, and prints the tables. `--scenario ID` alone runs one
 * row in the current process and prints that line; the row's LD_PRELOAD and GPUPRIO_* settings
 * must then be in the environment already, and the child fails the row if they are not.
 *
 * Cross-process rows. The parent starts one child per workload (--scenario ID --role lc|lc2|be,
 * each BE worker a process of its own), all with HIPSIM_SHARED set to a name unique to the row,
 * so their simulated devices share one set of compute slots (tests/sim/hipsim.h) and have a PCI
 * bus id, which gpuprio keys its board by; GPUPRIO_BOARD_DIR points at a private directory that
 * the parent creates and removes, so the demo leaves no board behind (it removes the simulator's
 * segments after each row too). Each child creates its one stream with the workload's priority,
 * exactly as in the in-process rows, warms up and prints "ready"; once all are ready, the parent
 * writes one t0 (CLOCK_MONOTONIC, which all processes share) to their stdin, so the windows
 * coincide. A BE process runs until its stdin closes, which the parent does once the client
 * processes have exited (in one process, BE runs until the clients have finished). The parent
 * adds up the children's result lines and checks that the priorities gpuprio gave the streams
 * of the different processes are in the intended order.
 *
 * Measurement. LC arrivals are open-loop: request i is due at t0 + i/rate whatever happened
 * before (LC2's at t0 + LC2_OFFSET_NS + i/rate, so they arrive while LC's are still running);
 * a request that starts late (because the previous one was slow) counts its lateness, so
 * latency = completion (hipStreamSynchronize returned, hipsimNowNs) - due time. Percentiles are
 * nearest-rank over all requests due in the window [t0, t0 + seconds). BE workers start 50 ms
 * before t0 so the device is saturated when the window opens, keep at most BE_INFLIGHT kernels in
 * flight (a ring of events), run until the window closes and the clients have finished, and
 * count the kernels that completed inside the window. In gpuprio rows the child also reads, from
 * gpuprio_stream_stats, how often gpuprio suspended the BE streams (the evidence that it
 * scheduled at all: about once per LC request).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuprio.h"
#include "hip_compat.h"
#include "hipsim.h"

/* The shim preloaded into gpuprio rows: an absolute path, given by bench/CMakeLists.txt. */
#ifndef GPUPRIO_SHIM_PATH
#error "GPUPRIO_SHIM_PATH (the absolute path of libgpuprio-hip.so) must be defined"
#endif

#define BE_INFLIGHT 8                    /* BE kernels each worker keeps in flight */
#define BE_LEAD_NS (50ull * 1000 * 1000) /* BE starts this long before the window opens */
#define LC2_OFFSET_NS (500ull * 1000)    /* LC2's requests are due this long after LC's */
/* Cross-process rows: time from every process being ready to BE's start (t0 - BE_LEAD_NS), for
 * the parent's t0 to reach the children through their stdin, even on a busy machine. */
#define PROCS_START_NS (20ull * 1000 * 1000)
#define MAX_BE_WORKERS 8
#define RESULT_TAG "GPUPRIO_DEMO_RESULT" /* first word of the child's result line */
#define LC_BASELINE "lc-alone"           /* the row LC (and LC2) latency ratios refer to */
#define BE_BASELINE "be-alone"           /* the row BE throughput ratios refer to */

/* ---------------------------------------------------------------------------------------------
 * Scenarios: one table row each, in the order printed.
 * ------------------------------------------------------------------------------------------- */

typedef enum demo_prio {
    PRIO_DEFAULT,  /* hipStreamCreateWithFlags: no priority requested */
    PRIO_GREATEST, /* hipStreamCreateWithPriority with the device's greatest (most urgent) */
    PRIO_MIDDLE,   /* hipStreamCreateWithPriority with the middle of the range (HIP's normal, 0) */
    PRIO_LEAST     /* hipStreamCreateWithPriority with the device's least */
} demo_prio;

typedef enum demo_table {
    TABLE_LC_BE,  /* LC next to BE workers */
    TABLE_GROUPS, /* three priority groups: LC, LC2, BE */
    TABLE_PROCS,  /* the workloads in separate processes on one shared device */
    NTABLES
} demo_table;

typedef struct scenario {
    const char *id;         /* --scenario ID */
    const char *title;      /* first column of the table */
    demo_table table;       /* the table the row is printed in */
    bool lc;                /* run the latency-critical client */
    bool lc2;               /* run the second client (LC2: same requests, LC2_OFFSET_NS later) */
    int be_workers;         /* saturating best-effort workers (0..MAX_BE_WORKERS) */
    demo_prio lc_prio;      /* priority the LC stream asks for */
    demo_prio lc2_prio;     /* priority the LC2 stream asks for */
    demo_prio be_prio;      /* priority each BE stream asks for */
    bool split;             /* each workload in a process of its own (LC, LC2, each BE worker),
                             * all on one shared simulated device */
    bool gpuprio;           /* runs with LD_PRELOAD=GPUPRIO_SHIM_PATH (the child checks it) */
    const char *const *env; /* NULL, or "NAME=VALUE" (set) / "NAME" (unset) entries for the
                             * row's process, NULL-terminated */
} scenario;

/* The workloads, and the stream priorities they ask for: the same in native and gpuprio rows. */
#define WL_LC .lc = true, .lc_prio = PRIO_GREATEST
#define WL_LC2 .lc2 = true, .lc2_prio = PRIO_MIDDLE
#define WL_BE(n) .be_workers = (n), .be_prio = PRIO_LEAST
#define WL_GROUPS .table = TABLE_GROUPS, WL_LC, WL_LC2, WL_BE(1) /* the second table */
#define SPLIT .table = TABLE_PROCS, .split = true /* one process per workload: the third table */
/* A gpuprio row with the given GPUPRIO_* settings. */
#define GPUPRIO(settings) .gpuprio = true, .env = (settings)

/* gpuprio's settings per row. "default" unsets GPUPRIO_WINDOW and GPUPRIO_WINDOW_US, so an
 * inherited one cannot leak in: the row shows what an unconfigured deployment gets (500 us of
 * GPU time in flight, at most 16 commands, grace 150 us). The W rows count commands only. */
static const char *const gp_default[] = {"GPUPRIO_WINDOW", "GPUPRIO_WINDOW_US", NULL};
static const char *const gp_w1[] = {"GPUPRIO_WINDOW=1", "GPUPRIO_WINDOW_US=0", NULL};
static const char *const gp_w2[] = {"GPUPRIO_WINDOW=2", "GPUPRIO_WINDOW_US=0", NULL};
static const char *const gp_w4[] = {"GPUPRIO_WINDOW=4", "GPUPRIO_WINDOW_US=0", NULL};
static const char *const gp_w8[] = {"GPUPRIO_WINDOW=8", "GPUPRIO_WINDOW_US=0", NULL};

/* clang-format off */
static const scenario scenarios[] = {
    /* Baselines, native: the ratio columns refer to these two. */
    {.id = "lc-alone",   .title = "LC alone",               WL_LC},
    {.id = "be-alone",   .title = "BE alone",               WL_BE(1)},
    /* LC next to one, then two BE workers: native, gpuprio's defaults, windows 1, 2, 4, 8. */
    {.id = "lc-1be",     .title = "LC + 1 BE",              WL_LC, WL_BE(1)},
    {.id = "lc-1be-gp",  .title = "LC + 1 BE, gpuprio",     WL_LC, WL_BE(1), GPUPRIO(gp_default)},
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
    {.id = "3groups",    .title = "3 groups",               WL_GROUPS},
    {.id = "3groups-gp", .title = "3 groups, gpuprio",      WL_GROUPS, GPUPRIO(gp_default)},
    {.id = "3groups-w1", .title = "3 groups, gpuprio W=1",  WL_GROUPS, GPUPRIO(gp_w1)},
    /* The same workloads as separate processes on one shared device: native, gpuprio's defaults. */
    {.id = "lc-1be-2p",     .title = "LC + 1 BE, 2 processes",          WL_LC, WL_BE(1), SPLIT},
    {.id = "lc-1be-2p-gp",  .title = "LC + 1 BE, 2 processes, gpuprio", WL_LC, WL_BE(1), SPLIT,
                            GPUPRIO(gp_default)},
    {.id = "3groups-3p",    .title = "3 groups, 3 processes",  WL_LC, WL_LC2, WL_BE(1), SPLIT},
    {.id = "3groups-3p-gp", .title = "3 groups, 3 processes, gpuprio", WL_LC, WL_LC2, WL_BE(1),
                            SPLIT, GPUPRIO(gp_default)},
};
/* clang-format on */
#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

static const char *const table_titles[NTABLES] = {
    [TABLE_LC_BE] = "LC next to BE workers",
    [TABLE_GROUPS] = "Three priority groups: LC (high), LC2 (normal), BE (low)",
    [TABLE_PROCS] = "Across processes: each workload in its own process, one shared device",
};

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

static const scenario *find_scenario(const char *id)
{
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (strcmp(scenarios[i].id, id) == 0)
            return &scenarios[i];
    return NULL;
}

/* The workloads one child runs: all of its row's, or, in a cross-process row, one of them. */
typedef enum demo_role { ROLE_ALL, ROLE_LC, ROLE_LC2, ROLE_BE, NROLES } demo_role;

static const char *const role_names[NROLES] = {
    [ROLE_ALL] = "all", [ROLE_LC] = "lc", [ROLE_LC2] = "lc2", [ROLE_BE] = "be"};

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */

typedef struct options {
    double seconds; /* measured window per row */
    double rate;    /* LC requests per second */
    int kernels;    /* kernels per LC request */
    double lc_us;   /* simulated duration of an LC kernel */
    double be_us;   /* simulated duration of a BE kernel */
    bool csv;
    const char *scenario; /* run this one row here and print its result line */
    demo_role role;       /* with scenario: the workload of a cross-process row to run here */
} options;

static void usage(FILE *f, const char *argv0)
{
    fprintf(
        f,
        "usage: %s [--seconds S] [--rate R] [--kernels K] [--lc-us US] [--be-us US] [--csv]\n"
        "       %s --scenario ID [--role R] [same options]   (run one row, print its result)\n"
        "  --seconds S   measured window of each row (default 2)\n"
        "  --rate R      LC (and LC2) requests per second, open-loop (default 100)\n"
        "  --kernels K   kernels per LC request (default 3)\n"
        "  --lc-us US    simulated duration of an LC kernel in microseconds (default 250)\n"
        "  --be-us US    simulated duration of a BE kernel in microseconds (default 1000)\n"
        "  --csv         print the tables as one CSV on stdout, every row and column (the\n"
        "                description goes to stderr)\n"
        "  --role R      with --scenario of a cross-process row (the parent does this): run\n"
        "                only workload R (lc, lc2 or be), print \"ready\", then read t0\n"
        "                (CLOCK_MONOTONIC ns) on stdin; be runs until stdin closes. Needs\n"
        "                HIPSIM_SHARED (and, for gpuprio rows, one GPUPRIO_BOARD_DIR for all).\n"
        "rows:",
        argv0, argv0);
    int col = 5;
    for (size_t i = 0; i < NSCENARIOS; i++) {
        if (col + 1 + (int)strlen(scenarios[i].id) > 96) {
            fprintf(f, "\n     ");
            col = 5;
        }
        col += fprintf(f, " %s", scenarios[i].id);
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
    *o = (options){.seconds = 2, .rate = 100, .kernels = 3, .lc_us = 250, .be_us = 1000};
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
            ok = find_scenario(v) != NULL;
        } else if (strcmp(a, "--role") == 0) {
            ok = false;
            for (int r = ROLE_LC; r < NROLES; r++)
                if (strcmp(v, role_names[r]) == 0)
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

static uint64_t us_to_ns(double us)
{
    return (uint64_t)(us * 1000.0 + 0.5);
}

/* ---------------------------------------------------------------------------------------------
 * Results: what one row measured, carried from the child to the parent as "key=value" words.
 * ------------------------------------------------------------------------------------------- */

/* One client's requests due in the window (all of them completed). */
typedef struct client_result {
    uint64_t reqs;
    uint64_t p50_ns;
    uint64_t p99_ns;
    uint64_t max_ns;
    uint64_t max_late_ns; /* worst delay between a request's due time and its first launch */
} client_result;

#define RESULT_STRING_LEN 96 /* size of each text field */

typedef struct row_result {
    uint64_t window_ns;      /* measured window */
    uint64_t slots;          /* compute slots of the device (HIPSIM_COMPUTE_SLOTS) */
    client_result lc;        /* the LC client */
    client_result lc2;       /* the LC2 client (three-group rows) */
    uint64_t be_kernels;     /* BE kernels (all workers) completed inside the window */
    uint64_t be_busy_ns;     /* be_kernels x simulated BE kernel duration */
    uint64_t be_suspensions; /* gpuprio rows: times gpuprio suspended a BE stream (all of them) */
    char hwq[RESULT_STRING_LEN]; /* stream -> hardware queue, e.g. "LC:1,BE:2,BE:3" */
    /* gpuprio rows: stream -> gpuprio priority, e.g. "LC:10,BE:-10"; native rows: "" */
    char prio[RESULT_STRING_LEN];
} row_result;

static const struct {
    const char *key;
    size_t offset;
} result_fields[] = {
    {"window_ns", offsetof(row_result, window_ns)},
    {"slots", offsetof(row_result, slots)},
    {"lc_reqs", offsetof(row_result, lc.reqs)},
    {"lc_p50_ns", offsetof(row_result, lc.p50_ns)},
    {"lc_p99_ns", offsetof(row_result, lc.p99_ns)},
    {"lc_max_ns", offsetof(row_result, lc.max_ns)},
    {"lc_max_late_ns", offsetof(row_result, lc.max_late_ns)},
    {"lc2_reqs", offsetof(row_result, lc2.reqs)},
    {"lc2_p50_ns", offsetof(row_result, lc2.p50_ns)},
    {"lc2_p99_ns", offsetof(row_result, lc2.p99_ns)},
    {"lc2_max_ns", offsetof(row_result, lc2.max_ns)},
    {"lc2_max_late_ns", offsetof(row_result, lc2.max_late_ns)},
    {"be_kernels", offsetof(row_result, be_kernels)},
    {"be_busy_ns", offsetof(row_result, be_busy_ns)},
    {"be_suspensions", offsetof(row_result, be_suspensions)},
};
#define NRESULT_FIELDS (sizeof result_fields / sizeof result_fields[0])

/* Text fields: no spaces; "-" on the line stands for empty. */
static const struct {
    const char *key;
    size_t offset;
} result_strings[] = {
    {"hwq", offsetof(row_result, hwq)},
    {"prio", offsetof(row_result, prio)},
};
#define NRESULT_STRINGS (sizeof result_strings / sizeof result_strings[0])

static uint64_t *result_field(row_result *r, size_t i)
{
    return (uint64_t *)(void *)((char *)r + result_fields[i].offset);
}

static char *result_string(row_result *r, size_t i)
{
    return (char *)r + result_strings[i].offset;
}

static void print_result_line(FILE *f, const scenario *sc, row_result *r)
{
    fprintf(f, RESULT_TAG " scenario=%s", sc->id);
    for (size_t i = 0; i < NRESULT_FIELDS; i++)
        fprintf(f, " %s=%" PRIu64, result_fields[i].key, *result_field(r, i));
    for (size_t i = 0; i < NRESULT_STRINGS; i++) {
        const char *s = result_string(r, i);
        fprintf(f, " %s=%s", result_strings[i].key, s[0] ? s : "-");
    }
    fprintf(f, "\n");
    fflush(f);
}

/* Parses a child's output: finds the result line for `id`; false if absent or malformed. */
static bool parse_result_line(char *text, const char *id, row_result *r)
{
    memset(r, 0, sizeof *r);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, RESULT_TAG " ", sizeof RESULT_TAG) != 0)
            continue;
        bool id_ok = false;
        size_t seen = 0;
        char *save = NULL;
        for (char *w = strtok_r(line + sizeof RESULT_TAG, " ", &save); w;
             w = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(w, '=');
            if (!eq)
                return false;
            *eq = '\0';
            const char *val = eq + 1;
            if (strcmp(w, "scenario") == 0)
                id_ok = strcmp(val, id) == 0;
            for (size_t i = 0; i < NRESULT_STRINGS; i++)
                if (strcmp(w, result_strings[i].key) == 0)
                    snprintf(result_string(r, i), RESULT_STRING_LEN, "%s",
                             strcmp(val, "-") == 0 ? "" : val);
            for (size_t i = 0; i < NRESULT_FIELDS; i++) {
                if (strcmp(w, result_fields[i].key) != 0)
                    continue;
                char *end = NULL;
                errno = 0;
                unsigned long long v = strtoull(val, &end, 10);
                if (errno != 0 || end == val || *end != '\0')
                    return false;
                *result_field(r, i) = (uint64_t)v;
                seen++;
            }
        }
        return id_ok && seen == NRESULT_FIELDS;
    }
    return false;
}

/* Nearest-rank percentile of sorted[0..n): the smallest value with at least pct% of the samples
 * at or below it (rank ceil(pct/100 * n), 1-based). pct in 1..100; 0 when n is 0. */
static uint64_t percentile_nearest_rank(const uint64_t *sorted, size_t n, unsigned pct)
{
    if (n == 0)
        return 0;
    size_t rank = ((size_t)pct * n + 99) / 100;
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* ---------------------------------------------------------------------------------------------
 * The child: runs one scenario on the (simulated) device.
 * ------------------------------------------------------------------------------------------- */

static const char *current_scenario = "?";

static void die_hip(const char *call, hipError_t err, int line)
{
    fprintf(stderr, "gpuprio-demo [%s]: %s failed: %s (%d) at demo.c:%d\n", current_scenario, call,
            hipGetErrorName(err), (int)err, line);
    /* Worker threads may still be inside the runtime: leave without running its destructors. */
    _Exit(1);
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        hipError_t check_err_ = (call);                                                            \
        if (check_err_ != hipSuccess)                                                              \
            die_hip(#call, check_err_, __LINE__);                                                  \
    } while (0)

static void die(const char *what)
{
    fprintf(stderr, "gpuprio-demo [%s]: %s\n", current_scenario, what);
    _Exit(1);
}

/* The public API of the preloaded shim, looked up at run time (the demo does not link it). */
static struct {
    const char *(*version)(void);
    int (*get_priority)(void *stream, int *priority);
    int (*stats)(void *stream, struct gpuprio_queue_stats *out);
} shim;

/* Looks the shim's API up; true when libgpuprio-hip.so is loaded in this process. */
static bool shim_lookup(void)
{
    shim.version = (const char *(*)(void))dlsym(RTLD_DEFAULT, "gpuprio_version");
    shim.get_priority = (int (*)(void *, int *))dlsym(RTLD_DEFAULT, "gpuprio_stream_get_priority");
    shim.stats =
        (int (*)(void *, struct gpuprio_queue_stats *))dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    return shim.version != NULL;
}

/* Fails the row unless the process has the row's settings: each "NAME=VALUE" entry set so, each
 * "NAME" entry unset. The parent applies them; this catches `--scenario ID` run by hand without
 * them, which would measure another configuration than the row's title says. */
static void check_environment(const scenario *sc)
{
    for (size_t j = 0; sc->env && sc->env[j]; j++) {
        const char *e = sc->env[j], *eq = strchr(e, '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq ? (size_t)(eq - e) : strlen(e)), e);
        const char *v = getenv(name);
        if (eq ? (!v || strcmp(v, eq + 1) != 0) : v != NULL) {
            fprintf(stderr,
                    "gpuprio-demo [%s]: this row runs with %s%s, but the process has %s%s%s\n",
                    sc->id, e, eq ? "" : " unset", name, v ? "=" : " unset", v ? v : "");
            _Exit(1);
        }
    }
}

/* Fails the row unless the shim is loaded exactly when the row says so. */
static void check_shim(const scenario *sc)
{
    bool loaded = shim_lookup();
    if (loaded && (!shim.get_priority || !shim.stats))
        die("libgpuprio-hip.so is loaded but lacks gpuprio_stream_get_priority/stats");
    if (sc->gpuprio && !loaded)
        die("this is a gpuprio row, but libgpuprio-hip.so is NOT loaded (gpuprio_version not "
            "found): the row would measure the native device. Run it from the table, or with "
            "LD_PRELOAD=" GPUPRIO_SHIM_PATH);
    if (!sc->gpuprio && loaded)
        die("this is a native row, but libgpuprio-hip.so is loaded (LD_PRELOAD inherited?): "
            "unset LD_PRELOAD");
}

/* The kernel: no work, only a simulated duration (argument 0, ns) and a trace tag (argument 1). */
static uint64_t demo_kernel(hipsimLaunch *launch)
{
    uint64_t dur = 0, tag = 0;
    if (launch->args) {
        memcpy(&dur, launch->args[0], sizeof dur);
        memcpy(&tag, launch->args[1], sizeof tag);
    } else if (launch->arg_buffer && launch->arg_buffer_size >= 2 * sizeof(uint64_t)) {
        memcpy(&dur, launch->arg_buffer, sizeof dur);
        memcpy(&tag, (const char *)launch->arg_buffer + sizeof dur, sizeof tag);
    }
    launch->tag = tag;
    return dur;
}

static void launch_kernel(const void *fn, hipStream_t stream, uint64_t dur_ns, uint64_t tag)
{
    void *args[2] = {&dur_ns, &tag};
    dim3 one = {1, 1, 1};
    CHECK(hipLaunchKernel(fn, one, one, args, 0, stream));
}

static void sleep_until(uint64_t t_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(t_ns / 1000000000u),
                          .tv_nsec = (long)(t_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* Set before the threads start, read-only afterwards (pthread_create orders the writes). */
typedef struct run_ctx {
    const void *lc_fn, *be_fn;
    uint64_t lc_ns, be_ns;
    int kernels;
    double period_ns;
    uint64_t t0, t_end;         /* the measured window */
    atomic_int clients_running; /* LC clients not yet done (BE runs until they are) */
    atomic_uint_fast64_t be_kernels_in_window;
} run_ctx;

/* An LC client (LC or LC2): one thread, one stream, open-loop requests. */
typedef struct client {
    run_ctx *ctx;
    hipStream_t stream;
    uint64_t tag;
    uint64_t offset_ns; /* request i is due at t0 + offset_ns + i x period */
    uint64_t *lat;      /* latencies, lat_cap entries; written by the client's thread only */
    size_t lat_cap;
    size_t reqs;          /* written by the client's thread, read after join */
    uint64_t max_late_ns; /* likewise */
} client;

/* A BE worker: one thread, one stream. */
typedef struct be_worker {
    run_ctx *ctx;
    hipStream_t stream;
    uint64_t tag;
} be_worker;

static void *client_thread(void *arg)
{
    client *w = arg;
    run_ctx *c = w->ctx;
    size_t i = 0;
    for (;; i++) {
        uint64_t due = c->t0 + w->offset_ns + (uint64_t)((double)i * c->period_ns);
        if (due >= c->t_end || i >= w->lat_cap)
            break;
        sleep_until(due); /* returns at once when the previous request made this one late */
        uint64_t start = hipsimNowNs();
        if (start > due && start - due > w->max_late_ns)
            w->max_late_ns = start - due;
        for (int k = 0; k < c->kernels; k++)
            launch_kernel(c->lc_fn, w->stream, c->lc_ns, w->tag);
        CHECK(hipStreamSynchronize(w->stream));
        w->lat[i] = hipsimNowNs() - due;
    }
    w->reqs = i;
    atomic_fetch_sub(&c->clients_running, 1);
    return NULL;
}

static void *be_thread(void *arg)
{
    be_worker *w = arg;
    run_ctx *c = w->ctx;
    hipEvent_t ring[BE_INFLIGHT];
    size_t head = 0, inflight = 0;
    uint64_t in_window = 0;
    for (size_t i = 0; i < BE_INFLIGHT; i++)
        CHECK(hipEventCreateWithFlags(&ring[i], hipEventDisableTiming));
    sleep_until(c->t0 - BE_LEAD_NS);
    for (;;) {
        bool stop = hipsimNowNs() >= c->t_end && atomic_load(&c->clients_running) == 0;
        if (stop && inflight == 0)
            break;
        if (!stop && inflight < BE_INFLIGHT) {
            launch_kernel(c->be_fn, w->stream, c->be_ns, w->tag);
            CHECK(hipEventRecord(ring[(head + inflight) % BE_INFLIGHT], w->stream));
            inflight++;
            continue;
        }
        /* Full (or draining): wait for the oldest kernel; count it if it ended in the window. */
        CHECK(hipEventSynchronize(ring[head]));
        uint64_t now = hipsimNowNs();
        if (now > c->t0 && now <= c->t_end)
            in_window++;
        head = (head + 1) % BE_INFLIGHT;
        inflight--;
    }
    for (size_t i = 0; i < BE_INFLIGHT; i++)
        CHECK(hipEventDestroy(ring[i]));
    atomic_fetch_add(&c->be_kernels_in_window, in_window);
    return NULL;
}

static unsigned env_uint(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end = NULL;
    unsigned long v = strtoul(s, &end, 10);
    return (end != s && *end == '\0' && v > 0 && v < 65536) ? (unsigned)v : dflt;
}

static hipStream_t create_stream(demo_prio p, int least, int greatest)
{
    hipStream_t s = NULL;
    if (p == PRIO_DEFAULT)
        CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    else
        CHECK(hipStreamCreateWithPriority(&s, hipStreamNonBlocking,
                                          p == PRIO_GREATEST ? greatest
                                          : p == PRIO_LEAST  ? least
                                                             : (least + greatest) / 2));
    return s;
}

/* Appends "WHO:value" to a comma-separated list. */
static void append_item(char *buf, size_t size, const char *who, int value)
{
    size_t len = strlen(buf);
    if (len < size)
        snprintf(buf + len, size - len, "%s%s:%d", len ? "," : "", who, value);
}

#define MAX_ITEMS (2 + MAX_BE_WORKERS) /* streams of a row: LC, LC2, the BE workers */

/* Splits a list "WHO:value,WHO:value" (hwq, prio) into who[] and v[]; returns the count. */
static int parse_items(const char *list, char who[][8], int *v, int max)
{
    int n = 0;
    const char *p = list;
    while (p && *p && n < max) {
        if (sscanf(p, "%7[^:,]:%d", who[n], &v[n]) == 2)
            n++;
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return n;
}

/* Whether the gpuprio priorities in prio ("LC:10,LC2:0,BE:-10") are in the order the streams
 * asked for, LC > LC2 > BE, each distinct: otherwise gpuprio would not tell them apart and the
 * row would not test scheduling at all. */
static bool prio_ordered(const char *prio)
{
    char who[MAX_ITEMS][8];
    int v[MAX_ITEMS];
    int n = parse_items(prio, who, v, MAX_ITEMS);
    int rank[MAX_ITEMS];
    for (int i = 0; i < n; i++)
        rank[i] = strcmp(who[i], "LC") == 0 ? 0 : strcmp(who[i], "LC2") == 0 ? 1 : 2;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (rank[i] < rank[j] && v[i] <= v[j])
                return false;
    return true;
}

/* gpuprio's priority of a stream (gpuprio rows); dies if gpuprio does not know it. */
static int gpuprio_priority(hipStream_t s, const char *who)
{
    int p = 0;
    if (shim.get_priority((void *)s, &p) != 0) {
        fprintf(stderr, "gpuprio-demo [%s]: gpuprio does not know the %s stream\n",
                current_scenario, who);
        _Exit(1);
    }
    return p;
}

/* Sets up a client of the row: its stream (created now, in the fixed order) and its buffers. */
static void client_init(client *w, run_ctx *c, uint64_t tag, uint64_t offset_ns, size_t cap)
{
    *w = (client){.ctx = c, .tag = tag, .offset_ns = offset_ns, .lat_cap = cap};
    w->lat = calloc(cap, sizeof *w->lat);
    if (!w->lat)
        die("out of memory");
}

static void client_result_of(client *w, client_result *out)
{
    qsort(w->lat, w->reqs, sizeof *w->lat, cmp_u64);
    out->reqs = w->reqs;
    out->p50_ns = percentile_nearest_rank(w->lat, w->reqs, 50);
    out->p99_ns = percentile_nearest_rank(w->lat, w->reqs, 99);
    out->max_ns = percentile_nearest_rank(w->lat, w->reqs, 100);
    out->max_late_ns = w->max_late_ns;
    free(w->lat);
}

static int run_scenario(const scenario *sc, const options *o)
{
    current_scenario = sc->id;
    /* Watchdog: a hung runtime (or scheduler) must not hang the parent (and CI) forever. */
    alarm((unsigned)(120 + 10 * o->seconds));
    check_environment(sc);
    check_shim(sc);

    /* A cross-process row runs one workload per process: this one runs its role's. */
    const bool split = o->role != ROLE_ALL;
    if (split != sc->split)
        die(split ? "--role is for the cross-process rows only"
                  : "this is a cross-process row: run it from the table, or give --role");
    if (split && (!getenv("HIPSIM_SHARED") || !*getenv("HIPSIM_SHARED")))
        die("HIPSIM_SHARED is not set: the processes of the row would not share a device");
    scenario part = *sc;
    if (split) {
        part.lc = o->role == ROLE_LC;
        part.lc2 = o->role == ROLE_LC2;
        part.be_workers = o->role == ROLE_BE;
        if ((part.lc && !sc->lc) || (part.lc2 && !sc->lc2) || (part.be_workers && !sc->be_workers))
            die("the row has no such workload (--role)");
        sc = &part;
    }

    if (sc->be_workers < 0 || sc->be_workers > MAX_BE_WORKERS)
        die("bad scenario: be_workers out of range");
    int ndev = 0, least = 0, greatest = 0;
    CHECK(hipGetDeviceCount(&ndev));
    if (ndev < 1)
        die("no HIP device");
    CHECK(hipSetDevice(0));
    CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));

    static const size_t arg_sizes[2] = {sizeof(uint64_t), sizeof(uint64_t)};
    static run_ctx c; /* static: zero-initialised atomics */
    c.lc_fn = hipsimRegisterKernel("gpuprio_demo_lc", demo_kernel, 2, arg_sizes);
    c.be_fn = hipsimRegisterKernel("gpuprio_demo_be", demo_kernel, 2, arg_sizes);
    if (!c.lc_fn || !c.be_fn)
        die("hipsimRegisterKernel failed");
    c.lc_ns = us_to_ns(o->lc_us);
    c.be_ns = us_to_ns(o->be_us);
    c.kernels = o->kernels;
    c.period_ns = 1e9 / o->rate;
    /* In a BE process of a cross-process row, the clients of the other processes count as one,
     * until the parent closes our stdin after they have exited. */
    atomic_init(&c.clients_running, (int)sc->lc + (int)sc->lc2 + (split && sc->be_workers));
    atomic_init(&c.be_kernels_in_window, 0);
    uint64_t window_ns = (uint64_t)(o->seconds * 1e9);
    size_t lat_cap = (size_t)(o->seconds * o->rate) + 2;

    /* Streams in a fixed order (LC, LC2, BE 1, BE 2, ...), before any thread runs, so the
     * hardware-queue mapping (round-robin in creation order) is the same in every run. */
    client lc_w = {0}, lc2_w = {0};
    be_worker be_w[MAX_BE_WORKERS];
    row_result r;
    memset(&r, 0, sizeof r);
    if (sc->lc) {
        client_init(&lc_w, &c, 0, 0, lat_cap);
        lc_w.stream = create_stream(sc->lc_prio, least, greatest);
        append_item(r.hwq, sizeof r.hwq, "LC", hipsimStreamHwQueue(lc_w.stream));
    }
    if (sc->lc2) {
        client_init(&lc2_w, &c, MAX_BE_WORKERS + 1, LC2_OFFSET_NS, lat_cap);
        lc2_w.stream = create_stream(sc->lc2_prio, least, greatest);
        append_item(r.hwq, sizeof r.hwq, "LC2", hipsimStreamHwQueue(lc2_w.stream));
    }
    for (int i = 0; i < sc->be_workers; i++) {
        be_w[i] = (be_worker){.ctx = &c, .tag = (uint64_t)i + 1};
        be_w[i].stream = create_stream(sc->be_prio, least, greatest);
        append_item(r.hwq, sizeof r.hwq, "BE", hipsimStreamHwQueue(be_w[i].stream));
    }

    /* gpuprio rows: the streams must have got distinct priorities, LC > LC2 > BE, from the
     * priorities they were created with (in a cross-process row, the parent checks the order of
     * the processes' streams). */
    if (sc->gpuprio) {
        if (sc->lc)
            append_item(r.prio, sizeof r.prio, "LC", gpuprio_priority(lc_w.stream, "LC"));
        if (sc->lc2)
            append_item(r.prio, sizeof r.prio, "LC2", gpuprio_priority(lc2_w.stream, "LC2"));
        for (int i = 0; i < sc->be_workers; i++)
            append_item(r.prio, sizeof r.prio, "BE", gpuprio_priority(be_w[i].stream, "BE"));
        if (!prio_ordered(r.prio)) {
            fprintf(stderr,
                    "gpuprio-demo [%s]: the streams' gpuprio priorities are %s, not LC > LC2 > "
                    "BE: gpuprio would not tell them apart\n",
                    sc->id, r.prio);
            _Exit(1);
        }
    }

    /* Warm-up: one short kernel per stream, so first-use costs stay out of the window. */
    if (sc->lc) {
        launch_kernel(c.lc_fn, lc_w.stream, 1000, lc_w.tag);
        CHECK(hipStreamSynchronize(lc_w.stream));
    }
    if (sc->lc2) {
        launch_kernel(c.lc_fn, lc2_w.stream, 1000, lc2_w.tag);
        CHECK(hipStreamSynchronize(lc2_w.stream));
    }
    for (int i = 0; i < sc->be_workers; i++) {
        launch_kernel(c.be_fn, be_w[i].stream, 1000, be_w[i].tag);
        CHECK(hipStreamSynchronize(be_w[i].stream));
    }

    if (split) {
        /* One window for all the processes of the row: the parent gives t0 once all are ready. */
        printf("ready\n");
        fflush(stdout);
        if (scanf("%" SCNu64, &c.t0) != 1)
            die("no t0 on stdin (cross-process rows are started by the parent)");
    } else {
        c.t0 = hipsimNowNs() + BE_LEAD_NS + 5ull * 1000 * 1000;
    }
    c.t_end = c.t0 + window_ns;

    pthread_t lc_tid, lc2_tid, be_tid[MAX_BE_WORKERS];
    for (int i = 0; i < sc->be_workers; i++)
        if (pthread_create(&be_tid[i], NULL, be_thread, &be_w[i]) != 0)
            die("pthread_create failed");
    if (sc->lc && pthread_create(&lc_tid, NULL, client_thread, &lc_w) != 0)
        die("pthread_create failed");
    if (sc->lc2 && pthread_create(&lc2_tid, NULL, client_thread, &lc2_w) != 0)
        die("pthread_create failed");
    if (split && sc->be_workers) {
        /* The clients of the other processes are done when the parent closes our stdin. */
        while (getchar() != EOF) {
        }
        atomic_fetch_sub(&c.clients_running, 1);
    }
    if (sc->lc)
        pthread_join(lc_tid, NULL);
    if (sc->lc2)
        pthread_join(lc2_tid, NULL);
    for (int i = 0; i < sc->be_workers; i++)
        pthread_join(be_tid[i], NULL);

    /* What gpuprio did to the BE streams, read before they are destroyed. */
    for (int i = 0; i < sc->be_workers && sc->gpuprio; i++) {
        struct gpuprio_queue_stats st;
        if (shim.stats((void *)be_w[i].stream, &st) != 0)
            die("gpuprio_stream_stats failed for a BE stream");
        r.be_suspensions += st.suspensions;
    }

    if (sc->lc)
        CHECK(hipStreamDestroy(lc_w.stream));
    if (sc->lc2)
        CHECK(hipStreamDestroy(lc2_w.stream));
    for (int i = 0; i < sc->be_workers; i++)
        CHECK(hipStreamDestroy(be_w[i].stream));
    CHECK(hipDeviceSynchronize());

    r.window_ns = window_ns;
    r.slots = env_uint("HIPSIM_COMPUTE_SLOTS", 1);
    if (sc->lc)
        client_result_of(&lc_w, &r.lc);
    if (sc->lc2)
        client_result_of(&lc2_w, &r.lc2);
    r.be_kernels = atomic_load(&c.be_kernels_in_window);
    r.be_busy_ns = r.be_kernels * c.be_ns;
    print_result_line(stdout, sc, &r);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The parent: one child process per row, then the tables.
 * ------------------------------------------------------------------------------------------- */

#define SHIM_PRELOAD "LD_PRELOAD=" GPUPRIO_SHIM_PATH

static size_t env_name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* The row's environment entries: its own, then LD_PRELOAD of the shim for a gpuprio row, then
 * `more` (NULL-terminated, or NULL): the parent's settings for a cross-process row. */
static size_t row_env_entries(const scenario *sc, const char *const *more, const char **out,
                              size_t max)
{
    size_t n = 0;
    for (size_t j = 0; sc->env && sc->env[j] && n < max; j++)
        out[n++] = sc->env[j];
    if (sc->gpuprio && n < max)
        out[n++] = SHIM_PRELOAD;
    for (size_t j = 0; more && more[j] && n < max; j++)
        out[n++] = more[j];
    return n;
}

/* environ with the row's entries applied: "NAME=VALUE" set (replacing any of the same name),
 * "NAME" unset. Caller frees. */
static char **row_environment(const scenario *sc, const char *const *more)
{
    const char *entries[16];
    size_t extra = row_env_entries(sc, more, entries, sizeof entries / sizeof entries[0]);
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + extra + 1, sizeof *envp);
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool overridden = false;
        for (size_t j = 0; j < extra && !overridden; j++) {
            size_t len = env_name_len(entries[j]);
            overridden =
                env_name_len(environ[i]) == len && strncmp(environ[i], entries[j], len) == 0;
        }
        if (!overridden)
            envp[k++] = environ[i];
    }
    for (size_t j = 0; j < extra; j++)
        if (strchr(entries[j], '='))
            envp[k++] = (char *)(uintptr_t)entries[j];
    envp[k] = NULL;
    return envp;
}

/* One child process of a row. */
typedef struct child {
    pid_t pid;
    demo_role role;
    int out;   /* read end of its stdout, -1 once it ended */
    int in;    /* write end of its stdin (cross-process rows), or -1 */
    char *buf; /* what it wrote to stdout so far, NUL-terminated */
    size_t len, cap;
    bool ready; /* cross-process rows: it said "ready" */
} child;

/* Starts argv with envp; with_stdin: on a pipe of ours, else on the parent's stdin. The pipes are
 * close-on-exec, so that no child holds another's stdin open (it would never see it close). */
static bool spawn_child(char *const *argv, char **envp, bool with_stdin, child *ch)
{
    int out[2], in[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0) {
        perror("gpuprio-demo: pipe");
        return false;
    }
    if (with_stdin && pipe2(in, O_CLOEXEC) != 0) {
        perror("gpuprio-demo: pipe");
        close(out[0]);
        close(out[1]);
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("gpuprio-demo: fork");
        close(out[0]);
        close(out[1]);
        if (with_stdin) {
            close(in[0]);
            close(in[1]);
        }
        return false;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls between fork and exec. dup2 clears close-on-exec. The
         * parent ignores SIGPIPE; the child must not inherit that. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(SIGPIPE, &dfl, NULL);
        if (dup2(out[1], STDOUT_FILENO) < 0 || (with_stdin && dup2(in[0], STDIN_FILENO) < 0))
            _exit(127);
        execve("/proc/self/exe", argv, envp);
        static const char msg[] = "gpuprio-demo: execve /proc/self/exe failed\n";
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)ignored;
        _exit(127);
    }
    close(out[1]);
    if (with_stdin)
        close(in[0]);
    *ch = (child){.pid = pid, .out = out[0], .in = in[1]};
    return true;
}

/* Appends what the child wrote to ch->buf (one read): the bytes read, 0 at EOF, -1 on a read
 * error or when out of memory. */
static ssize_t read_child(child *ch)
{
    if (ch->len + 1 >= ch->cap) {
        size_t cap = ch->cap ? ch->cap * 2 : 4096;
        char *bigger = cap <= (1u << 20) ? realloc(ch->buf, cap) : NULL;
        if (!bigger)
            return -1;
        ch->buf = bigger;
        ch->cap = cap;
    }
    ssize_t got;
    while ((got = read(ch->out, ch->buf + ch->len, ch->cap - 1 - ch->len)) < 0 && errno == EINTR) {
    }
    ch->len += got > 0 ? (size_t)got : 0;
    ch->buf[ch->len] = '\0';
    return got;
}

/* Waits for the child; true if it exited with status 0, else says how it ended. */
static bool wait_child(const scenario *sc, const child *ch)
{
    int status = 0;
    while (waitpid(ch->pid, &status, 0) < 0 && errno == EINTR) {
    }
    char who[32] = "";
    if (sc->split)
        snprintf(who, sizeof who, " (%s process)", role_names[ch->role]);
    if (WIFSIGNALED(status))
        fprintf(stderr, "gpuprio-demo: row %s%s: child killed by signal %d%s\n", sc->id, who,
                WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (watchdog: runtime hung?)" : "");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "gpuprio-demo: row %s%s: child exited with status %d\n", sc->id, who,
                WEXITSTATUS(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Closes the stdin of every child still holding one: BE processes then stop, and processes still
 * waiting for t0 give up. */
static void close_inputs(child *ch, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ch[i].in >= 0) {
            close(ch[i].in);
            ch[i].in = -1;
        }
}

/* Adds one process's result of a cross-process row to the row's: counts add up, the window and
 * the slots are the same in all, and a client's statistics come from the one process that ran
 * it (they are zero in the others). Lists are concatenated in process order. */
static void merge_result(row_result *into, row_result *part)
{
    for (size_t i = 0; i < NRESULT_FIELDS; i++) {
        size_t off = result_fields[i].offset;
        bool same = off == offsetof(row_result, window_ns) || off == offsetof(row_result, slots);
        *result_field(into, i) = (same ? 0 : *result_field(into, i)) + *result_field(part, i);
    }
    for (size_t i = 0; i < NRESULT_STRINGS; i++) {
        char *s = result_string(into, i);
        const char *add = result_string(part, i);
        size_t len = strlen(s);
        snprintf(s + len, RESULT_STRING_LEN - len, "%s%s", len && add[0] ? "," : "", add);
    }
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Runs one row: in a child process, or, in a cross-process row, in one per workload with the
 * parent's settings `more` added to their environment. True with *r filled in if it succeeded. */
static bool run_row(const scenario *sc, const options *o, const char *argv0,
                    const char *const *more, row_result *r)
{
    char sec[32], rate[32], kern[32], lcus[32], beus[32];
    snprintf(sec, sizeof sec, "%.17g", o->seconds);
    snprintf(rate, sizeof rate, "%.17g", o->rate);
    snprintf(kern, sizeof kern, "%d", o->kernels);
    snprintf(lcus, sizeof lcus, "%.17g", o->lc_us);
    snprintf(beus, sizeof beus, "%.17g", o->be_us);
    /* clang-format off */
    char *argv[] = {(char *)(uintptr_t)argv0, "--scenario", (char *)(uintptr_t)sc->id,
                    "--seconds", sec, "--rate", rate, "--kernels", kern,
                    "--lc-us", lcus, "--be-us", beus, NULL, NULL, NULL};
    /* clang-format on */
    const size_t role_arg = sizeof argv / sizeof argv[0] - 3; /* "--role R" goes here */

    child ch[MAX_ITEMS];
    size_t n = 0;
    if (!sc->split)
        ch[n++].role = ROLE_ALL;
    if (sc->split && sc->lc)
        ch[n++].role = ROLE_LC;
    if (sc->split && sc->lc2)
        ch[n++].role = ROLE_LC2;
    for (int i = 0; sc->split && i < sc->be_workers && n < MAX_ITEMS; i++)
        ch[n++].role = ROLE_BE;

    char **envp = row_environment(sc, more);
    bool ok = envp != NULL;
    size_t started = 0;
    while (ok && started < n) {
        demo_role role = ch[started].role;
        if (sc->split) {
            argv[role_arg] = "--role";
            argv[role_arg + 1] = (char *)(uintptr_t)role_names[role];
        }
        ok = spawn_child(argv, envp, sc->split, &ch[started]);
        ch[started].role = role;
        started += ok;
    }
    free(envp);

    /* Read every child's output as it comes, and reap each as soon as it ends: the simulator (and
     * gpuprio's board) free a dead process's share of the device only once it is no zombie.
     * Cross-process rows: once every process is ready (stream created, warmed up), one t0 for
     * all; once the clients have exited (or anything failed), the BE processes may stop. */
    size_t left = started, clients = 0, nready = 0;
    for (size_t i = 0; i < started; i++)
        clients += ch[i].role != ROLE_BE;
    bool t0_sent = !sc->split;
    while (left > 0) {
        if (!ok || (t0_sent && clients == 0))
            close_inputs(ch, started);
        struct pollfd pfd[MAX_ITEMS];
        size_t idx[MAX_ITEMS], nfds = 0;
        for (size_t i = 0; i < started; i++)
            if (ch[i].out >= 0)
                pfd[nfds] = (struct pollfd){.fd = ch[i].out, .events = POLLIN}, idx[nfds++] = i;
        int np = poll(pfd, nfds, -1);
        if (np < 0 && errno == EINTR)
            continue;
        for (size_t k = 0; k < nfds; k++) {
            child *c = &ch[idx[k]];
            if (np >= 0 && pfd[k].revents == 0)
                continue; /* (if poll fails, read each in turn) */
            ssize_t got = read_child(c);
            if (got > 0 && sc->split && !c->ready && strchr(c->buf, '\n')) {
                c->ready = strncmp(c->buf, "ready\n", 6) == 0;
                if (!c->ready)
                    fprintf(stderr, "gpuprio-demo: row %s (%s process): said %.20s, not ready\n",
                            sc->id, role_names[c->role], c->buf);
                ok = c->ready && ok;
                nready++;
            }
            if (got > 0)
                continue;
            close(c->out);
            c->out = -1;
            left--;
            clients -= c->role != ROLE_BE;
            ok = wait_child(sc, c) && got == 0 && (c->ready || !sc->split) && ok;
        }
        if (ok && !t0_sent && nready == started) {
            char line[32];
            int len = snprintf(line, sizeof line, "%" PRIu64 "\n",
                               (uint64_t)(monotonic_ns() + PROCS_START_NS + BE_LEAD_NS));
            for (size_t i = 0; i < started; i++)
                ok = write(ch[i].in, line, (size_t)len) == len && ok;
            t0_sent = true;
        }
    }
    close_inputs(ch, started);

    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < started; i++) {
        row_result part;
        if (ok && (!ch[i].buf || !parse_result_line(ch[i].buf, sc->id, &part))) {
            fprintf(stderr, "gpuprio-demo: row %s: no valid " RESULT_TAG " line in its output\n",
                    sc->id);
            ok = false;
        }
        if (ok)
            merge_result(r, &part);
        free(ch[i].buf);
    }
    if (ok && sc->gpuprio && !prio_ordered(r->prio)) {
        fprintf(stderr,
                "gpuprio-demo: row %s: the streams' gpuprio priorities are %s, not LC > LC2 > BE: "
                "gpuprio would not tell them apart\n",
                sc->id, r->prio);
        ok = false;
    }
    return ok;
}

/* ---- the tables: columns are data; each formats one cell of a row ---- */

typedef struct cell_ctx {
    const scenario *sc;
    const row_result *r;       /* NULL: the row failed */
    const row_result *lc_base; /* LC_BASELINE's result, or NULL */
    const row_result *be_base; /* BE_BASELINE's result, or NULL */
    bool csv;
} cell_ctx;

typedef void (*cell_fn)(char *buf, size_t size, const cell_ctx *c);

typedef struct column {
    const char *title; /* text table heading */
    const char *key;   /* CSV heading */
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

enum client_stat { STAT_P50, STAT_P99, STAT_MAX, STAT_REQS, STAT_P99_RATIO };

/* One statistic of a client: milliseconds, a count, or its P99 over LC alone's. */
static void cell_client(char *buf, size_t size, const cell_ctx *c, bool lc2, enum client_stat st)
{
    const client_result *cr = client_of(c, lc2);
    if (!cr || (st == STAT_P99_RATIO && (!c->lc_base || c->lc_base->lc.p99_ns == 0))) {
        NA(buf, size, c);
        return;
    }
    switch (st) {
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
CLIENT_CELL(cell_lc2_p50, true, STAT_P50)
CLIENT_CELL(cell_lc2_p99, true, STAT_P99)
CLIENT_CELL(cell_lc2_ratio, true, STAT_P99_RATIO)

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

#define T_LC_BE (1u << TABLE_LC_BE)
#define T_GROUPS (1u << TABLE_GROUPS)
#define T_PROCS (1u << TABLE_PROCS)
#define T_ALL (T_LC_BE | T_GROUPS | T_PROCS)

static const column columns[] = {
    {"Scenario", "scenario", true, T_ALL, cell_name},
    {"Status", "status", true, T_ALL, cell_status},
    {"LC P50 ms", "lc_p50_ms", false, T_ALL, cell_lc_p50},
    {"LC P99 ms", "lc_p99_ms", false, T_ALL, cell_lc_p99},
    {"LC max ms", "lc_max_ms", false, T_LC_BE, cell_lc_max},
    {"LC reqs", "lc_requests", false, T_LC_BE, cell_lc_reqs},
    {"P99 vs alone", "lc_p99_vs_alone", false, T_ALL, cell_lc_ratio},
    {"LC2 P50 ms", "lc2_p50_ms", false, T_GROUPS | T_PROCS, cell_lc2_p50},
    {"LC2 P99 ms", "lc2_p99_ms", false, T_GROUPS | T_PROCS, cell_lc2_p99},
    {"LC2 vs alone", "lc2_p99_vs_alone", false, T_GROUPS | T_PROCS, cell_lc2_ratio},
    {"BE kern/s", "be_kernels_per_s", false, T_ALL, cell_be_rate},
    {"BE busy", "be_busy_fraction", false, T_ALL, cell_be_busy},
    {"BE vs alone", "be_vs_alone", false, T_ALL, cell_be_ratio},
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])
#define CELL_LEN 48

/* Prints the rows of `table` with its columns as an aligned text table. */
static void print_table(FILE *f, const char (*cells)[NCOLUMNS][CELL_LEN], demo_table table)
{
    int width[NCOLUMNS] = {0};
    int total = 0;
    for (size_t j = 0; j < NCOLUMNS; j++) {
        if (!(columns[j].tables & (1u << table)))
            continue;
        width[j] = (int)strlen(columns[j].title);
        for (size_t i = 0; i < NSCENARIOS; i++)
            if (scenarios[i].table == table && (int)strlen(cells[i][j]) > width[j])
                width[j] = (int)strlen(cells[i][j]);
        total += width[j] + (j ? 2 : 0);
    }
    fprintf(f, "%s\n", table_titles[table]);
    for (size_t j = 0; j < NCOLUMNS; j++)
        if (columns[j].tables & (1u << table))
            fprintf(f, "%s%*s", j ? "  " : "", columns[j].left ? -width[j] : width[j],
                    columns[j].title);
    fprintf(f, "\n");
    for (int k = 0; k < total; k++)
        fputc('-', f);
    fprintf(f, "\n");
    for (size_t i = 0; i < NSCENARIOS; i++) {
        if (scenarios[i].table != table)
            continue;
        for (size_t j = 0; j < NCOLUMNS; j++)
            if (columns[j].tables & (1u << table))
                fprintf(f, "%s%*s", j ? "  " : "", columns[j].left ? -width[j] : width[j],
                        cells[i][j]);
        fprintf(f, "\n");
    }
}

/* Prints every row with every column as CSV (a cell that does not apply is empty). */
static void print_csv(FILE *f, const char (*cells)[NCOLUMNS][CELL_LEN])
{
    for (size_t j = 0; j < NCOLUMNS; j++)
        fprintf(f, "%s%s", j ? "," : "", columns[j].key);
    fprintf(f, "\n");
    for (size_t i = 0; i < NSCENARIOS; i++) {
        for (size_t j = 0; j < NCOLUMNS; j++)
            fprintf(f, "%s%s", j ? "," : "", cells[i][j]);
        fprintf(f, "\n");
    }
}

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

static void print_header(FILE *f, const options *o, const char *argv0)
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
            "  least (gpuprio maps HIP's -1, 0, 1 onto high 10, normal 0, low -10).\n"
            "  Measured window per row: [t0, t0 + %g s).\n",
            o->seconds);
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
            "\n  Compute slots are granted in FIFO ticket order; stream priority is ignored.\n"
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
    int id_w = 0, title_w = 0;
    for (size_t i = 0; i < NSCENARIOS; i++) {
        if ((int)strlen(scenarios[i].id) > id_w)
            id_w = (int)strlen(scenarios[i].id);
        if ((int)strlen(scenarios[i].title) > title_w)
            title_w = (int)strlen(scenarios[i].title);
    }
    for (size_t i = 0; i < NSCENARIOS; i++) {
        const scenario *sc = &scenarios[i];
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
        if (sc->gpuprio)
            fprintf(f, "; gpuprio");
        for (size_t j = 0; sc->env && sc->env[j]; j++)
            fprintf(f, "%s%s%s", j ? " " : ": ", sc->env[j],
                    strchr(sc->env[j], '=') ? "" : " unset");
        fprintf(f, "\n");
    }
    fprintf(f, "Options: --seconds %g --rate %g --kernels %d --lc-us %g --be-us %g\n\n", o->seconds,
            o->rate, o->kernels, o->lc_us, o->be_us);
}

/* The hardware queue an LC client (LC or LC2) shares with another stream in hwq
 * ("LC:1,LC2:2,BE:1"), or -1 when none does. */
static int lc_shared_hwq(const char *hwq)
{
    char who[MAX_ITEMS][8];
    int q[MAX_ITEMS];
    int n = parse_items(hwq, who, q, MAX_ITEMS);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && q[i] == q[j] && strncmp(who[i], "LC", 2) == 0)
                return q[i];
    return -1;
}

static void print_notes(FILE *f, const options *o, const row_result *res, const bool *ok)
{
    fprintf(f,
            "\nP99 vs alone = LC P99 / P99 of \"%s\"; LC2 vs alone = LC2 P99 / that same P99.\n"
            "BE busy = BE kernels completed in the window x %g us / (window x compute slots).\n"
            "BE vs alone = BE kernels/s / that of \"%s\" (one worker).\n",
            find_scenario(LC_BASELINE)->title, o->be_us, find_scenario(BE_BASELINE)->title);
    fprintf(f, "Per row: hardware queue of each stream (in cross-process rows, each in its own\n"
               "process's queues); in gpuprio rows, each stream's gpuprio priority, and how often\n"
               "gpuprio suspended the BE streams (whole run, all of them):\n");
    int id_w = 0;
    for (size_t i = 0; i < NSCENARIOS; i++)
        if ((int)strlen(scenarios[i].id) > id_w)
            id_w = (int)strlen(scenarios[i].id);
    for (size_t i = 0; i < NSCENARIOS; i++) {
        const scenario *sc = &scenarios[i];
        const row_result *r = &res[i];
        fprintf(f, "  %-*s  %s", id_w, sc->id, ok[i] ? r->hwq : "FAILED");
        if (ok[i] && sc->gpuprio) {
            fprintf(f, "  priorities %s", r->prio);
            if (sc->be_workers)
                fprintf(f, "  BE suspended %" PRIu64 " times", r->be_suspensions);
        }
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (ok[i] && !scenarios[i].split && lc_shared_hwq(res[i].hwq) >= 0)
            fprintf(
                f,
                "NOTE: in \"%s\" an LC client shares hardware queue %d with another stream,\n"
                "  so it also waits for that stream's queued kernels (raise HIPSIM_HW_QUEUES).\n",
                scenarios[i].title, lc_shared_hwq(res[i].hwq));
    uint64_t period_ns = (uint64_t)(1e9 / o->rate);
    for (size_t i = 0; i < NSCENARIOS; i++) {
        const client_result *cl[2] = {scenarios[i].lc ? &res[i].lc : NULL,
                                      scenarios[i].lc2 ? &res[i].lc2 : NULL};
        for (int k = 0; k < 2; k++)
            if (ok[i] && cl[k] && cl[k]->max_late_ns > period_ns)
                fprintf(f,
                        "NOTE: in \"%s\" an %s request started %.1f ms after it was due: %s does\n"
                        "  not keep up with %g requests/s there, so its backlog (and its\n"
                        "  percentiles) grow with --seconds.\n",
                        scenarios[i].title, k ? "LC2" : "LC", (double)cl[k]->max_late_ns / 1e6,
                        k ? "LC2" : "LC", o->rate);
    }
}

static volatile sig_atomic_t interrupted; /* the signal that asked the parent to stop */

static void on_signal(int sig)
{
    interrupted = sig;
}

/* Removes the board directory and the files in it (boards, and any half-made one). */
static void remove_board_dir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    if (rmdir(dir) != 0)
        fprintf(stderr, "gpuprio-demo: cannot remove %s: %s\n", dir, strerror(errno));
}

/* Runs every row (cross-process ones on a device and board of their own, removed afterwards),
 * then prints the tables. */
static int run_all(const options *o, const char *argv0)
{
    FILE *info = o->csv ? stderr : stdout;
    print_header(info, o, argv0);
    fflush(info);

    /* Writing t0 to a child that died must fail the row, not kill the parent. An interrupted
     * demo still removes what it made: the children get SIGINT too and the row ends at once. */
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char board_dir[PATH_MAX];
    snprintf(board_dir, sizeof board_dir, "%s/gpuprio-demo-XXXXXX", tmp);
    if (!mkdtemp(board_dir)) {
        fprintf(stderr, "gpuprio-demo: cannot create a directory in %s: %s\n", tmp,
                strerror(errno));
        return 1;
    }
    char board_env[PATH_MAX + 32];
    snprintf(board_env, sizeof board_env, "GPUPRIO_BOARD_DIR=%s", board_dir);
    unsigned devices = env_uint("HIPSIM_DEVICES", 1);

    static row_result res[NSCENARIOS];
    bool ok[NSCENARIOS];
    bool all_ok = true;
    for (size_t i = 0; i < NSCENARIOS && !interrupted; i++) {
        char shared[64];
        snprintf(shared, sizeof shared, "gpuprio-demo-%d-%zu", (int)getpid(), i);
        char shared_env[80];
        snprintf(shared_env, sizeof shared_env, "HIPSIM_SHARED=%s", shared);
        const char *const more[] = {shared_env, board_env, NULL};
        ok[i] = run_row(&scenarios[i], o, argv0, scenarios[i].split ? more : NULL, &res[i]);
        all_ok = all_ok && ok[i];
        for (unsigned d = 0; scenarios[i].split && d < devices; d++) {
            char segment[128];
            snprintf(segment, sizeof segment, "/hipsim-%u-%s-%u", (unsigned)getuid(), shared, d);
            (void)shm_unlink(segment);
        }
    }
    remove_board_dir(board_dir);
    if (interrupted) {
        signal(interrupted, SIG_DFL);
        raise(interrupted);
        return 1;
    }

    const row_result *lc_base = NULL, *be_base = NULL;
    for (size_t i = 0; i < NSCENARIOS; i++) {
        if (ok[i] && strcmp(scenarios[i].id, LC_BASELINE) == 0)
            lc_base = &res[i];
        if (ok[i] && strcmp(scenarios[i].id, BE_BASELINE) == 0)
            be_base = &res[i];
    }
    static char cells[NSCENARIOS][NCOLUMNS][CELL_LEN];
    for (size_t i = 0; i < NSCENARIOS; i++) {
        cell_ctx c = {&scenarios[i], ok[i] ? &res[i] : NULL, lc_base, be_base, o->csv};
        for (size_t j = 0; j < NCOLUMNS; j++)
            columns[j].cell(cells[i][j], CELL_LEN, &c);
    }
    const char(*table_cells)[NCOLUMNS][CELL_LEN] = (const char(*)[NCOLUMNS][CELL_LEN])cells;
    if (o->csv) {
        print_csv(stdout, table_cells);
    } else {
        for (int t = 0; t < NTABLES; t++) {
            if (t)
                fprintf(stdout, "\n");
            print_table(stdout, table_cells, (demo_table)t);
        }
    }
    print_notes(info, o, res, ok);
    if (!all_ok)
        fprintf(stderr, "gpuprio-demo: at least one row FAILED (see the messages above)\n");
    return all_ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    options o;
    parse_options(argc, argv, &o);
    if (o.scenario) {
        /* Timer slack (50 us by default) would delay every LC arrival, which sleeps until its
         * due time; the simulator sets its own kernel threads' slack itself. */
        (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        return run_scenario(find_scenario(o.scenario), &o);
    }
    return run_all(&o, argv[0]);
}
