/*
 * shim_cuda_graph.c - gates inside a lower priority's CUDA graph launches (GPUPRIO_GRAPH_GATE_US;
 * docs/design.md, "Gates inside graphs").
 *
 * A graph launch is one command, so a stream's gate can stop it only before it starts. With the
 * option on, each executable graph the application instantiates is remembered with a copy of its
 * graph (cuGraphClone; the application may change or destroy its graph afterwards). Once a launch
 * of it is admitted on a queue held by gates (Level 2: XQ_GATE_DEVICE, the decision the stream's
 * gates follow) and its GPU time is learned (the launch's cost key: xc_cost.h) above the interval,
 * a second executable graph is built from the copy, with wait nodes about one interval of
 * predicted time apart (cuda_graph_gate.c says how it is predicted), and from then on
 * EVERY launch and upload of the application's executable graph goes to that gated copy: the
 * driver orders successive launches of one executable graph, never those of two. Its wait nodes
 * wait on the gate line of the queue it is launched on, or, on a queue not held by gates, on a word
 * that is always open; they are moved (cuGraphExecBatchMemOpNodeSetParams, which leaves launches
 * already made alone) only when that changes. The application's own objects are never changed.
 *
 * The first switch to the gated copy is made only on the stream of the previous launch (then the
 * stream orders them; a stream is its handle and, where the driver says it, its id, since a new
 * stream may get a destroyed one's address); a graph the application changes afterwards (kind
 * GRAPH_EXEC_CHANGE) is launched as its own from then on, and where that launch is on another
 * stream than the gated copy's last one, that stream first waits on the device for an event
 * recorded behind the copy's launches (not when it captures: the wait would go into the
 * application's graph). A launch into a capture gets the application's executable graph: nothing of
 * gpuprio's goes into a graph being captured. Every other case is left whole for good or for the
 * launch, counted by reason (cuda_graph_gate.h) and said at exit at GPUPRIO_LOG=info.
 *
 * With the option off nothing is remembered or copied, and each wrapper forwards after reading
 * the option. A launch costs a table lookup and one lock of its own executable graph, held across
 * the driver's launch so that the wait nodes' target and the launch go together.
 */
#include "shim_cuda_graph.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_graph_gate.h"
#include "devgate.h"
#include "gp_lockrank.h"
#include "gp_log.h"
#include "gp_options.h"
#include "gp_thread.h"
#include "xc_cost.h"
#include "xq_admission.h"
#include "xqueue.h"

static uint64_t gate_ns(void)
{
    return 1000 * gp_opt_uint(GP_OPT_GRAPH_GATE_US);
}

/* An executable graph the application instantiated while the option was on. */
struct graph_exec {
    struct graph_exec *next; /* in its bucket, under table_mu */
    CUgraphExec app;
    _Atomic bool changed; /* the application changed it (GRAPH_EXEC_CHANGE) */
    pthread_mutex_t mu;   /* GRAPH_LAUNCH: the rest, and each launch */
    CUgraph clone;        /* the copy taken at instantiation, until the gated copy owns it */
    CUcontext ctx;
    unsigned long long flags; /* the instantiation's, for the gated copy */
    size_t kernels;
    int whole; /* -1, or why it stays whole for good (enum cudahal_graph_whole) */
    struct cudahal_graph_twin *twin;
    uint64_t open_word; /* where its wait nodes point on a queue not held by gates */
    bool twin_launched; /* the gated copy took the launches */
    bool launched;      /* it was launched (not into a capture) */
    bool last_known;    /* last_stream and last_thread are its last launch's */
    CUstream last_stream;
    uint64_t last_thread; /* gp_thread_serial: a pthread_t passes on to a later thread */
    bool last_id_known;   /* last_id is last_stream's id (cuStreamGetId) */
    uint64_t last_id;
};

#define BUCKETS 256
static struct graph_exec *table[BUCKETS];
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t bucket(CUgraphExec e)
{
    uintptr_t p = (uintptr_t)e;
    return (size_t)((p >> 4) ^ (p >> 12)) % BUCKETS;
}

/* Removes and returns exec's entry, or NULL. */
static struct graph_exec *take(CUgraphExec e)
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

static struct graph_exec *find(CUgraphExec e)
{
    gp_mutex_lock(&table_mu, GP_RANK_GRAPH_TABLE);
    struct graph_exec *x = table[bucket(e)];
    while (x && x->app != e)
        x = x->next;
    gp_mutex_unlock(&table_mu, GP_RANK_GRAPH_TABLE);
    return x;
}

/* In a forked child: the parent's executable graphs are abandoned, not freed (their gated copies
 * are the parent's driver objects, and a thread of the parent may have held an entry's lock
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
    cudahal_graph_twin_destroy(x->twin); /* the driver frees it once its launches are done */
    cudahal_graph_destroy(x->clone);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

/* ---- what was done, said at exit ---- */

static _Atomic uint64_t gated_launches, gates_launched, whole_launches[CUDAHAL_GRAPH_WHOLE_COUNT];

static void count(int reason, size_t gates)
{
    if (reason >= 0) {
        atomic_fetch_add_explicit(&whole_launches[reason], 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&gated_launches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&gates_launched, gates, memory_order_relaxed);
}

__attribute__((destructor)) static void say_counts(void)
{
    char whole[1024] = "";
    size_t used = 0;
    for (int i = 0; i < CUDAHAL_GRAPH_WHOLE_COUNT && used < sizeof whole; i++) {
        uint64_t n = atomic_load(&whole_launches[i]);
        if (n)
            used += (size_t)snprintf(whole + used, sizeof whole - used, "; %llu left whole: %s",
                                     (unsigned long long)n, cudahal_graph_whole_reason(i));
    }
    uint64_t gated = atomic_load(&gated_launches);
    if (gated || used)
        gp_log(GP_LOG_INFO, "graph launches: %llu gated (%llu gates)%s", (unsigned long long)gated,
               (unsigned long long)atomic_load(&gates_launched), whole);
}

/* ---- instantiation, change, destruction ---- */

static void instantiated(CUgraphExec e, CUgraph graph, unsigned long long flags)
{
    struct graph_exec *x = calloc(1, sizeof *x);
    if (!x)
        return; /* not remembered: launched whole, as UNKNOWN */
    x->app = e;
    x->whole = -1;
    x->ctx = cudahal_graph_context();
    x->flags = flags & (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                        CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY);
    pthread_mutex_init(&x->mu, NULL);
    int reason = -1;
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
        reason = CUDAHAL_GRAPH_WHOLE_DEVICE_LAUNCH;
    else if ((reason = cudahal_graph_survey(graph, &x->kernels)) < 0 &&
             !(x->clone = cudahal_graph_clone(graph)))
        reason = CUDAHAL_GRAPH_WHOLE_FAILED;
    x->whole = reason;
    if (reason >= 0)
        gp_log(GP_LOG_DEBUG, "executable graph %p: launched whole: %s", (void *)e,
               cudahal_graph_whole_reason(reason));
    /* A handle seen again died unseen, with its context (a reset or a context's destruction,
     * which take executable graphs with them): its entry is old, its gated copy dead with it, so
     * nothing of it is handed to the driver again (a copy of its graph not yet built on is
     * left to the driver). */
    struct graph_exec *old = take(e);
    if (old) {
        cudahal_graph_twin_forget(old->twin);
        pthread_mutex_destroy(&old->mu);
        free(old);
    }
    gp_mutex_lock(&table_mu, GP_RANK_GRAPH_TABLE);
    x->next = table[bucket(e)];
    table[bucket(e)] = x;
    gp_mutex_unlock(&table_mu, GP_RANK_GRAPH_TABLE);
}

/* The flags of an instantiation, from the third argument of its form (a form with another type
 * there is a compile error). */
static unsigned long long params_flags(const CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
    return params ? params->flags : 0;
}
static unsigned long long given_flags(unsigned long long flags)
{
    return flags;
}
static unsigned long long no_flags(CUgraphNode *error_node)
{
    (void)error_node;
    return 0;
}
#define INSTANTIATE_FLAGS(third)                                                                   \
    _Generic((third), CUDA_GRAPH_INSTANTIATE_PARAMS *: params_flags,                               \
             unsigned long long: given_flags, CUgraphNode *: no_flags)(third)

/* Every instantiate form's first two arguments are the executable graph's out-parameter and the
 * graph. */
#define INSTANTIATED(r, exec_out, graph, third, ...)                                               \
    do {                                                                                           \
        if ((r) == CUDA_SUCCESS && gate_ns() && (exec_out))                                        \
            instantiated(*(exec_out), graph, INSTANTIATE_FLAGS(third));                            \
    } while (0)
#define GRAPH_APPLY(macro, ...) macro(__VA_ARGS__)

/* graph_NAME of each entry of an instantiate kind, all alike (an instantiate kind missing here
 * leaves its entries' graph_NAME undefined: a link error). */
#define INSTANTIATE_FORM(name, params, args)                                                       \
    CUresult graph_##name(const struct core_call *c, CUresult(*real) params, CORE_ARGS params)     \
    {                                                                                              \
        (void)c;                                                                                   \
        CUresult r = real args;                                                                    \
        GRAPH_APPLY(INSTANTIATED, r, CORE_ARGS args, ~);                                           \
        return r;                                                                                  \
    }
#define INSTANTIATE_GRAPH_INSTANTIATE ~, INSTANTIATE_FORM
#define INSTANTIATE_GRAPH_INSTANTIATE_IF ~, INSTANTIATE_FORM
#define INSTANTIATE_GRAPH_INSTANTIATE_IF_PT ~, INSTANTIATE_FORM
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    GRAPH_PICK(INSTANTIATE_##kind)(name, params, args)
#include "cuda_api.def"
#undef CUDA_API

void graph_exec_changing(void *exec)
{
    if (!gate_ns())
        return;
    struct graph_exec *x = find((CUgraphExec)exec);
    if (x)
        atomic_store(&x->changed, true);
}

/* CUDA lets an executable graph be destroyed while launches of it run, and so its gated copy. */
CUresult graph_cuGraphExecDestroy(const struct core_call *c, CUresult (*real)(CUgraphExec),
                                  CUgraphExec hGraphExec)
{
    (void)c;
    CUresult r = real(hGraphExec);
    if (r == CUDA_SUCCESS && gate_ns())
        forget(take(hGraphExec));
    return r;
}

/* ---- launches ---- */

/* The stream a launch is made on: its handle as launch() names it, and its id where the driver
 * says it. */
struct launch_stream {
    CUstream named;
    bool id_known;
    uint64_t id;
};

/* Whether s is the stream of x's last launch (x->mu held), as far as can be told: the per-thread
 * handle names the calling thread's stream, so it counts as the same only on the same thread (the
 * legacy stream too, to be safe); a handle is an address, which a stream created after the
 * application destroyed the last one may get, so where the driver gave both ids they must match
 * too (the destroyed stream's launches may still run, and nothing would order them before). */
static bool same_stream(const struct graph_exec *x, const struct launch_stream *s)
{
    CUstream h = s->named;
    bool special = h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD;
    return x->launched && x->last_known && x->last_stream == h &&
           (!special || x->last_thread == gp_thread_serial()) &&
           (!x->last_id_known || !s->id_known || x->last_id == s->id);
}

/* The gated copy is given up for good (x->mu held): a launch of the application's own executable
 * graph on `stream` follows, which the driver does not order after the copy's launches, so where
 * those were on another stream, that stream is made to wait on the device for the copy's event
 * (recorded behind each of its launches). Never on the host: a stream of the application may
 * wait for what this thread does after the launch returns. Not into a capture (stream
 * capturing), whose graph would take gpuprio's wait: docs/design.md. */
static void retire(struct graph_exec *x, const struct launch_stream *stream, bool capturing)
{
    if (x->twin_launched && !same_stream(x, stream) && !capturing &&
        cudahal_graph_twin_order(x->twin, stream->named) != 0)
        gp_log(GP_LOG_DEBUG,
               "executable graph %p: its launch on another stream is not ordered "
               "after its gated copy's",
               (void *)x->app);
    cudahal_graph_twin_destroy(x->twin);
    x->twin = NULL;
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
        return CUDAHAL_GRAPH_WHOLE_CAPTURING;
    uint64_t learned = c->ticket.cost_key ? xc_predict(c->ticket.cost_key) : 0,
             every_ns = gate_ns();
    if (!learned)
        return CUDAHAL_GRAPH_WHOLE_NOT_LEARNED;
    if (learned <= every_ns)
        return CUDAHAL_GRAPH_WHOLE_SHORT;
    x->open_word = cudahal_graph_open_word();
    int rc = x->open_word ? cudahal_graph_twin_build(x->clone, x->ctx, every_ns, learned, line,
                                                     x->flags, &x->twin)
                          : -EIO;
    if (!x->open_word)
        cudahal_graph_destroy(x->clone);
    x->clone = NULL;
    if (rc) {
        x->whole = rc == -ENOENT ? CUDAHAL_GRAPH_WHOLE_NO_PLACE : CUDAHAL_GRAPH_WHOLE_FAILED;
        gp_log(GP_LOG_DEBUG, "executable graph %p: its gated copy could not be built (%d)",
               (void *)x->app, rc);
        return x->whole;
    }
    gp_log(GP_LOG_DEBUG,
           "executable graph %p: gated copy with %zu gates among its %zu kernel nodes, %zu of "
           "them with a predicted time (learned %llu us)",
           (void *)x->app, cudahal_graph_twin_gates(x->twin), x->kernels,
           cudahal_graph_twin_noted(x->twin), (unsigned long long)(learned / 1000));
    return -1;
}

/* A launch (or, with upload, an upload) of the application's executable graph e on stream s
 * (with ptsz, a _ptsz form: there 0 is the per-thread stream). */
static CUresult launch(const struct core_call *c, CUresult (*real)(CUgraphExec, CUstream),
                       CUgraphExec e, CUstream s, bool upload, bool ptsz)
{
    if (!gate_ns())
        return real(e, s);
    /* The stream s names, for the calls gpuprio makes itself (without _ptsz) and to compare. */
    CUstream named = s ? s : ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    struct launch_stream on = {.named = named};
    struct graph_exec *x = find(e);
    if (!x) {
        if (!upload)
            count(CUDAHAL_GRAPH_WHOLE_UNKNOWN, 0);
        return real(e, s);
    }
    /* The legacy and per-thread streams are never destroyed: told apart by thread instead. */
    if (named != CU_STREAM_LEGACY && named != CU_STREAM_PER_THREAD)
        on.id_known = cudahal_graph_stream_id(named, &on.id) == 0;
    gp_mutex_lock(&x->mu, GP_RANK_GRAPH_LAUNCH);
    if (x->whole < 0 && atomic_load(&x->changed)) {
        x->whole = CUDAHAL_GRAPH_WHOLE_CHANGED;
        cudahal_graph_destroy(x->clone); /* never built on now */
        x->clone = NULL;
    }
    /* Whether the launch goes into a capture (1; -EIO: cannot be told), asked of the driver only
     * while one is in progress: a stream may join another's capture by waiting on its event. */
    int into_capture = xq_capturing() ? cudahal_graph_stream_capturing(named) : 0;
    /* Not at an upload, which runs nothing: the next launch is the one to order. */
    if (x->whole >= 0 && x->twin && !upload)
        retire(x, &on, into_capture != 0);
    CUgraphExec use = e;
    size_t gates = 0;
    int reason = x->whole;
    if (reason < 0 && into_capture)
        reason = CUDAHAL_GRAPH_WHOLE_CAPTURING;
    uint64_t line = reason < 0 ? gate_line(c->q) : 0;
    if (reason < 0 && !x->twin)
        reason = upload  ? CUDAHAL_GRAPH_WHOLE_NOT_LEARNED
                 : !line ? CUDAHAL_GRAPH_WHOLE_NOT_GATED
                         : build(x, c, line);
    if (reason < 0 && !x->twin_launched && x->launched && !same_stream(x, &on))
        reason = CUDAHAL_GRAPH_WHOLE_OTHER_STREAM;
    if (reason < 0) {
        uint64_t target = line ? line : x->open_word;
        if (!xq_capturing() && cudahal_graph_twin_target(x->twin, target) != 0) {
            x->whole = reason = CUDAHAL_GRAPH_WHOLE_FAILED;
            if (!upload) /* else at the next launch */
                retire(x, &on, false);
        } else {
            use = cudahal_graph_twin_exec(x->twin);
            if (line)
                gates = cudahal_graph_twin_gates(x->twin);
            else
                reason = CUDAHAL_GRAPH_WHOLE_NOT_GATED; /* the copy, with its gates open */
        }
    }
    CUresult r = real(use, s);
    if (r != CUDA_SUCCESS && use != e) {
        /* The gated copy's launch failed (its first uploads a second executable graph: out of
         * memory, say): given up for good, and the application's own launched, which is what
         * the application asked for (at an upload, the copy is retired at the next launch). */
        gp_log(GP_LOG_DEBUG,
               "executable graph %p: its gated copy's %s failed (%d): whole from now on",
               (void *)x->app, upload ? "upload" : "launch", (int)r);
        x->whole = reason = CUDAHAL_GRAPH_WHOLE_FAILED;
        gates = 0;
        if (!upload)
            retire(x, &on, false);
        use = e;
        r = real(e, s);
    }
    /* A launch into a capture runs nothing: the last launch that runs stays the one to follow. */
    if (r == CUDA_SUCCESS && !upload && into_capture != 1) {
        x->launched = true;
        x->last_known = into_capture == 0;
        x->last_stream = named;
        x->last_thread = gp_thread_serial();
        x->last_id_known = on.id_known;
        x->last_id = on.id;
        if (use != e) {
            x->twin_launched = true;
            cudahal_graph_twin_launched(x->twin, named);
        }
    }
    gp_mutex_unlock(&x->mu, GP_RANK_GRAPH_LAUNCH);
    if (r == CUDA_SUCCESS && !upload)
        count(reason, gates);
    return r;
}

CUresult graph_cuGraphLaunch(const struct core_call *c, CUresult (*real)(CUgraphExec, CUstream),
                             CUgraphExec hGraph, CUstream hStream)
{
    return launch(c, real, hGraph, hStream, false, false);
}

CUresult graph_cuGraphLaunch_ptsz(const struct core_call *c,
                                  CUresult (*real)(CUgraphExec, CUstream), CUgraphExec hGraph,
                                  CUstream hStream)
{
    return launch(c, real, hGraph, hStream, false, true);
}

CUresult graph_cuGraphUpload(const struct core_call *c, CUresult (*real)(CUgraphExec, CUstream),
                             CUgraphExec hGraph, CUstream hStream)
{
    return launch(c, real, hGraph, hStream, true, false);
}

CUresult graph_cuGraphUpload_ptsz(const struct core_call *c,
                                  CUresult (*real)(CUgraphExec, CUstream), CUgraphExec hGraph,
                                  CUstream hStream)
{
    return launch(c, real, hGraph, hStream, true, true);
}
