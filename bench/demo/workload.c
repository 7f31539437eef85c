/*
 * workload.c - gpuprio-demo's child side: runs one row's workloads on the (simulated) device in
 * this process and prints what they measured as one result line (result.c).
 *
 * Priorities. Like an unmodified application, the child only creates its streams with
 * hipStreamCreateWithPriority: LC with the device's greatest priority, LC2 with the middle of the
 * range, BE with the least (the simulator's range is 1 .. -1, which gpuprio maps onto low -10,
 * normal 0, high 10); in the levers table it asks for none, and gpuprio gives them theirs
 * (GPUPRIO_STREAM_PRIORITIES). Natively the simulated device prefers the more urgent hardware
 * queue, as AMD's does, but never preempts a running kernel. Whether the row measures what its
 * title says is checked here, in the process that measures, because this is also what runs when
 * someone starts `--scenario ID` by hand: the shim must be loaded exactly in gpuprio rows
 * (gpuprio_version found with dlsym), the process must have the row's GPUPRIO_* and simulator
 * settings, and in a gpuprio row the streams must have got distinct gpuprio priorities in the
 * intended order (gpuprio_stream_get_priority). The shim's functions are looked up at run time:
 * the demo does not link the shim, so that its native rows are truly native.
 *
 * Measurement. LC arrivals are open-loop: request i is due at t0 + i/rate whatever happened
 * before (LC2's at t0 + LC2_OFFSET_NS + i/rate, so they arrive while LC's are still running);
 * a request that starts late (because the previous one was slow) counts its lateness, so
 * latency = completion (hipStreamSynchronize returned, hipsimNowNs) - due time, for every request
 * due in the window [t0, t0 + seconds). Each request is also marked stalled or not: whether the
 * host held up the row's threads for more than DEMO_STALL_NS while it was under way (the probe
 * of hoststall.c, read just before it is due and just after it completes, plus how late the
 * client woke for it), or it waited for a stalled one before it. The parent works out the
 * percentiles over all of a row's rounds, from the latencies this process sends (result.c),
 * kept and stalled apart. BE workers start 50 ms
 * before t0 so the device is saturated when the window opens, keep at most BE_INFLIGHT kernels in
 * flight (a ring of events), run until the window closes and the clients have finished, and
 * count the kernels that completed inside the window. In gpuprio rows the child also reads, from
 * gpuprio_stream_stats, how often gpuprio suspended the BE streams (the evidence that it
 * scheduled at all: about once per LC request).
 *
 * Streams are created in a fixed order (LC, LC2, BE 1, BE 2, ...) before any thread runs, so
 * that the hardware-queue mapping (round-robin in creation order) is the same in every run. In a
 * cross-process row, this process runs one workload (--role) and takes its t0 from the parent,
 * so that the windows of all the row's processes coincide.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "demo.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuprio.h"
#include "hip_compat.h"
#include "hipsim.h"

static const char *current_scenario = "?";

static void die_hip(const char *call, hipError_t err, int line)
{
    fprintf(stderr, "gpuprio-demo [%s]: %s failed: %s (%d) at workload.c:%d\n", current_scenario,
            call, hipGetErrorName(err), (int)err, line);
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

/* Fails the row unless the process has the entries of `list` (a row's env or sim_env): each
 * "NAME=VALUE" entry set so, each "NAME" entry unset. The parent applies them; this catches
 * `--scenario ID` run by hand without them, which would measure another configuration than the
 * row's title says. */
static void check_entries(const scenario *sc, const char *const *list)
{
    for (size_t j = 0; list && list[j]; j++) {
        const char *e = list[j], *eq = strchr(e, '=');
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

/* One kernel of `blocks` blocks (grid.x) of one thread each. */
static void launch_kernel(const void *fn, hipStream_t stream, unsigned blocks, uint64_t dur_ns,
                          uint64_t tag)
{
    void *args[2] = {&dur_ns, &tag};
    dim3 grid = {blocks, 1, 1};
    dim3 one = {1, 1, 1};
    CHECK(hipLaunchKernel(fn, grid, one, args, 0, stream));
}

static void sleep_until(uint64_t t_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(t_ns / 1000000000u),
                          .tv_nsec = (long)(t_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static uint64_t us_to_ns(double us)
{
    return (uint64_t)(us * 1000.0 + 0.5);
}

/* Set before the threads start, read-only afterwards (pthread_create orders the writes). */
typedef struct run_ctx {
    const void *lc_fn, *be_fn;
    uint64_t lc_ns, be_ns;
    unsigned lc_blocks, be_blocks; /* grid.x of each kernel */
    int kernels;
    double period_ns;
    uint64_t t0, t_end;         /* the measured window */
    atomic_int clients_running; /* LC clients not yet done (BE runs until they are) */
    atomic_uint_fast64_t be_kernels_in_window;
    int npids; /* the row's processes (cross-process rows; 0: this one), for the host probe */
    int pids[MAX_ITEMS];
} run_ctx;

/* An LC client (LC or LC2): one thread, one stream, open-loop requests. */
typedef struct client {
    run_ctx *ctx;
    const char *name; /* its thread's name (hoststall.c counts it) */
    hipStream_t stream;
    uint64_t tag;
    uint64_t offset_ns; /* request i is due at t0 + offset_ns + i x period */
    /* Per request, lat_cap entries, written by the client's thread only, read after join: */
    uint64_t *lat;  /* latency */
    uint64_t *late; /* how long after it was due it started */
    bool *stalled;  /* whether the host stalled it (DEMO_STALL_NS) */
    size_t lat_cap;
    size_t reqs; /* likewise */
} client;

/* A BE worker: one thread, one stream. */
typedef struct be_worker {
    run_ctx *ctx;
    hipStream_t stream;
    uint64_t tag;
} be_worker;

/* The client reads the host probe this long before a request is due, so that reading it costs
 * the request nothing; what the host withholds in that lead counts against the request. */
#define PROBE_LEAD_NS (300ull * 1000)

static void *client_thread(void *arg)
{
    client *w = arg;
    run_ctx *c = w->ctx;
    (void)pthread_setname_np(pthread_self(), w->name);
    host_probe probe;
    demo_probe_init(&probe, c->pids, c->npids);
    uint64_t prev_done = 0;
    bool prev_stalled = false;
    size_t i = 0;
    for (;; i++) {
        uint64_t due = c->t0 + w->offset_ns + (uint64_t)((double)i * c->period_ns);
        if (due >= c->t_end || i >= w->lat_cap)
            break;
        if (due > PROBE_LEAD_NS)
            sleep_until(due - PROBE_LEAD_NS);
        uint64_t withheld = demo_probe_read(&probe);
        sleep_until(due); /* returns at once when the previous request made this one late */
        uint64_t start = hipsimNowNs();
        for (int k = 0; k < c->kernels; k++)
            launch_kernel(c->lc_fn, w->stream, c->lc_blocks, c->lc_ns, w->tag);
        CHECK(hipStreamSynchronize(w->stream));
        uint64_t done = hipsimNowNs();
        w->lat[i] = done - due;
        w->late[i] = start > due ? start - due : 0;
        /* What the host withheld while the request was under way, and how late this thread
         * woke for it (when it was not still busy with the one before). */
        withheld = demo_probe_read(&probe) - withheld;
        uint64_t ready = prev_done > due ? prev_done : due;
        withheld += start > ready ? start - ready : 0;
        w->stalled[i] = withheld > DEMO_STALL_NS || (prev_stalled && prev_done > due);
        prev_done = done;
        prev_stalled = w->stalled[i];
    }
    demo_probe_close(&probe);
    w->reqs = i;
    atomic_fetch_sub(&c->clients_running, 1);
    return NULL;
}

static void *be_thread(void *arg)
{
    be_worker *w = arg;
    run_ctx *c = w->ctx;
    (void)pthread_setname_np(pthread_self(), "demo-be"); /* hoststall.c does not count it */
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
            launch_kernel(c->be_fn, w->stream, c->be_blocks, c->be_ns, w->tag);
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

static hipStream_t create_stream(demo_prio p, bool blocking, int least, int greatest)
{
    hipStream_t s = NULL;
    unsigned flags = blocking ? hipStreamDefault : hipStreamNonBlocking;
    if (p == PRIO_DEFAULT)
        CHECK(hipStreamCreateWithFlags(&s, flags));
    else
        CHECK(hipStreamCreateWithPriority(&s, flags,
                                          p == PRIO_GREATEST ? greatest
                                          : p == PRIO_LEAST  ? least
                                                             : (least + greatest) / 2));
    return s;
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
static void client_init(client *w, run_ctx *c, const char *name, uint64_t tag, uint64_t offset_ns,
                        size_t cap)
{
    *w = (client){.ctx = c, .name = name, .tag = tag, .offset_ns = offset_ns, .lat_cap = cap};
    w->lat = calloc(cap, sizeof *w->lat);
    w->late = calloc(cap, sizeof *w->late);
    w->stalled = calloc(cap, sizeof *w->stalled);
    if (!w->lat || !w->late || !w->stalled)
        die("out of memory");
}

/* The client's counts and latencies: all its requests, or every k-th one where there are more
 * than this round's share of DEMO_LAT_MAX (result.c pools the rounds). */
static void client_result_of(client *w, client_result *out, int rounds)
{
    size_t share = DEMO_LAT_MAX / (size_t)rounds;
    size_t step = w->reqs > share ? (w->reqs + share - 1) / share : 1;
    memset(out, 0, sizeof *out);
    out->reqs = w->reqs;
    for (size_t i = 0; i < w->reqs; i++) {
        out->stalled += w->stalled[i];
        /* A late start the host did not cause: the client fell behind (backlog). */
        if (!w->stalled[i] && w->late[i] > out->max_late_ns)
            out->max_late_ns = w->late[i];
        if (i % step != 0)
            continue;
        if (w->stalled[i])
            out->stalled_ns[out->nstalled_lat++] = w->lat[i];
        else
            out->kept_ns[out->nkept++] = w->lat[i];
    }
    free(w->lat);
    free(w->late);
    free(w->stalled);
}

/* The row's shared page (--row-fd, a cross-process row's processes), or NULL without one. */
static row_page *map_row_page(int fd)
{
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || st.st_size != (off_t)sizeof(row_page))
        die("--row-fd is not the row's page (cross-process rows are started by the parent)");
    row_page *page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED || page->magic != ROW_PAGE_MAGIC)
        die("--row-fd is not the row's page (cross-process rows are started by the parent)");
    return page;
}

int demo_run_scenario(const scenario *sc, const options *o)
{
    current_scenario = sc->id;
    /* Watchdog: a hung runtime (or scheduler) must not hang the parent (and CI) forever. */
    alarm((unsigned)(120 + 10 * o->seconds));
    check_entries(sc, sc->env);
    check_entries(sc, sc->sim_env);
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
    row_page *page = split ? map_row_page(o->row_fd) : NULL;
    if (page)
        hipsimCountLatenessIn(&page->late_ns);

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
    c.be_ns = us_to_ns(demo_be_us(sc, o));
    c.lc_blocks = demo_blocks(sc->lc_blocks);
    c.be_blocks = demo_blocks(sc->be_blocks);
    c.kernels = o->kernels;
    c.period_ns = 1e9 / o->rate;
    /* In a BE process of a cross-process row, the clients of the other processes count as one,
     * until the parent closes our stdin after they have exited. */
    atomic_init(&c.clients_running, (int)sc->lc + (int)sc->lc2 + (split && sc->be_workers));
    atomic_init(&c.be_kernels_in_window, 0);
    uint64_t window_ns = (uint64_t)(o->seconds * 1e9);
    size_t lat_cap = (size_t)(o->seconds * o->rate) + 2;

    /* Streams in the fixed order, before any thread runs. */
    client lc_w = {0}, lc2_w = {0};
    be_worker be_w[MAX_BE_WORKERS];
    row_result *r = calloc(1, sizeof *r);
    if (!r)
        die("out of memory");
    if (sc->lc) {
        client_init(&lc_w, &c, "demo-lc", 0, 0, lat_cap);
        lc_w.stream = create_stream(sc->lc_prio, sc->blocking, least, greatest);
        demo_append_item(r->hwq, sizeof r->hwq, "LC", hipsimStreamHwQueue(lc_w.stream));
    }
    if (sc->lc2) {
        client_init(&lc2_w, &c, "demo-lc2", MAX_BE_WORKERS + 1, LC2_OFFSET_NS, lat_cap);
        lc2_w.stream = create_stream(sc->lc2_prio, sc->blocking, least, greatest);
        demo_append_item(r->hwq, sizeof r->hwq, "LC2", hipsimStreamHwQueue(lc2_w.stream));
    }
    for (int i = 0; i < sc->be_workers; i++) {
        be_w[i] = (be_worker){.ctx = &c, .tag = (uint64_t)i + 1};
        be_w[i].stream = create_stream(sc->be_prio, sc->blocking, least, greatest);
        demo_append_item(r->hwq, sizeof r->hwq, "BE", hipsimStreamHwQueue(be_w[i].stream));
    }

    /* gpuprio rows: the streams must have got distinct priorities, LC > LC2 > BE, from the
     * priorities they were created with (in a cross-process row, the parent checks the order of
     * the processes' streams). */
    if (sc->gpuprio) {
        if (sc->lc)
            demo_append_item(r->prio, sizeof r->prio, "LC", gpuprio_priority(lc_w.stream, "LC"));
        if (sc->lc2)
            demo_append_item(r->prio, sizeof r->prio, "LC2", gpuprio_priority(lc2_w.stream, "LC2"));
        for (int i = 0; i < sc->be_workers; i++)
            demo_append_item(r->prio, sizeof r->prio, "BE", gpuprio_priority(be_w[i].stream, "BE"));
        if (!demo_prio_ordered(r->prio)) {
            fprintf(stderr,
                    "gpuprio-demo [%s]: the streams' gpuprio priorities are %s, not LC > LC2 > "
                    "BE: gpuprio would not tell them apart\n",
                    sc->id, r->prio);
            _Exit(1);
        }
    }

    /* Warm-up: one short kernel of the row's shape per stream, so first-use costs stay out of
     * the window. */
    if (sc->lc) {
        launch_kernel(c.lc_fn, lc_w.stream, c.lc_blocks, 1000, lc_w.tag);
        CHECK(hipStreamSynchronize(lc_w.stream));
    }
    if (sc->lc2) {
        launch_kernel(c.lc_fn, lc2_w.stream, c.lc_blocks, 1000, lc2_w.tag);
        CHECK(hipStreamSynchronize(lc2_w.stream));
    }
    for (int i = 0; i < sc->be_workers; i++) {
        launch_kernel(c.be_fn, be_w[i].stream, c.be_blocks, 1000, be_w[i].tag);
        CHECK(hipStreamSynchronize(be_w[i].stream));
    }

    if (split) {
        /* One window for all the processes of the row: the parent gives t0 once all are ready. */
        printf("ready\n");
        fflush(stdout);
        if (scanf("%" SCNu64, &c.t0) != 1)
            die("no t0 on stdin (cross-process rows are started by the parent)");
        /* The parent wrote who the row's processes are before it gave t0. */
        for (int i = 0; page && i < page->npids && i < MAX_ITEMS; i++)
            c.pids[c.npids++] = page->pids[i];
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
        r->be_suspensions += st.suspensions;
    }

    if (sc->lc)
        CHECK(hipStreamDestroy(lc_w.stream));
    if (sc->lc2)
        CHECK(hipStreamDestroy(lc2_w.stream));
    for (int i = 0; i < sc->be_workers; i++)
        CHECK(hipStreamDestroy(be_w[i].stream));
    CHECK(hipDeviceSynchronize());

    r->window_ns = window_ns;
    r->slots = demo_setting_uint(getenv("HIPSIM_COMPUTE_SLOTS"), 1);
    r->be_kernels = atomic_load(&c.be_kernels_in_window);
    r->be_busy_ns = r->be_kernels * c.be_ns;
    if (sc->lc)
        client_result_of(&lc_w, &r->lc, o->rounds);
    if (sc->lc2)
        client_result_of(&lc2_w, &r->lc2, o->rounds);
    demo_print_result_line(stdout, sc, r);
    free(r);
    return 0;
}
