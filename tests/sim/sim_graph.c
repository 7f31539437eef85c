/*
 * sim_graph.c - stream capture, and the graph itself: its nodes, edges and order (sim_graph.h).
 *
 * A capture records the commands put on its streams, in submission order, into a graph: each
 * becomes a node with an edge from the one before, so a captured graph is a chain. That
 * serializes work that captured streams could run side by side, which is a legal execution of the
 * graph and enough for the applications and shims under test. Captures are host-side state only:
 * nothing runs while capturing. The node-level API is sim_graph_nodes.c's; instantiation and
 * launches are sim_graph_exec.c's.
 */
#include "sim_graph.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/util/gp_grow.h"

struct sim_capture {
    int refs;
    bool active, invalidated;
    hipStreamCaptureMode mode;
    uint64_t thread; /* the thread that began it (this_thread()) */
    unsigned long long id;
    struct ihipStream_t *origin;
    struct ihipGraph *graph;
    struct hipGraphNode *last; /* the node the next one captured depends on */
};

static unsigned long long next_capture_id;
static uint64_t next_node_id;

/* A number of the calling thread's that no other thread has had or will have (from 1): clr lists
 * the captures a thread begins in global or thread-local mode as that thread's
 * (hip::tls.capture_streams_), which only that thread may end, and which the calls it deems unsafe
 * break when made on that thread. Not a thread-local's address, which a later thread reuses: that
 * thread would own a dead thread's capture, where in clr the list died with its thread. */
static _Atomic uint64_t last_thread_serial;
static _Thread_local uint64_t thread_serial;

static uint64_t this_thread(void)
{
    if (!thread_serial)
        thread_serial = atomic_fetch_add(&last_thread_serial, 1) + 1;
    return thread_serial;
}

/* ---- graph calls (hipsimGraphCalls) ---- */

static _Atomic uint64_t graph_calls[SIM_GC_COUNT];

void sim_graph_count(enum sim_graph_call call)
{
    atomic_fetch_add(&graph_calls[call], 1);
}

uint64_t hipsimGraphCalls(const char *name)
{
    static const char *const names[] = {
#define SIM_GRAPH_CALL_NAME(n) #n,
        SIM_GRAPH_CALLS(SIM_GRAPH_CALL_NAME)
#undef SIM_GRAPH_CALL_NAME
    };
    uint64_t n = 0;
    for (size_t i = 0; i < SIM_GC_COUNT; i++)
        if (!name || strcmp(name, names[i]) == 0)
            n += atomic_load(&graph_calls[i]);
    return n;
}

/* ---- nodes and edges ---- */

int sim_graph_edge_add(struct hipGraphNode *from, struct hipGraphNode *to)
{
    struct hipGraphNode **out = gp_grow(from->out, &from->cap_out, from->nout, sizeof *out, 4);
    if (!out)
        return -ENOMEM;
    from->out = out;
    from->out[from->nout++] = to;
    to->nin++;
    return 0;
}

bool sim_graph_edge_remove(struct hipGraphNode *from, struct hipGraphNode *to)
{
    for (size_t i = 0; i < from->nout; i++)
        if (from->out[i] == to) {
            memmove(from->out + i, from->out + i + 1, (from->nout - i - 1) * sizeof *from->out);
            from->nout--;
            to->nin--;
            return true;
        }
    return false;
}

bool sim_gnode_valid(hipGraphNode_t node)
{
    return sim_handle_valid(node, SIM_H_GRAPH_NODE);
}

/* Appends a node with proto's work (and id, when it has one) to g, without edges; NULL when out of
 * memory, proto's work then still the caller's. */
static struct hipGraphNode *node_append(struct ihipGraph *g, const struct hipGraphNode *proto)
{
    struct hipGraphNode *n = calloc(1, sizeof *n);
    struct hipGraphNode **nodes = gp_grow(g->nodes, &g->cap, g->count, sizeof *nodes, 8);
    if (nodes)
        g->nodes = nodes;
    if (!n || !nodes || sim_handle_add(n, SIM_H_GRAPH_NODE) < 0) {
        free(n);
        return NULL;
    }
    n->id = proto->id ? proto->id : ++next_node_id;
    n->graph = g;
    n->type = proto->type;
    n->tmpl = proto->tmpl;
    n->batch = proto->batch;
    n->child = proto->child;
    n->mem = proto->mem;
    g->nodes[g->count++] = n;
    return n;
}

/* Frees n and its work; its edges must be gone or going with its graph. */
static void node_free(struct hipGraphNode *n)
{
    sim_handle_remove(n);
    sim_cmd_unref(n->tmpl);
    if (n->child)
        sim_graph_free(n->child);
    if (n->type == SIM_NODE_MEM_ALLOC)
        free(n->mem);
    free(n->out);
    free(n);
}

hipError_t sim_graph_check_deps(hipGraph_t graph, const hipGraphNode_t *deps, size_t ndeps)
{
    if (!sim_handle_valid(graph, SIM_H_GRAPH))
        return hipErrorInvalidValue;
    for (size_t i = 0; i < ndeps; i++) {
        if (!sim_gnode_valid(deps[i]) || deps[i]->graph != graph)
            return hipErrorInvalidValue;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i])
                return hipErrorInvalidValue;
    }
    return hipSuccess;
}

hipError_t sim_graph_add_node(hipGraph_t graph, const hipGraphNode_t *deps, size_t ndeps,
                              const struct hipGraphNode *proto, struct hipGraphNode **out)
{
    hipError_t err = sim_graph_check_deps(graph, deps, ndeps);
    if (err != hipSuccess)
        return err;
    struct hipGraphNode *n = node_append(graph, proto);
    if (!n)
        return hipErrorOutOfMemory;
    for (size_t i = 0; i < ndeps; i++)
        if (sim_graph_edge_add(deps[i], n) < 0) {
            while (i-- > 0)
                sim_graph_edge_remove(deps[i], n);
            graph->count--;
            n->tmpl = NULL; /* the caller's again */
            n->child = NULL;
            n->mem = NULL;
            node_free(n);
            return hipErrorOutOfMemory;
        }
    *out = n;
    return hipSuccess;
}

size_t sim_graph_order(const struct ihipGraph *g, struct hipGraphNode **order)
{
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < g->count; i++) {
        g->nodes[i]->scratch = g->nodes[i]->nin;
        if (!g->nodes[i]->nin)
            order[tail++] = g->nodes[i];
    }
    while (head < tail) {
        const struct hipGraphNode *n = order[head++];
        for (size_t i = 0; i < n->nout; i++)
            if (--n->out[i]->scratch == 0)
                order[tail++] = n->out[i];
    }
    return tail;
}

struct ihipGraph *sim_graph_copy(const struct ihipGraph *g)
{
    struct ihipGraph *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    for (size_t i = 0; i < g->count; i++) {
        const struct hipGraphNode *n = g->nodes[i];
        struct hipGraphNode proto = {.id = n->id, .type = n->type, .batch = n->batch};
        if (n->type == SIM_NODE_MEM_FREE)
            proto.mem = n->mem; /* an allocation node's memory is its own alone */
        proto.tmpl = n->tmpl ? sim_cmd_clone(n->tmpl) : NULL;
        proto.child = n->child ? sim_graph_copy(n->child) : NULL;
        if ((n->tmpl && !proto.tmpl) || (n->child && !proto.child) || !node_append(c, &proto)) {
            sim_cmd_unref(proto.tmpl);
            if (proto.child)
                sim_graph_free(proto.child);
            goto fail;
        }
        g->nodes[i]->scratch = i;
    }
    for (size_t i = 0; i < g->count; i++)
        for (size_t j = 0; j < g->nodes[i]->nout; j++)
            if (sim_graph_edge_add(c->nodes[i], c->nodes[g->nodes[i]->out[j]->scratch]) < 0)
                goto fail;
    return c;
fail:
    sim_graph_free(c);
    return NULL;
}

void sim_graph_free(struct ihipGraph *g)
{
    for (size_t i = 0; i < g->count; i++)
        node_free(g->nodes[i]);
    free(g->nodes);
    free(g);
}

/* ---- capture ---- */

/* The type of the node a captured command becomes. */
static enum sim_node_type captured_type(const struct sim_cmd *cmd)
{
    switch (cmd->kind) {
    case SIM_CMD_KERNEL:
        return SIM_NODE_KERNEL;
    case SIM_CMD_COPY:
        return SIM_NODE_MEMCPY;
    case SIM_CMD_SET:
        return SIM_NODE_MEMSET;
    case SIM_CMD_HOST_FN:
        return SIM_NODE_HOST;
    case SIM_CMD_MARKER:
        return SIM_NODE_EVENT_RECORD;
    case SIM_CMD_WAIT:
        return SIM_NODE_WAIT_EVENT;
    case SIM_CMD_WAIT_VALUE:
    case SIM_CMD_WRITE_VALUE:
        return SIM_NODE_BATCH_MEM_OP;
    case SIM_CMD_FREE:
        return SIM_NODE_MEM_FREE;
    }
    return SIM_NODE_EMPTY;
}

void sim_capture_ref(struct sim_capture *cap)
{
    cap->refs++;
}

void sim_capture_unref(struct sim_capture *cap)
{
    if (--cap->refs > 0)
        return;
    if (cap->graph) /* never handed to the application */
        sim_graph_free(cap->graph);
    free(cap);
}

bool sim_capture_invalidated(const struct sim_capture *cap)
{
    return cap->invalidated;
}

bool sim_capture_active(const struct sim_capture *cap)
{
    return cap->active;
}

void sim_capture_invalidate(struct sim_capture *cap)
{
    cap->invalidated = true;
}

void sim_invalidate_global_captures(void)
{
    for (int d = 0; d < sim.cfg.devices; d++)
        for (struct ihipStream_t *s = sim.dev[d].streams; s; s = s->next)
            if (s->capture && s->capture->mode == hipStreamCaptureModeGlobal)
                s->capture->invalidated = true;
}

/* Each capture once, as its origin stream holds it: invalidates those begun by this thread
 * (own) or those in global mode (!own) that are not relaxed, and says whether there were any. */
static bool invalidate_unsafe(bool own)
{
    bool any = false;
    for (int d = 0; d < sim.cfg.devices; d++)
        for (struct ihipStream_t *s = sim.dev[d].streams; s; s = s->next) {
            struct sim_capture *cap = s->capture;
            if (!cap || cap->origin != s || !cap->active ||
                cap->mode == hipStreamCaptureModeRelaxed ||
                (own ? cap->thread != this_thread() : cap->mode != hipStreamCaptureModeGlobal))
                continue;
            cap->invalidated = true;
            any = true;
        }
    return any;
}

bool sim_capture_ongoing(hipStreamCaptureMode mode)
{
    if (mode == hipStreamCaptureModeRelaxed)
        return false;
    return invalidate_unsafe(false) || invalidate_unsafe(true);
}

/* As clr's CHECK_STREAM_CAPTURE_SUPPORTED: the thread's own captures first, and only where it
 * has none every global one. An invalidated capture still counts until it is ended. */
bool sim_capture_unsafe(hipStreamCaptureMode mode)
{
    if (mode == hipStreamCaptureModeRelaxed)
        return false;
    return invalidate_unsafe(true) ||
           (mode == hipStreamCaptureModeGlobal && invalidate_unsafe(false));
}

void sim_capture_append(struct sim_capture *cap, struct sim_cmd *cmd)
{
    struct hipGraphNode proto = {.type = captured_type(cmd), .tmpl = cmd};
    struct hipGraphNode *n = node_append(cap->graph, &proto);
    if (!n || (cap->last && sim_graph_edge_add(cap->last, n) < 0)) {
        if (!n)
            sim_cmd_unref(cmd);
        cap->invalidated = true; /* the node, if any, goes with the graph */
        return;
    }
    cap->last = n;
}

/* ---- capture API ---- */

static hipError_t begin_capture(hipStream_t stream, hipStreamCaptureMode mode, bool spt)
{
    sim_init();
    if (mode != hipStreamCaptureModeGlobal && mode != hipStreamCaptureModeThreadLocal &&
        mode != hipStreamCaptureModeRelaxed)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    if (err == hipSuccess && s->kind == SIM_STREAM_NULL)
        err = hipErrorStreamCaptureUnsupported;
    else if (err == hipSuccess && s->capture)
        err = hipErrorIllegalState;
    if (err != hipSuccess)
        goto out;
    struct sim_capture *cap = calloc(1, sizeof *cap);
    struct ihipGraph *g = calloc(1, sizeof *g);
    if (!cap || !g) {
        free(cap);
        free(g);
        err = hipErrorOutOfMemory;
        goto out;
    }
    cap->refs = 1; /* held by the origin stream */
    cap->active = true;
    cap->mode = mode;
    cap->thread = this_thread();
    cap->id = ++next_capture_id;
    cap->origin = s;
    cap->graph = g;
    s->capture = cap;
    if (mode == hipStreamCaptureModeGlobal)
        sim.global_captures++;
out:
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
    return begin_capture(stream, mode, false);
}

hipError_t hipStreamBeginCapture_spt(hipStream_t stream, hipStreamCaptureMode mode)
{
    return begin_capture(stream, mode, true);
}

/* Ends cap on every stream that joined it. */
static void capture_finish(struct sim_capture *cap)
{
    cap->active = false;
    if (cap->mode == hipStreamCaptureModeGlobal)
        sim.global_captures--;
    for (int d = 0; d < sim.cfg.devices; d++)
        for (struct ihipStream_t *o = sim.dev[d].streams; o; o = o->next)
            if (o->capture == cap) {
                o->capture = NULL;
                sim_capture_unref(cap);
            }
}

void sim_capture_leave(struct ihipStream_t *s)
{
    struct sim_capture *cap = s->capture;
    cap->invalidated = true;
    if (cap->origin == s) {
        capture_finish(cap);
    } else {
        s->capture = NULL;
        sim_capture_unref(cap);
    }
}

static hipError_t end_capture(hipStream_t stream, hipGraph_t *graph, bool spt)
{
    sim_init();
    if (!graph)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    if (err != hipSuccess)
        goto out;
    struct sim_capture *cap = s->capture;
    if (!cap) {
        err = hipErrorIllegalState;
        goto out;
    }
    if (cap->origin != s) {
        err = hipErrorStreamCaptureUnmatched;
        goto out;
    }
    if (cap->mode != hipStreamCaptureModeRelaxed && cap->thread != this_thread()) {
        err = hipErrorStreamCaptureWrongThread; /* the capture goes on */
        goto out;
    }
    sim_capture_ref(cap);
    capture_finish(cap);
    if (cap->invalidated) {
        *graph = NULL;
        err = hipErrorStreamCaptureInvalidated;
    } else if (sim_handle_add(cap->graph, SIM_H_GRAPH) < 0) {
        *graph = NULL;
        err = hipErrorOutOfMemory;
    } else {
        *graph = cap->graph;
        cap->graph = NULL; /* the application owns it now */
    }
    sim_capture_unref(cap);
out:
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
    return end_capture(stream, pGraph, false);
}

hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t *pGraph)
{
    return end_capture(stream, pGraph, true);
}

static hipError_t capture_info(hipStream_t stream, bool spt, hipStreamCaptureStatus *status,
                               unsigned long long *id)
{
    sim_init();
    if (!status)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    if (err == hipSuccess) {
        const struct sim_capture *cap = s->capture;
        *status = !cap               ? hipStreamCaptureStatusNone
                  : cap->invalidated ? hipStreamCaptureStatusInvalidated
                                     : hipStreamCaptureStatusActive;
        if (id && cap)
            *id = cap->id;
    }
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus)
{
    return capture_info(stream, false, pCaptureStatus, NULL);
}

hipError_t hipStreamIsCapturing_spt(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus)
{
    return capture_info(stream, true, pCaptureStatus, NULL);
}

hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus,
                                   unsigned long long *pId)
{
    return capture_info(stream, false, pCaptureStatus, pId);
}

hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus,
                                       unsigned long long *pId)
{
    return capture_info(stream, true, pCaptureStatus, pId);
}

/* ---- graphs ---- */

hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags)
{
    SIM_GRAPH_CALL(hipGraphCreate);
    sim_init();
    if (!pGraph || flags)
        return sim_ret(hipErrorInvalidValue);
    struct ihipGraph *g = calloc(1, sizeof *g);
    if (!g)
        return sim_ret(hipErrorOutOfMemory);
    sim_lock();
    int rc = sim_handle_add(g, SIM_H_GRAPH);
    sim_unlock();
    if (rc < 0) {
        free(g);
        return sim_ret(hipErrorOutOfMemory);
    }
    *pGraph = g;
    return sim_ret(hipSuccess);
}

hipError_t hipGraphDestroy(hipGraph_t graph)
{
    SIM_GRAPH_CALL(hipGraphDestroy);
    sim_init();
    sim_lock();
    bool ok = sim_handle_valid(graph, SIM_H_GRAPH);
    if (ok) {
        sim_handle_remove(graph);
        sim_graph_free(graph);
    }
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}
