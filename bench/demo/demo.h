/*
 * demo.h - gpuprio-demo: why GPU streams need priorities that the device honours, and what
 * gpuprio does about it. The types and functions the demo's files share.
 *
 * What it shows. A latency-critical (LC) service issues requests at a fixed rate; each request is a
 * few short kernels on the service's own stream. Next to it, one or more best-effort (BE) jobs
 * (training, batch inference) each keep the device saturated with long kernels on their own
 * stream. Alone, an LC request takes about the sum of its kernels. Sharing the device natively, it
 * takes longer: the simulated device dispatches as AMD's does (docs/simulator.md), the most
 * urgent waiting hardware queue first, but it never preempts a running kernel, and among queues
 * of one priority it goes in the order they asked, so every LC kernel waits for the BE kernel
 * that runs, and, where the streams did not ask for different priorities, for those queued
 * ahead of it too. The same workloads then run under gpuprio (LD_PRELOAD of
 * libgpuprio-hip.so, HPF policy: docs/scheduler.md), with its default settings (an in-flight
 * budget of GPU time, learned per kernel) and with in-flight windows that count commands only
 * (GPUPRIO_WINDOW of 1, 2, 4 and 8 with GPUPRIO_WINDOW_US=0), which trade the LC tail against BE
 * throughput. A second table has three priority groups, like the field report: the LC client
 * (high), a second client LC2 with the same requests (normal), and a BE worker (low). A third
 * table runs the same workloads the way they are deployed, as separate processes on one device
 * that the processes share, where gpuprio schedules across them through its board
 * (docs/board.md). A fourth table pits the hardware levers (stream priorities, reserved CUs:
 * docs/configuration.md) against admission, next to BE kernels as wide as the device and 2 or
 * 8 ms long, which only reserved CUs keep from the LC tail, in one process and across two (Level 1
 * and Level 2 there).
 *
 * How. Everything runs on the simulated HIP device of tests/sim (no GPU): kernels are host
 * functions that return their simulated duration. The program never calls gpuprio: like an
 * unmodified application it only creates its streams, with priorities or without. Each row of the
 * tables is a scenario, and a scenario is data; the files are split along that line, so that adding
 * or changing a row touches the data only, and measuring never mixes with printing:
 *   scenarios.c  the rows: workloads, stream priorities, gpuprio or not and its settings,
 *                simulator settings, kernel shapes, baselines, the table each belongs to;
 *   workload.c   the child: runs one row's workloads (or one of them) in a process and prints
 *                its result as one "RESULT_TAG key=value ..." line;
 *   result.c     that line, both ways, and adding up the lines of a row's processes;
 *   rows.c       the parent: runs each row in processes of its own and collects their lines;
 *   report.c     the header, the tables (or CSV) and the notes, from the collected results;
 *   picture.c    the SVG of the LC client's latency distribution in the headline rows;
 *   hoststall.c  how long the host kept a row's threads from running, for the client;
 *   settings.c   settings from the environment (the simulator's), read by both sides;
 *   main.c       the command line: the headline rows (default), all of them (--all), or one
 *                row here (--scenario).
 * Each row runs several times (rounds), the rows taking turns, and its figures pool them. Since
 * the device is host threads, a busy host slows requests down too: requests it held up are told
 * apart (hoststall.c) and left out of the percentiles, and counted.
 * By default the demo runs only the rows that carry a headline label (and the rows their ratios
 * refer to), prints them as one short table and draws the picture; --all runs every row and
 * prints the full description, the four tables and the notes.
 * The child and the parent are the same program (/proc/self/exe --scenario ID ...): a row's
 * environment (LD_PRELOAD, GPUPRIO_* and simulator settings) can only be set before a process
 * starts, and the shim and the simulator read theirs once.
 */
#ifndef GPUPRIO_DEMO_H
#define GPUPRIO_DEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The shim preloaded into gpuprio rows: an absolute path, given by bench/CMakeLists.txt. */
#ifndef GPUPRIO_SHIM_PATH
#error "GPUPRIO_SHIM_PATH (the absolute path of libgpuprio-hip.so) must be defined"
#endif
/* Where the default run writes its picture (--svg PATH elsewhere): given by bench/CMakeLists.txt.
 */
#ifndef GPUPRIO_DEMO_SVG
#error "GPUPRIO_DEMO_SVG (the default path of the picture) must be defined"
#endif

#define BE_INFLIGHT 8                    /* BE kernels each worker keeps in flight */
#define BE_LEAD_NS (50ull * 1000 * 1000) /* BE starts this long before the window opens */
#define LC2_OFFSET_NS (500ull * 1000)    /* LC2's requests are due this long after LC's */
/* Cross-process rows: time from every process being ready to BE's start (t0 - BE_LEAD_NS), for
 * the parent's t0 to reach the children through their stdin, even on a busy machine. */
#define PROCS_START_NS (20ull * 1000 * 1000)
#define MAX_BE_WORKERS 8
#define DEMO_MAX_ROUNDS 20               /* --rounds */
#define MAX_ITEMS (2 + MAX_BE_WORKERS)   /* streams (and processes) of a row: LC, LC2, BE ... */
#define RESULT_TAG "GPUPRIO_DEMO_RESULT" /* first word of the child's result line */
#define LC_BASELINE "lc-alone" /* the row LC (and LC2) latency ratios refer to by default */
#define BE_BASELINE "be-alone" /* the row BE throughput ratios refer to by default */

/* ---- scenarios (scenarios.c) ---- */

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
    TABLE_LEVERS, /* long BE kernels on 8 CUs: the hardware levers against admission */
    NTABLES
} demo_table;

/* The workloads one child runs: all of its row's, or, in a cross-process row, one of them. */
typedef enum demo_role { ROLE_ALL, ROLE_LC, ROLE_LC2, ROLE_BE, NROLES } demo_role;

/* One row. Every field left out (zero, NULL) means what the rows had before it existed, so a
 * row names only what sets it apart. */
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
    /* Cross-process rows: entries of env's form for the processes of one role only, applied after
     * env (for example each process's GPUPRIO_PRIORITY, where GPUPRIO_STREAM_PRIORITIES, which
     * counts a process's own streams, cannot tell the processes apart). */
    const char *const *role_env[NROLES];
    /* NULL, or simulator settings such as "HIPSIM_COMPUTE_SLOTS=8", in the form of env and
     * applied (and checked) like it, in native and gpuprio rows alike, and in every process of a
     * cross-process row. Kept apart from env, which is gpuprio's configuration: the ratio
     * columns compare only rows with the same simulator settings. */
    const char *const *sim_env;
    unsigned lc_blocks; /* grid.x of each LC and LC2 kernel; 0: 1 */
    unsigned be_blocks; /* grid.x of each BE kernel; 0: 1 */
    unsigned be_us;     /* simulated duration of a BE kernel, microseconds; 0: --be-us */
    /* The rows the ratio columns refer to, by id; NULL: LC_BASELINE, BE_BASELINE. A ratio is
     * "-" where the baseline ran other kernels for that workload (blocks, BE duration) or other
     * simulator settings (sim_env): then give the row a baseline that matches. */
    const char *lc_baseline; /* for "P99 vs alone" and "LC2 vs alone" */
    const char *be_baseline; /* for "BE vs alone" */
    /* Streams are created blocking (hipStreamCreate, or hipStreamCreateWithPriority with
     * hipStreamDefault) instead of non-blocking: only such streams can be given a CU mask
     * (GPUPRIO_CU_RESERVE). The demo puts nothing on the null stream, so nothing else changes. */
    bool blocking;
    /* The row's label in the default (headline) table; NULL: the row runs only with --all (or as
     * a baseline of a headline row, then unshown). */
    const char *headline;
    /* Whether the picture draws the row's LC latency distribution (a headline row with LC). */
    bool curve;
} scenario;

extern const scenario demo_scenarios[];
extern const size_t demo_nscenarios;
extern const char *const demo_table_titles[NTABLES];
extern const char *const demo_table_names[NTABLES]; /* the words of --table */

/* The row with this id, or NULL. */
const scenario *demo_find_scenario(const char *id);
/* The row a row's LC (be false) or BE (be true) ratios refer to, or NULL if there is none. */
const scenario *demo_baseline_row(const scenario *sc, bool be);

extern const char *const demo_role_names[NROLES]; /* (rows.c) the words of --role */

/* ---- options (main.c) ---- */

typedef struct options {
    double seconds; /* measured window per row and round */
    int rounds;     /* times each row runs, the rows taking turns; its figures pool them */
    double rate;    /* LC requests per second */
    int kernels;    /* kernels per LC request */
    double lc_us;   /* simulated duration of an LC kernel */
    double be_us;   /* simulated duration of a BE kernel (rows that set no be_us) */
    bool csv;
    const char *scenario; /* run this one row here and print its result line */
    demo_role role;       /* with scenario: the workload of a cross-process row to run here */
    int row_fd;           /* with role: the row's shared page (row_page), inherited; -1: none */
    int table;            /* --table: only this table's rows and their baselines; -1: all */
    bool all;             /* --all (or --table, --csv): every row, the full tables; else the
                           * headline rows and their short table */
    const char *svg;      /* where to write the picture; NULL: not at all */
} options;

/* Whether row i is reported: a headline row, or with --all a row of --table's (or any) table. */
bool demo_row_shown(const options *o, size_t i);
/* Whether row i runs: it is shown, or a shown row's ratios refer to it. */
bool demo_row_selected(const options *o, size_t i);

/* ---- settings (settings.c) ---- */

/* A setting's value (an environment variable's, or NULL) as a number in 1..65535, else dflt. */
unsigned demo_setting_uint(const char *value, unsigned dflt);

/* The grid.x of a kernel from a row's lc_blocks or be_blocks. */
static inline unsigned demo_blocks(unsigned blocks)
{
    return blocks ? blocks : 1;
}

/* The simulated duration of the row's BE kernels, microseconds. */
static inline double demo_be_us(const scenario *sc, const options *o)
{
    return sc->be_us ? (double)sc->be_us : o->be_us;
}

/* ---- results (result.c) ---- */

/* A request counts as stalled by the host when the host kept the threads it depends on from
 * running (or ran the simulated kernels late) for more than this in all, while it was under way
 * (hoststall.c); or when it started late because the request before it was stalled so. Above
 * what a quiet 2-core machine holds a request up by (up to 0.3 ms alone, 0.5 ms where LC, LC2
 * and BE share the 2 CPUs: 99th percentiles), below the stalls that moved P99s (1-8 ms). */
#define DEMO_STALL_NS (500ull * 1000)
/* Past this share of a client's requests stalled, leaving them out would favour its shorter
 * requests too much (a longer one is more likely to be under way when the host stalls): the
 * client's percentiles are not given (a busy machine). */
#define DEMO_STALLED_MAX_PCT 25
/* Latencies a row keeps per client, over all its rounds: all of them up to this many, else every
 * k-th request's (rows.c asks each round for at most its share). */
#define DEMO_LAT_MAX 6000

/* One client's requests due in the window (all of them completed), over a row's processes and
 * rounds. The percentiles are over the requests the host did not stall: the device's effect,
 * which is what the demo is about; the stalled ones are counted and kept apart. */
typedef struct client_result {
    uint64_t reqs;        /* requests due in the window(s) */
    uint64_t stalled;     /* of them, the ones the host stalled (DEMO_STALL_NS) */
    uint64_t max_late_ns; /* worst delay between a request's due time and its first launch,
                           * among those the host did not stall: the client fell behind */
    /* From the latencies (demo_finish_result): */
    uint64_t p50_ns, p99_ns, max_ns; /* over the requests the host did not stall; 0: none */
    uint64_t p99_all_ns;             /* over all of them, stalled ones included */
    /* Latencies (ns) of the requests the host did not stall (kept) and of those it did
     * (stalled): of every request, or of every k-th one (the same k for both lists). Sorted once
     * finished. */
    uint32_t nkept, nstalled_lat;
    uint64_t kept_ns[DEMO_LAT_MAX];
    uint64_t stalled_ns[DEMO_LAT_MAX];
} client_result;

#define RESULT_STRING_LEN 96 /* size of each text field */
/* The picture draws at most this many points per curve (evenly spaced in rank). */
#define DEMO_LAT_POINTS 1000

/* What one row measured: carried from the child to the parent as "key=value" words, then added
 * up over the row's processes and rounds. */
typedef struct row_result {
    uint64_t window_ns;      /* measured window (all rounds) */
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

void demo_print_result_line(FILE *f, const scenario *sc, row_result *r);
/* Parses a child's output (modified): finds the result line for `id`; false if absent or
 * malformed. */
bool demo_parse_result_line(char *text, const char *id, row_result *r);
/* Adds one process's result of a cross-process row (round false), or one round's result of a
 * row (round true), to the row's. */
void demo_merge_result(row_result *into, row_result *part, bool round);
/* Whether a client's percentiles stand: it ran requests, and the host stalled at most
 * DEMO_STALLED_MAX_PCT of them. */
bool demo_client_measured(const client_result *c);
/* Sorts the latencies the row collected and works out its percentiles. */
void demo_finish_result(row_result *r);
/* Nearest-rank percentile of sorted[0..n): the smallest value with at least pct% of the samples
 * at or below it. 0 when n is 0. */
uint64_t demo_percentile(const uint64_t *sorted, size_t n, unsigned pct);
/* Appends "WHO:value" to a comma-separated list (hwq, prio). */
void demo_append_item(char *buf, size_t size, const char *who, int value);
/* Splits a list "WHO:value,WHO:value" into who[] and v[]; returns the count. */
int demo_parse_items(const char *list, char who[][8], int *v, int max);
/* Whether the gpuprio priorities in prio ("LC:10,LC2:0,BE:-10") are distinct and in the order
 * LC > LC2 > BE. */
bool demo_prio_ordered(const char *prio);

/* ---- host stalls (hoststall.c) ---- */

/* What the processes of a cross-process row share (a memfd the parent maps, --row-fd): who they
 * are, for each other's host stalls, and the simulator's lateness, counted in one place. */
#define ROW_PAGE_MAGIC 0x6770646d6f726f77ull /* "gpdmorow" */
typedef struct row_page {
    uint64_t magic;
    uint64_t late_ns; /* hipsimCountLatenessIn: every process of the row counts here */
    int32_t npids;    /* written by the parent before it gives t0 */
    int32_t pids[MAX_ITEMS];
} row_page;

#define PROBE_MAX_TASKS 128
/* How long the host kept a row's threads from running, for the client that measures. */
typedef struct host_probe {
    int npids;
    int pids[MAX_ITEMS];
    int ntasks;
    uint64_t forgotten_ns; /* what tasks counted before they named themselves out of it */
    struct probe_task {
        int pid, tid;
        int comm_fd, stat_fd;  /* both -1 once the task is known not to count */
        uint64_t run_delay_ns; /* its last reading */
    } task[PROBE_MAX_TASKS];
} host_probe;

/* Watches the tasks of these processes (0 of them: this process). */
void demo_probe_init(host_probe *p, const int *pids, int npids);
/* What the host has withheld so far (ns): the counted tasks' run delay, the simulator's
 * lateness (hipsimLateNs) and the time this process did not run. Only its growth means
 * something. */
uint64_t demo_probe_read(host_probe *p);
void demo_probe_close(host_probe *p);

/* ---- running ---- */

/* (workload.c) Runs the row, or with o->role one workload of a cross-process row, in this
 * process and prints its result line on stdout; exits on failure. */
int demo_run_scenario(const scenario *sc, const options *o);

/* (rows.c) Runs every row in processes of its own: ok[i] and res[i] for demo_scenarios[i].
 * False if it could not run them at all; an interrupted run ends the program by its signal. */
bool demo_run_rows(const options *o, const char *argv0, row_result *res, bool *ok);

/* ---- reporting (report.c) ---- */

/* What runs, the settings and the rows: before the rows run. */
void demo_print_header(FILE *f, const options *o, const char *argv0);
/* The tables (or, with --csv, one CSV) of every row's results. */
void demo_print_tables(FILE *f, const options *o, const row_result *res, const bool *ok);
/* What the columns are relative to, and per row: queues, priorities, suspensions, warnings. */
void demo_print_notes(FILE *f, const options *o, const row_result *res, const bool *ok);
/* The default run's few lines: what runs (before the rows), then the headline table and its
 * legend (after). */
void demo_print_brief_header(FILE *f, const options *o);
void demo_print_headline(FILE *f, const options *o, const row_result *res, const bool *ok);

/* (picture.c) Writes the SVG of the LC latency distributions of the rows with `curve` that ran
 * and succeeded to o->svg; false (and says why on stderr) if it could not. */
bool demo_write_picture(const options *o, const row_result *res, const bool *ok);

#endif
