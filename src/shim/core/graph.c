/*
 * graph.c - gates inside a lower priority's graph launches (GPUPRIO_GRAPH_GATE_US; graph.h,
 * docs/design.md, "Gates inside graphs"), for every platform whose HAL gives graph ops
 * (platform.h, struct gp_graph_ops).
 *
 * A graph launch is one command, so a stream's gate can stop it only before it starts. With the
 * option on, each executable graph the application instantiates is remembered with a copy of its
 * graph (the application may change or destroy its graph afterwards). Once a launch of it is
 * admitted on a queue held by gates (Level 2: XQ_GATE_DEVICE, the decision the stream's gates
 * follow) and its GPU time is learned (the launch's cost key: xc_cost.h) above the interval, a
 * second executable graph is built from the copy, with wait nodes about one interval of
 * predicted time apart (graph_place.h says how it is predicted), and from then on EVERY launch and
 * upload of the application's executable graph goes to that gated copy: CUDA's driver orders
 * successive launches of one executable graph, never those of two. Its wait nodes wait on the
 * gate line of the queue it is launched on, or, on a queue not held by gates, on a word that is
 * always open; they are moved (which leaves launches already made alone) only when that changes.
 * The application's own objects are never changed.
 *
 * The first switch to the gated copy is made only on the stream of the previous launch (then the
 * stream orders them; a stream is its handle and, where the runtime says it, its id, since a new
 * stream may get a destroyed one's address); a graph the application changes afterwards (kind
 * GRAPH_EXEC_CHANGE) is launched as its own from then on, and where that launch is on another
 * stream than the gated copy's last one, that stream first waits on the device for what was
 * recorded behind the copy's launches (not when it captures: the wait would go into the
 * application's graph). A launch into a capture gets the application's executable graph: nothing of
 * gpuprio's goes into a graph being captured. Every other case is left whole for good or for the
 * launch, counted by reason (graph.h) and said at exit at GPUPRIO_LOG=info.
 *
 * With the option off nothing is remembered or copied, and each wrapper forwards after reading
 * the option. A launch costs a table lookup and one lock of its own executable graph, held across
 * the runtime's launch so that the wait nodes' target and the launch go together.
 */
#include "graph.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "devgate.h"
#include "gp_config.h"
#include "gp_lockrank.h"
#include "gp_log.h"
#include "gp_options.h"
#include "gp_thread.h"
#include "xc_cost.h"
#include "xq_admission.h"
#include "xqueue.h"

static const struct gp_graph_ops *ops(void)
{
    return core_shim.platform->graph;
}

/* Whether the environment sets GPUPRIO_GRAPH_GATE_US, asked once: where the platform's gates
 * are off by default, nothing measured them on its devices yet. */
static bool set_in_environment(void)
{
    static _Atomic int set = -1;
    int s = atomic_load_explicit(&set, memory_order_relaxed);
    if (s < 0) {
        s = gp_config_get(gp_opt_desc(GP_OPT_GRAPH_GATE_US)->name) != NULL;
        atomic_store_explicit(&set, s, memory_order_relaxed);
    }
    return s;
}

static uint64_t gate_ns(void)
{
    const struct gp_graph_ops *g = ops();
    if (!g || (!g->on_by_default && !set_in_environment()))
        return 0;
    return 1000 * gp_opt_uint(GP_OPT_GRAPH_GATE_US);
}

bool core_graph_on(void)
{
    return gate_ns() != 0;
}

const char *core_graph_whole_reason(enum gp_graph_whole r)
{
    static const char *const what[] = {
#define GP_GRAPH_WHOLE_TEXT(name, text) text,
        GP_GRAPH_WHOLE_REASONS(GP_GRAPH_WHOLE_TEXT)
#undef GP_GRAPH_WHOLE_TEXT
    };
    if (r == GP_GRAPH_WHOLE_NO_RUNTIME)
        return ops() && ops()->no_runtime ? ops()->no_runtime : "?";
    return r < GP_GRAPH_WHOLE_COUNT ? what[r] : "?";
}

/* An executable graph the application instantiated while the option was on. */
struct graph_exec {
    struct graph_exec *next; /* in its bucket, under table_mu */
    uintptr_t app;
    _Atomic bool changed; /* the application changed it (GRAPH_EXEC_CHANGE) */
    pthread_mutex_t mu;   /* GRAPH_LAUNCH: the rest, and each launch */
    uintptr_t clone;      /* the copy taken at instantiation, until the gated copy owns it */
    uintptr_t ctx;
    unsigned long long flags; /* the instantiation's, for the gated copy */
    size_t kernels;
    int whole;                  /* -1, or why it stays whole for good (enum gp_graph_whole) */
    struct gp_graph_built twin; /* the gated copy (twin.twin NULL: none) */
    bool twin_launched;         /* the gated copy took the launches */
    bool launched;              /* it was launched (not into a capture) */
    bool last_known;            /* last_stream and last_thread are its last launch's */
    uintptr_t last_stream;
    uint64_t last_thread; /* gp_thread_serial: a pthread_t passes on to a later thread */
    bool last_id_known;   /* last_id is last_stream's id (gp_graph_ops.stream_id) */
    uint64_t last_id;
};

#define BUCKETS 256
static struct graph_exec *table[BUCKETS];
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t bucket(uintptr_t e)
{
    return (size_t)((e >> 4) ^ (e >> 12)) % BUCKETS;
}

/* Removes and returns exec's entry, or NULL. */
static struct graph_exec *take(uintptr_t e)
{
    gp_mutex_lock(&table_mu, GP_RANK_GRAPH_TABLE);
    struct graph_exec **p = &table[bucket(e)], *x;
    while ((x = *p) && x->app != e)
        p = &x->next;
    if (x)
        *p = x->next;
    gp_mutex_unlock(&table_mu, GP_RANK_GRAPH_TABLE);
    return x;
}

static struct graph_exec *find(uintptr_t e)
{
    gp_mutex_lock(&table_mu, GP_RANK_GRAPH_TABLE);
    struct graph_exec *x = table[bucket(e)];
    while (x && x->app != e)
        x = x->next;
    gp_mutex_unlock(&table_mu, GP_RANK_GRAPH_TABLE);
    return x;
}

/* In a forked child: the parent's executable graphs are abandoned, not freed (their gated copies
 * are the parent's runtime objects, and a thread of the parent may have held an entry's lock
 * across a launch), and the table's lock, which one may have held, is made anew. Their launches
 * in the child go as graphs gpuprio did not see instantiated. */
static void forget_in_child(void)
{
    pthread_mutex_init(&table_mu, NULL);
    memset(table, 0, sizeof table);
}

__attribute__((constructor)) static void forget_graphs_in_child(void)
{
    pthread_atfork(NULL, NULL, forget_in_child);
}

static void forget(struct graph_exec *x)
{
    if (!x)
        return;
    ops()->twin_destroy(x->twin.twin, false); /* the runtime frees it once its launches are done */
    ops()->destroy(x->clone);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

/* ---- what was done, said at exit ---- */

static _Atomic uint64_t gated_launches, gates_launched, whole_launches[GP_GRAPH_WHOLE_COUNT];

static void count(int reason, size_t gates)
{
    if (reason >= 0) {
        atomic_fetch_add_explicit(&whole_launches[reason], 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&gated_launches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&gates_launched, gates, memory_order_relaxed);
}

void core_graph_say_counts(void)
{
    char whole[1024] = "";
    size_t used = 0;
    for (int i = 0; i < GP_GRAPH_WHOLE_COUNT && used < sizeof whole; i++) {
        uint64_t n = atomic_load(&whole_launches[i]);
        if (n)
            used += (size_t)snprintf(whole + used, sizeof whole - used, "; %llu left whole: %s",
                                     (unsigned long long)n, core_graph_whole_reason(i));
    }
    uint64_t gated = atomic_load(&gated_launches);
    if (gated || used)
        gp_log(GP_LOG_INFO, "graph launches: %llu gated (%llu gates)%s", (unsigned long long)gated,
               (unsigned long long)atomic_load(&gates_launched), whole);
}

/* ---- instantiation, change, destruction ---- */

void core_graph_instantiated(uintptr_t e, uintptr_t graph, unsigned long long flags)
{
    const struct gp_graph_ops *g = ops();
    struct graph_exec *x = calloc(1, sizeof *x);
    if (!x)
        return; /* not remembered: launched whole, as UNKNOWN */
    x->app = e;
    x->whole = -1;
    x->ctx = g->context();
    x->flags = flags;
    pthread_mutex_init(&x->mu, NULL);
    int reason = g->copy(graph, flags, &x->kernels, &x->clone);
    x->whole = reason;
    if (reason >= 0)
        gp_log(GP_LOG_DEBUG, "executable graph %p: launched whole: %s", (void *)e,
               core_graph_whole_reason(reason));
    /* A handle seen again died unseen, with its context (a reset or a context's destruction,
     * which take executable graphs with them): its entry is old, its gated copy dead with it, so
     * nothing of it is handed to the runtime again (a copy of its graph not yet built on is
     * left to the runtime). */
    struct graph_exec *old = take(e);
    if (old) {
        g->twin_destroy(old->twin.twin, true);
        pthread_mutex_destroy(&old->mu);
        free(old);
    }
    gp_mutex_lock(&table_mu, GP_RANK_GRAPH_TABLE);
    x->next = table[bucket(e)];
    table[bucket(e)] = x;
    gp_mutex_unlock(&table_mu, GP_RANK_GRAPH_TABLE);
}

void core_graph_exec_changing(void *exec)
{
    if (!gate_ns())
        return;
    struct graph_exec *x = find((uintptr_t)exec);
    if (x)
        atomic_store(&x->changed, true);
}

/* Its gated copy goes with it, and the runtime frees that once its launches are done (CUDA lets
 * an executable graph be destroyed while launches of it run). */
void core_graph_exec_destroyed(uintptr_t exec)
{
    if (gate_ns())
        forget(take(exec));
}

/* ---- launches ---- */

/* The stream a launch is made on: its handle as core_graph_launch names it, and its id where the
 * runtime says it. */
struct launch_stream {
    uintptr_t named;
    bool id_known;
    uint64_t id;
};

/* Whether s is the stream of x's last launch (x->mu held), as far as can be told: the per-thread
 * handle names the calling thread's stream, so it counts as the same only on the same thread (the
 * legacy stream too, to be safe); a handle is an address, which a stream created after the
 * application destroyed the last one may get, so where the runtime gave both ids they must match
 * too (the destroyed stream's launches may still run, and nothing would order them before). */
static bool same_stream(const struct graph_exec *x, const struct launch_stream *s)
{
    const struct gp_stream_handles *special = &core_shim.platform->streams;
    uintptr_t h = s->named;
    bool is_special = h == special->null || h == special->legacy || h == special->per_thread;
    return x->launched && x->last_known && x->last_stream == h &&
           (!is_special || x->last_thread == gp_thread_serial()) &&
           (!x->last_id_known || !s->id_known || x->last_id == s->id);
}

/* The gated copy is given up for good (x->mu held): a launch of the application's own executable
 * graph on `stream` follows, which the runtime does not order after the copy's launches, so where
 * those were on another stream, that stream is made to wait on the device for the copy's
 * (twin_launched marks each of its launches). Never on the host: a stream of the application may
 * wait for what this thread does after the launch returns. Not into a capture (stream
 * capturing), whose graph would take gpuprio's wait: docs/design.md. */
static void retire(struct graph_exec *x, const struct launch_stream *stream, bool capturing)
{
    if (x->twin_launched && !same_stream(x, stream) && !capturing &&
        ops()->twin_order(x->twin.twin, stream->named) != 0)
        gp_log(GP_LOG_DEBUG,
               "executable graph %p: its launch on another stream is not ordered "
               "after its gated copy's",
               (void *)x->app);
    ops()->twin_destroy(x->twin.twin, false);
    x->twin = (struct gp_graph_built){0};
    x->twin_launched = false;
}

/* The device address of q's gate line where the stream's gates would be put: 0 where they would
 * not (not held by gates, no line, the runtime refused a gate). */
static uint64_t gate_line(const struct xqueue *q)
{
    if (!q || !(atomic_load(&xq_st(q)->gate) & XQ_GATE_DEVICE) || atomic_load(&q->dgate_off))
        return 0;
    const struct dg_region *r = q->dgate_region;
    struct dg_line *l = atomic_load(&((struct xqueue *)q)->dgate);
    if (!l || !r || !dg_ready(r))
        return 0;
    return dg_device_addr(r, l);
}

/* Builds x's gated copy for a launch on a gated queue whose GPU time was learned (x->mu held). The
 * reason it was not built, or -1. */
static int build(struct graph_exec *x, const struct core_call *c, uint64_t line)
{
    if (xq_capturing()) /* admission stood aside: no cost key */
        return GP_GRAPH_WHOLE_CAPTURING;
    uint64_t learned = c->ticket.cost_key ? xc_predict(c->ticket.cost_key) : 0,
             every_ns = gate_ns();
    if (!learned)
        return GP_GRAPH_WHOLE_NOT_LEARNED;
    if (learned <= every_ns)
        return GP_GRAPH_WHOLE_SHORT;
    int rc = ops()->twin_build(x->clone, x->ctx, every_ns, learned, line, x->flags, &x->twin);
    x->clone = 0;
    if (rc) {
        x->whole = rc == -ENOENT ? GP_GRAPH_WHOLE_NO_PLACE : GP_GRAPH_WHOLE_FAILED;
        gp_log(GP_LOG_DEBUG, "executable graph %p: its gated copy could not be built (%d)",
               (void *)x->app, rc);
        return x->whole;
    }
    gp_log(GP_LOG_DEBUG,
           "executable graph %p: gated copy with %zu gates among its %zu kernel nodes, %zu of "
           "them with a predicted time (learned %llu us)",
           (void *)x->app, x->twin.gates, x->kernels, x->twin.noted,
           (unsigned long long)(learned / 1000));
    return -1;
}

int core_graph_launch(const struct core_call *c, core_graph_forward forward, void (*real)(void),
                      uintptr_t e, uintptr_t s, bool upload, bool pt)
{
    if (!gate_ns())
        return forward(real, e, s);
    const struct gp_graph_ops *g = ops();
    const struct gp_stream_handles *special = &core_shim.platform->streams;
    int success = core_shim.platform->success;
    /* The stream s names, for the calls gpuprio makes itself (without _ptsz) and to compare. */
    uintptr_t named = core_stream_named(s, pt);
    struct launch_stream on = {.named = named};
    struct graph_exec *x = find(e);
    if (!x) {
        if (!upload)
            count(GP_GRAPH_WHOLE_UNKNOWN, 0);
        return forward(real, e, s);
    }
    /* The legacy and per-thread streams are never destroyed: told apart by thread instead. */
    if (named != special->legacy && named != special->per_thread && g->stream_id)
        on.id_known = g->stream_id(named, &on.id) == 0;
    gp_mutex_lock(&x->mu, GP_RANK_GRAPH_LAUNCH);
    if (x->whole < 0 && atomic_load(&x->changed)) {
        x->whole = GP_GRAPH_WHOLE_CHANGED;
        g->destroy(x->clone); /* never built on now */
        x->clone = 0;
    }
    /* Whether the launch goes into a capture (1; -EIO: cannot be told), asked of the runtime only
     * while one is in progress: a stream may join another's capture by waiting on its event. */
    int into_capture = xq_capturing() ? g->stream_capturing(named) : 0;
    /* Not at an upload, which runs nothing: the next launch is the one to order. */
    if (x->whole >= 0 && x->twin.twin && !upload)
        retire(x, &on, into_capture != 0);
    uintptr_t use = e;
    size_t gates = 0;
    int reason = x->whole;
    if (reason < 0 && into_capture)
        reason = GP_GRAPH_WHOLE_CAPTURING;
    uint64_t line = reason < 0 ? gate_line(c->q) : 0;
    if (reason < 0 && !x->twin.twin)
        reason = upload  ? GP_GRAPH_WHOLE_NOT_LEARNED
                 : !line ? GP_GRAPH_WHOLE_NOT_GATED
                         : build(x, c, line);
    if (reason < 0 && !x->twin_launched && x->launched && !same_stream(x, &on))
        reason = GP_GRAPH_WHOLE_OTHER_STREAM;
    if (reason < 0 && g->copy_launchable && !g->copy_launchable())
        reason = GP_GRAPH_WHOLE_ERROR_PENDING;
    if (reason < 0) {
        uint64_t target = line ? line : x->twin.open_word;
        if (!xq_capturing() && g->twin_target(x->twin.twin, target) != 0) {
            x->whole = reason = GP_GRAPH_WHOLE_FAILED;
            if (!upload) /* else at the next launch */
                retire(x, &on, false);
        } else {
            use = x->twin.exec;
            if (line)
                gates = x->twin.gates;
            else
                reason = GP_GRAPH_WHOLE_NOT_GATED; /* the copy, with its gates open */
        }
    }
    int r = forward(real, use, s);
    if (r != success && use != e) {
        /* The gated copy's launch failed (its first uploads a second executable graph: out of
         * memory, say): given up for good, and the application's own launched, which is what
         * the application asked for (at an upload, the copy is retired at the next launch). */
        gp_log(GP_LOG_DEBUG,
               "executable graph %p: its gated copy's %s failed (%d): whole from now on",
               (void *)x->app, upload ? "upload" : "launch", r);
        if (g->copy_failed)
            g->copy_failed();
        x->whole = reason = GP_GRAPH_WHOLE_FAILED;
        gates = 0;
        if (!upload)
            retire(x, &on, false);
        use = e;
        r = forward(real, e, s);
    }
    /* A launch into a capture runs nothing: the last launch that runs stays the one to follow. */
    if (r == success && !upload && into_capture != 1) {
        x->launched = true;
        x->last_known = into_capture == 0;
        x->last_stream = named;
        x->last_thread = gp_thread_serial();
        x->last_id_known = on.id_known;
        x->last_id = on.id;
        if (use != e) {
            x->twin_launched = true;
            g->twin_launched(x->twin.twin, named);
        }
    }
    gp_mutex_unlock(&x->mu, GP_RANK_GRAPH_LAUNCH);
    if (r == success && !upload)
        count(reason, gates);
    return r;
}
