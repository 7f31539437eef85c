/*
 * demo.c - gpuprio-demo: why GPU streams need priorities that the device honours.
 *
 * What it shows. A latency-critical (LC) service issues requests at a fixed rate; each request is a
 * few short kernels on the service's own stream. Next to it, one or more best-effort (BE) jobs
 * (training, batch inference) each keep the device saturated with long kernels on their own
 * stream. Alone, an LC request takes about the sum of its kernels. Sharing the device natively, it
 * takes many times longer: the device grants compute to whichever hardware queue asked first
 * (docs/simulator.md: compute slots in FIFO ticket order, stream priority ignored), so every LC
 * kernel waits behind the BE kernels queued ahead of it, even though the LC stream was created
 * with the greatest priority. That gap is what gpuprio (an LD_PRELOAD library) exists to close.
 *
 * How. Everything runs on the simulated HIP device of tests/sim (no GPU): kernels are host
 * functions that return their simulated duration. Each scenario ("row") is data: which workloads
 * run, the stream priorities they ask for, and environment variables for the row's process. The
 * parent re-executes itself (/proc/self/exe --scenario ID ...) once per row, so a row can run with
 * a different environment (for gpuprio rows: LD_PRELOAD), reads the child's one machine-readable
 * result line, and prints one table. `--scenario ID` alone runs one row and prints that line.
 *
 * Measurement. LC arrivals are open-loop: request i is due at t0 + i/rate whatever happened
 * before; a request that starts late (because the previous one was slow) counts its lateness, so
 * latency = completion (hipStreamSynchronize returned, hipsimNowNs) - due time. Percentiles are
 * nearest-rank over all requests due in the window [t0, t0 + seconds). BE workers start 50 ms
 * before t0 so the device is saturated when the window opens, keep at most BE_INFLIGHT kernels in
 * flight (a ring of events), run until the window closes and the LC workload has finished, and
 * count the kernels that completed inside the window.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hip_compat.h"
#include "hipsim.h"

#define BE_INFLIGHT 8                    /* BE kernels each worker keeps in flight */
#define BE_LEAD_NS (50ull * 1000 * 1000) /* BE starts this long before the window opens */
#define MAX_BE_WORKERS 8
#define RESULT_TAG "GPUPRIO_DEMO_RESULT" /* first word of the child's result line */
#define LC_BASELINE "lc-alone"           /* the row LC latency ratios refer to */
#define BE_BASELINE "be-alone"           /* the row BE throughput ratios refer to */

/* ---------------------------------------------------------------------------------------------
 * Scenarios: one table row each. Add gpuprio rows here, e.g.
 *   static const char *const gpuprio_env[] = {"LD_PRELOAD=/path/to/libgpuprio.so", NULL};
 *   {"lc-2be-gpuprio", "LC + 2 BE, gpuprio", true, 2, PRIO_GREATEST, PRIO_LEAST, gpuprio_env},
 * ------------------------------------------------------------------------------------------- */

typedef enum demo_prio {
    PRIO_DEFAULT,  /* hipStreamCreateWithFlags: no priority requested */
    PRIO_GREATEST, /* hipStreamCreateWithPriority with the device's greatest (most urgent) */
    PRIO_LEAST     /* hipStreamCreateWithPriority with the device's least */
} demo_prio;

typedef struct scenario {
    const char *id;         /* --scenario ID */
    const char *title;      /* first column of the table */
    bool lc;                /* run the latency-critical workload */
    int be_workers;         /* saturating best-effort workers (0..MAX_BE_WORKERS) */
    demo_prio lc_prio;      /* priority the LC stream asks for */
    demo_prio be_prio;      /* priority each BE stream asks for */
    const char *const *env; /* "NAME=VALUE" set in the row's process; NULL-terminated */
} scenario;

static const char *const no_env[] = {NULL};

static const scenario scenarios[] = {
    {"lc-alone", "LC alone", true, 0, PRIO_GREATEST, PRIO_LEAST, no_env},
    {"be-alone", "BE alone", false, 1, PRIO_GREATEST, PRIO_LEAST, no_env},
    {"lc-1be", "LC + 1 BE", true, 1, PRIO_GREATEST, PRIO_LEAST, no_env},
    {"lc-2be", "LC + 2 BE", true, 2, PRIO_GREATEST, PRIO_LEAST, no_env},
};
#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

static const char *prio_name(demo_prio p)
{
    switch (p) {
    case PRIO_GREATEST:
        return "greatest priority";
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
} options;

static void usage(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s [--seconds S] [--rate R] [--kernels K] [--lc-us US] [--be-us US] [--csv]\n"
            "       %s --scenario ID [same options]   (run one row, print its result line)\n"
            "  --seconds S   measured window of each row (default 2)\n"
            "  --rate R      LC requests per second, open-loop (default 100)\n"
            "  --kernels K   kernels per LC request (default 3)\n"
            "  --lc-us US    simulated duration of an LC kernel in microseconds (default 250)\n"
            "  --be-us US    simulated duration of a BE kernel in microseconds (default 1000)\n"
            "  --csv         print the table as CSV on stdout (the description goes to stderr)\n"
            "rows:",
            argv0, argv0);
    for (size_t i = 0; i < NSCENARIOS; i++)
        fprintf(f, " %s", scenarios[i].id);
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
     * with --seconds. */
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

typedef struct row_result {
    uint64_t window_ns; /* measured window */
    uint64_t slots;     /* compute slots of the device (HIPSIM_COMPUTE_SLOTS) */
    uint64_t lc_reqs;   /* LC requests due in the window, all completed */
    uint64_t lc_p50_ns;
    uint64_t lc_p99_ns;
    uint64_t lc_max_ns;
    uint64_t lc_max_late_ns; /* worst delay between a request's due time and its first launch */
    uint64_t be_kernels;     /* BE kernels (all workers) completed inside the window */
    uint64_t be_busy_ns;     /* be_kernels x simulated BE kernel duration */
    char hwq[96];            /* stream -> hardware queue, e.g. "LC:1,BE:2,BE:3" */
} row_result;

static const struct {
    const char *key;
    size_t offset;
} result_fields[] = {
    {"window_ns", offsetof(row_result, window_ns)},
    {"slots", offsetof(row_result, slots)},
    {"lc_reqs", offsetof(row_result, lc_reqs)},
    {"lc_p50_ns", offsetof(row_result, lc_p50_ns)},
    {"lc_p99_ns", offsetof(row_result, lc_p99_ns)},
    {"lc_max_ns", offsetof(row_result, lc_max_ns)},
    {"lc_max_late_ns", offsetof(row_result, lc_max_late_ns)},
    {"be_kernels", offsetof(row_result, be_kernels)},
    {"be_busy_ns", offsetof(row_result, be_busy_ns)},
};
#define NRESULT_FIELDS (sizeof result_fields / sizeof result_fields[0])

static uint64_t *result_field(row_result *r, size_t i)
{
    return (uint64_t *)(void *)((char *)r + result_fields[i].offset);
}

static void print_result_line(FILE *f, const scenario *sc, row_result *r)
{
    fprintf(f, RESULT_TAG " scenario=%s", sc->id);
    for (size_t i = 0; i < NRESULT_FIELDS; i++)
        fprintf(f, " %s=%" PRIu64, result_fields[i].key, *result_field(r, i));
    fprintf(f, " hwq=%s\n", r->hwq[0] ? r->hwq : "-");
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
            if (strcmp(w, "scenario") == 0) {
                id_ok = strcmp(val, id) == 0;
            } else if (strcmp(w, "hwq") == 0) {
                snprintf(r->hwq, sizeof r->hwq, "%s", val);
            } else {
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
    uint64_t t0, t_end;  /* the measured window */
    bool lc;             /* an LC workload runs (BE then also waits for it to finish) */
    atomic_bool lc_done; /* the LC workload completed all its requests */
    atomic_uint_fast64_t be_kernels_in_window;
    uint64_t *lat; /* LC latencies, lat_cap entries; written by the LC thread only */
    size_t lat_cap;
    size_t lc_reqs;          /* written by the LC thread, read after join */
    uint64_t lc_max_late_ns; /* likewise */
} run_ctx;

typedef struct worker {
    run_ctx *ctx;
    hipStream_t stream;
    uint64_t tag;
} worker;

static void *lc_thread(void *arg)
{
    worker *w = arg;
    run_ctx *c = w->ctx;
    size_t i = 0;
    for (;; i++) {
        uint64_t due = c->t0 + (uint64_t)((double)i * c->period_ns);
        if (due >= c->t_end || i >= c->lat_cap)
            break;
        sleep_until(due); /* returns at once when the previous request made this one late */
        uint64_t start = hipsimNowNs();
        if (start > due && start - due > c->lc_max_late_ns)
            c->lc_max_late_ns = start - due;
        for (int k = 0; k < c->kernels; k++)
            launch_kernel(c->lc_fn, w->stream, c->lc_ns, w->tag);
        CHECK(hipStreamSynchronize(w->stream));
        c->lat[i] = hipsimNowNs() - due;
    }
    c->lc_reqs = i;
    atomic_store(&c->lc_done, true);
    return NULL;
}

static void *be_thread(void *arg)
{
    worker *w = arg;
    run_ctx *c = w->ctx;
    hipEvent_t ring[BE_INFLIGHT];
    size_t head = 0, inflight = 0;
    uint64_t in_window = 0;
    for (size_t i = 0; i < BE_INFLIGHT; i++)
        CHECK(hipEventCreateWithFlags(&ring[i], hipEventDisableTiming));
    sleep_until(c->t0 - BE_LEAD_NS);
    for (;;) {
        bool stop = hipsimNowNs() >= c->t_end && (!c->lc || atomic_load(&c->lc_done));
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
                                          p == PRIO_GREATEST ? greatest : least));
    return s;
}

static void append_hwq(char *buf, size_t size, const char *who, hipStream_t s)
{
    size_t len = strlen(buf);
    if (len < size)
        snprintf(buf + len, size - len, "%s%s:%d", len ? "," : "", who, hipsimStreamHwQueue(s));
}

static int run_scenario(const scenario *sc, const options *o)
{
    current_scenario = sc->id;
    /* Watchdog: a hung runtime must not hang the parent (and CI) forever. */
    alarm((unsigned)(120 + 10 * o->seconds));

    if (sc->be_workers < 0 || sc->be_workers > MAX_BE_WORKERS)
        die("bad scenario: be_workers out of range");
    int ndev = 0, least = 0, greatest = 0;
    CHECK(hipGetDeviceCount(&ndev));
    if (ndev < 1)
        die("no HIP device");
    CHECK(hipSetDevice(0));
    CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));

    static const size_t arg_sizes[2] = {sizeof(uint64_t), sizeof(uint64_t)};
    static run_ctx c; /* static: large, and zero-initialised atomics */
    c.lc_fn = hipsimRegisterKernel("gpuprio_demo_lc", demo_kernel, 2, arg_sizes);
    c.be_fn = hipsimRegisterKernel("gpuprio_demo_be", demo_kernel, 2, arg_sizes);
    if (!c.lc_fn || !c.be_fn)
        die("hipsimRegisterKernel failed");
    c.lc_ns = us_to_ns(o->lc_us);
    c.be_ns = us_to_ns(o->be_us);
    c.kernels = o->kernels;
    c.period_ns = 1e9 / o->rate;
    c.lc = sc->lc;
    atomic_init(&c.lc_done, false);
    atomic_init(&c.be_kernels_in_window, 0);
    uint64_t window_ns = (uint64_t)(o->seconds * 1e9);
    c.lat_cap = (size_t)(o->seconds * o->rate) + 2;
    c.lat = calloc(c.lat_cap, sizeof *c.lat);
    if (!c.lat)
        die("out of memory");

    /* Streams in a fixed order, before any thread runs, so the hardware-queue mapping
     * (round-robin in creation order) is the same in every run. */
    worker lc_w = {.ctx = &c, .tag = 0};
    worker be_w[MAX_BE_WORKERS];
    row_result r;
    memset(&r, 0, sizeof r);
    if (sc->lc) {
        lc_w.stream = create_stream(sc->lc_prio, least, greatest);
        append_hwq(r.hwq, sizeof r.hwq, "LC", lc_w.stream);
    }
    for (int i = 0; i < sc->be_workers; i++) {
        be_w[i] = (worker){.ctx = &c, .tag = (uint64_t)i + 1};
        be_w[i].stream = create_stream(sc->be_prio, least, greatest);
        append_hwq(r.hwq, sizeof r.hwq, "BE", be_w[i].stream);
    }

    /* Warm-up: one short kernel per stream, so first-use costs stay out of the window. */
    if (sc->lc) {
        launch_kernel(c.lc_fn, lc_w.stream, 1000, 0);
        CHECK(hipStreamSynchronize(lc_w.stream));
    }
    for (int i = 0; i < sc->be_workers; i++) {
        launch_kernel(c.be_fn, be_w[i].stream, 1000, be_w[i].tag);
        CHECK(hipStreamSynchronize(be_w[i].stream));
    }

    c.t0 = hipsimNowNs() + BE_LEAD_NS + 5ull * 1000 * 1000;
    c.t_end = c.t0 + window_ns;

    pthread_t lc_tid, be_tid[MAX_BE_WORKERS];
    for (int i = 0; i < sc->be_workers; i++)
        if (pthread_create(&be_tid[i], NULL, be_thread, &be_w[i]) != 0)
            die("pthread_create failed");
    if (sc->lc && pthread_create(&lc_tid, NULL, lc_thread, &lc_w) != 0)
        die("pthread_create failed");
    if (sc->lc)
        pthread_join(lc_tid, NULL);
    for (int i = 0; i < sc->be_workers; i++)
        pthread_join(be_tid[i], NULL);

    if (sc->lc)
        CHECK(hipStreamDestroy(lc_w.stream));
    for (int i = 0; i < sc->be_workers; i++)
        CHECK(hipStreamDestroy(be_w[i].stream));
    CHECK(hipDeviceSynchronize());

    qsort(c.lat, c.lc_reqs, sizeof *c.lat, cmp_u64);
    r.window_ns = window_ns;
    r.slots = env_uint("HIPSIM_COMPUTE_SLOTS", 1);
    r.lc_reqs = c.lc_reqs;
    r.lc_p50_ns = percentile_nearest_rank(c.lat, c.lc_reqs, 50);
    r.lc_p99_ns = percentile_nearest_rank(c.lat, c.lc_reqs, 99);
    r.lc_max_ns = percentile_nearest_rank(c.lat, c.lc_reqs, 100);
    r.lc_max_late_ns = c.lc_max_late_ns;
    r.be_kernels = atomic_load(&c.be_kernels_in_window);
    r.be_busy_ns = r.be_kernels * c.be_ns;
    free(c.lat);
    print_result_line(stdout, sc, &r);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The parent: one child process per row, then the table.
 * ------------------------------------------------------------------------------------------- */

static size_t env_name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* environ with the row's variables set (replacing any of the same name). Caller frees. */
static char **row_environment(const scenario *sc)
{
    size_t n = 0, extra = 0;
    while (environ[n])
        n++;
    while (sc->env[extra])
        extra++;
    char **envp = calloc(n + extra + 1, sizeof *envp);
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool overridden = false;
        for (size_t j = 0; j < extra && !overridden; j++) {
            size_t len = env_name_len(sc->env[j]);
            overridden =
                env_name_len(environ[i]) == len && strncmp(environ[i], sc->env[j], len) == 0;
        }
        if (!overridden)
            envp[k++] = environ[i];
    }
    for (size_t j = 0; j < extra; j++)
        envp[k++] = (char *)(uintptr_t)sc->env[j];
    envp[k] = NULL;
    return envp;
}

/* Runs one row in a child process; true with *r filled in if it succeeded. */
static bool run_row(const scenario *sc, const options *o, const char *argv0, row_result *r)
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
                    "--lc-us", lcus, "--be-us", beus, NULL};
    /* clang-format on */
    char **envp = row_environment(sc);
    int fds[2];
    if (!envp || pipe(fds) != 0) {
        perror("gpuprio-demo: pipe");
        free(envp);
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("gpuprio-demo: fork");
        close(fds[0]);
        close(fds[1]);
        free(envp);
        return false;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls between fork and exec. */
        close(fds[0]);
        if (dup2(fds[1], STDOUT_FILENO) < 0)
            _exit(127);
        close(fds[1]);
        execve("/proc/self/exe", argv, envp);
        static const char msg[] = "gpuprio-demo: execve /proc/self/exe failed\n";
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)ignored;
        _exit(127);
    }
    close(fds[1]);
    free(envp);

    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    bool ok = out != NULL;
    while (ok) {
        if (len + 1 == cap) {
            char *bigger = cap < (1u << 20) ? realloc(out, cap * 2) : NULL;
            if (!bigger) {
                ok = false;
                break;
            }
            out = bigger;
            cap *= 2;
        }
        ssize_t got = read(fds[0], out + len, cap - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        fprintf(stderr, "gpuprio-demo: row %s: child killed by signal %d%s\n", sc->id,
                WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (watchdog: runtime hung?)" : "");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "gpuprio-demo: row %s: child exited with status %d\n", sc->id,
                WEXITSTATUS(status));
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
        out[len] = '\0';
        ok = parse_result_line(out, sc->id, r);
        if (!ok)
            fprintf(stderr, "gpuprio-demo: row %s: no valid " RESULT_TAG " line in its output\n",
                    sc->id);
    }
    free(out);
    return ok;
}

/* ---- the table: columns are data; each formats one cell of a row ---- */

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
    cell_fn cell;
} column;

#define NA(buf, size, c) snprintf(buf, size, "%s", (c)->csv ? "" : "-")

static bool has_lc(const cell_ctx *c)
{
    return c->r && c->sc->lc && c->r->lc_reqs > 0;
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

static void cell_ms(char *buf, size_t size, const cell_ctx *c, uint64_t ns)
{
    if (!has_lc(c))
        NA(buf, size, c);
    else
        snprintf(buf, size, "%.3f", (double)ns / 1e6);
}

static void cell_lc_p50(char *buf, size_t size, const cell_ctx *c)
{
    cell_ms(buf, size, c, c->r ? c->r->lc_p50_ns : 0);
}

static void cell_lc_p99(char *buf, size_t size, const cell_ctx *c)
{
    cell_ms(buf, size, c, c->r ? c->r->lc_p99_ns : 0);
}

static void cell_lc_max(char *buf, size_t size, const cell_ctx *c)
{
    cell_ms(buf, size, c, c->r ? c->r->lc_max_ns : 0);
}

static void cell_lc_reqs(char *buf, size_t size, const cell_ctx *c)
{
    if (!has_lc(c))
        NA(buf, size, c);
    else
        snprintf(buf, size, "%" PRIu64, c->r->lc_reqs);
}

static void cell_lc_ratio(char *buf, size_t size, const cell_ctx *c)
{
    if (!has_lc(c) || !c->lc_base || c->lc_base->lc_p99_ns == 0)
        NA(buf, size, c);
    else
        snprintf(buf, size, c->csv ? "%.3f" : "%.1fx",
                 (double)c->r->lc_p99_ns / (double)c->lc_base->lc_p99_ns);
}

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

static const column columns[] = {
    {"Scenario", "scenario", true, cell_name},
    {"Status", "status", true, cell_status},
    {"LC P50 ms", "lc_p50_ms", false, cell_lc_p50},
    {"LC P99 ms", "lc_p99_ms", false, cell_lc_p99},
    {"LC max ms", "lc_max_ms", false, cell_lc_max},
    {"LC reqs", "lc_requests", false, cell_lc_reqs},
    {"P99 vs alone", "lc_p99_vs_alone", false, cell_lc_ratio},
    {"BE kern/s", "be_kernels_per_s", false, cell_be_rate},
    {"BE busy", "be_busy_fraction", false, cell_be_busy},
    {"BE vs alone", "be_vs_alone", false, cell_be_ratio},
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])
#define CELL_LEN 48

/* Prints rows x NCOLUMNS cells as an aligned text table or as CSV. */
static void print_table(FILE *f, const char (*cells)[NCOLUMNS][CELL_LEN], size_t rows, bool csv)
{
    if (csv) {
        for (size_t j = 0; j < NCOLUMNS; j++)
            fprintf(f, "%s%s", j ? "," : "", columns[j].key);
        fprintf(f, "\n");
        for (size_t i = 0; i < rows; i++) {
            for (size_t j = 0; j < NCOLUMNS; j++)
                fprintf(f, "%s%s", j ? "," : "", cells[i][j]);
            fprintf(f, "\n");
        }
        return;
    }
    int width[NCOLUMNS];
    int total = 0;
    for (size_t j = 0; j < NCOLUMNS; j++) {
        width[j] = (int)strlen(columns[j].title);
        for (size_t i = 0; i < rows; i++)
            if ((int)strlen(cells[i][j]) > width[j])
                width[j] = (int)strlen(cells[i][j]);
        total += width[j] + (j ? 2 : 0);
    }
    for (size_t j = 0; j < NCOLUMNS; j++)
        fprintf(f, "%s%*s", j ? "  " : "", columns[j].left ? -width[j] : width[j],
                columns[j].title);
    fprintf(f, "\n");
    for (int k = 0; k < total; k++)
        fputc('-', f);
    fprintf(f, "\n");
    for (size_t i = 0; i < rows; i++) {
        for (size_t j = 0; j < NCOLUMNS; j++)
            fprintf(f, "%s%*s", j ? "  " : "", columns[j].left ? -width[j] : width[j], cells[i][j]);
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
               "kernels,\non the simulated HIP device (tests/sim, no GPU).\n\n");
    fprintf(f, "What runs (same workloads in every row; a row runs only the ones it names):\n");
    fprintf(f,
            "  LC: 1 thread, 1 stream. Open-loop: request i is due at t0 + i x %.3f ms (%g/s);\n"
            "      it launches %d kernels of %g us back to back, then hipStreamSynchronize.\n"
            "      Latency = completion - due time (lateness counts).\n",
            period_ms, o->rate, o->kernels, o->lc_us);
    fprintf(f,
            "  BE: per worker 1 thread, 1 stream, kernels of %g us, at most %d in flight (event\n"
            "      ring); starts %llu ms before t0, stops when the window ends and LC is done.\n",
            o->be_us, BE_INFLIGHT, BE_LEAD_NS / 1000000);
    fprintf(f,
            "  Streams are non-blocking, created LC first, then BE 1, BE 2, before any thread\n"
            "  starts. Measured window per row: [t0, t0 + %g s).\n",
            o->seconds);
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
    if (getenv("HIPSIM_FAULT"))
        fprintf(f, "  WARNING: HIPSIM_FAULT is set: the simulator breaks a rule on purpose.\n");
    if (getenv("LD_PRELOAD"))
        fprintf(f, "  NOTE: LD_PRELOAD=%s is inherited by every row.\n", getenv("LD_PRELOAD"));
    fprintf(f, "Rows (each in its own process: %s --scenario ID [options]):\n", argv0);
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
        if (sc->be_workers)
            fprintf(f, "%s %d x BE (%s)", sc->lc ? " +" : "", sc->be_workers,
                    prio_name(sc->be_prio));
        if (sc->lc && sc->be_workers)
            fprintf(f, " concurrently");
        for (size_t j = 0; sc->env[j]; j++)
            fprintf(f, "%s%s", j ? " " : "; env: ", sc->env[j]);
        fprintf(f, "\n");
    }
    fprintf(f, "Options: --seconds %g --rate %g --kernels %d --lc-us %g --be-us %g\n\n", o->seconds,
            o->rate, o->kernels, o->lc_us, o->be_us);
}

/* The hardware queue of the LC stream if a BE stream shares it (hwq as "LC:1,BE:2,BE:1"), or -1. */
static int lc_shared_hwq(const char *hwq)
{
    int lc = -1;
    if (sscanf(hwq, "LC:%d", &lc) != 1)
        return -1;
    for (const char *p = strstr(hwq, "BE:"); p; p = strstr(p + 3, "BE:"))
        if (atoi(p + 3) == lc)
            return lc;
    return -1;
}

static void print_notes(FILE *f, const options *o, const row_result *res, const bool *ok)
{
    fprintf(
        f,
        "\nP99 vs alone = LC P99 / P99 of \"%s\". BE busy = BE kernels completed in the window\n"
        "x %g us / (window x compute slots). BE vs alone = BE kernels/s / that of \"%s\".\n",
        find_scenario(LC_BASELINE)->title, o->be_us, find_scenario(BE_BASELINE)->title);
    fprintf(f, "Hardware queue of each stream:");
    for (size_t i = 0; i < NSCENARIOS; i++)
        fprintf(f, "%s %s %s", i ? ";" : "", scenarios[i].id, ok[i] ? res[i].hwq : "?");
    fprintf(f, "\n");
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (ok[i] && lc_shared_hwq(res[i].hwq) >= 0)
            fprintf(f,
                    "NOTE: in \"%s\" the LC stream shares hardware queue %d with a BE stream, so\n"
                    "  it also waits for that stream's queued kernels (raise HIPSIM_HW_QUEUES).\n",
                    scenarios[i].title, lc_shared_hwq(res[i].hwq));
    uint64_t period_ns = (uint64_t)(1e9 / o->rate);
    for (size_t i = 0; i < NSCENARIOS; i++)
        if (ok[i] && scenarios[i].lc && res[i].lc_max_late_ns > period_ns)
            fprintf(f,
                    "NOTE: in \"%s\" an LC request started %.1f ms after it was due: LC does\n"
                    "  not keep up with %g requests/s there, so its backlog (and its percentiles)\n"
                    "  grow with --seconds.\n",
                    scenarios[i].title, (double)res[i].lc_max_late_ns / 1e6, o->rate);
}

static int run_all(const options *o, const char *argv0)
{
    FILE *info = o->csv ? stderr : stdout;
    print_header(info, o, argv0);
    fflush(info);

    static row_result res[NSCENARIOS];
    bool ok[NSCENARIOS];
    bool all_ok = true;
    for (size_t i = 0; i < NSCENARIOS; i++) {
        ok[i] = run_row(&scenarios[i], o, argv0, &res[i]);
        all_ok = all_ok && ok[i];
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
    print_table(stdout, (const char(*)[NCOLUMNS][CELL_LEN])cells, NSCENARIOS, o->csv);
    print_notes(info, o, res, ok);
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
