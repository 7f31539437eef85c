/*
 * sim_graph.c - stream capture and graphs.
 *
 * A capture records the commands put on its streams, in submission order, into a graph; a graph
 * is a list of command templates, and launching an instantiated graph queues clones of them on
 * the launch stream. Recording in one list serializes work that captured streams could run
 * side by side, which is a legal execution of the graph and enough for the applications and
 * shims under test. Captures are host-side state only: nothing runs while capturing.
 */
#include "sim_internal.h"

#include <stdlib.h>

/* hipGraphInstantiateWithParams and its types are newer than the 5.2.3 headers; the shim's
 * compatibility header declares them as upstream does. */
#include "../../src/shim/hip/hip_compat_shim.h"

struct ihipGraph {
    struct sim_cmd **nodes;
    size_t count, cap;
};

struct hipGraphExec {
    struct ihipGraph graph;
};

struct sim_capture {
    int refs;
    bool active, invalidated;
    hipStreamCaptureMode mode;
    unsigned long long id;
    struct ihipStream_t *origin;
    struct ihipGraph *graph;
};

static unsigned long long next_capture_id;

static void graph_free_nodes(struct ihipGraph *g)
{
    for (size_t i = 0; i < g->count; i++)
        sim_cmd_unref(g->nodes[i]);
    free(g->nodes);
    g->nodes = NULL;
    g->count = g->cap = 0;
}

static int graph_append(struct ihipGraph *g, struct sim_cmd *cmd)
{
    if (g->count == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        struct sim_cmd **n = realloc(g->nodes, cap * sizeof *n);
        if (!n)
            return -1;
        g->nodes = n;
        g->cap = cap;
    }
    g->nodes[g->count++] = cmd;
    return 0;
}

void sim_capture_ref(struct sim_capture *cap)
{
    cap->refs++;
}

void sim_capture_unref(struct sim_capture *cap)
{
    if (--cap->refs > 0)
        return;
    if (cap->graph) { /* never handed to the application */
        graph_free_nodes(cap->graph);
        free(cap->graph);
    }
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

void sim_capture_append(struct sim_capture *cap, struct sim_cmd *cmd)
{
    if (graph_append(cap->graph, cmd) < 0) {
        sim_cmd_unref(cmd);
        cap->invalidated = true;
    }
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

hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t *nodes, size_t *numNodes)
{
    sim_init();
    if (!numNodes)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    if (sim_handle_valid(graph, SIM_H_GRAPH)) {
        if (nodes) /* node handles are the recorded commands; they are opaque to callers */
            for (size_t i = 0; i < *numNodes && i < graph->count; i++)
                nodes[i] = (hipGraphNode_t)(void *)graph->nodes[i];
        *numNodes = graph->count;
        err = hipSuccess;
    }
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipGraphDestroy(hipGraph_t graph)
{
    sim_init();
    sim_lock();
    bool ok = sim_handle_valid(graph, SIM_H_GRAPH);
    if (ok) {
        sim_handle_remove(graph);
        graph_free_nodes(graph);
        free(graph);
    }
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}

/* Returns the result without recording it: callers pass it through sim_ret. */
static hipError_t instantiate(hipGraphExec_t *exec, hipGraph_t graph)
{
    sim_init();
    if (!exec)
        return hipErrorInvalidValue;
    sim_lock();
    hipError_t err = hipErrorInvalidValue;
    struct hipGraphExec *x = NULL;
    if (!sim_handle_valid(graph, SIM_H_GRAPH))
        goto out;
    err = hipErrorOutOfMemory;
    x = calloc(1, sizeof *x);
    if (!x)
        goto out;
    for (size_t i = 0; i < graph->count; i++) {
        struct sim_cmd *c = sim_cmd_clone(graph->nodes[i]);
        if (!c || graph_append(&x->graph, c) < 0) {
            sim_cmd_unref(c);
            goto fail;
        }
    }
    if (sim_handle_add(x, SIM_H_GRAPH_EXEC) < 0)
        goto fail;
    *exec = x;
    err = hipSuccess;
    goto out;
fail:
    graph_free_nodes(&x->graph);
    free(x);
out:
    sim_unlock();
    return err;
}

hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                               hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize)
{
    SIM_UNUSED(pErrorNode);
    if (pLogBuffer && bufferSize)
        pLogBuffer[0] = '\0';
    return sim_ret(instantiate(pGraphExec, graph));
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                                        unsigned long long flags)
{
    SIM_UNUSED(flags);
    return sim_ret(instantiate(pGraphExec, graph));
}

/*
 * Uploading has nothing to do in the simulator but check its arguments. Returns the result
 * without recording it.
 */
static hipError_t graph_upload(hipGraphExec_t exec, hipStream_t stream)
{
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_handle_valid(exec, SIM_H_GRAPH_EXEC)
                         ? sim_stream_resolve(stream, false, &s)
                         : hipErrorInvalidValue;
    sim_unlock();
    return err;
}

/*
 * As ROCm/clr: flags must be 0 or exactly one of the four flags; hipGraphInstantiateFlagUpload
 * uploads the new graph on uploadStream (hipGraphUpload), whose error is the call's, with the
 * executable graph already handed out.
 */
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                                         hipGraphInstantiateParams *instantiateParams)
{
    sim_init();
    if (!pGraphExec || !graph || !instantiateParams)
        return sim_ret(hipErrorInvalidValue);
    unsigned long long flags = instantiateParams->flags;
    if (flags != 0 && flags != hipGraphInstantiateFlagAutoFreeOnLaunch &&
        flags != hipGraphInstantiateFlagUpload && flags != hipGraphInstantiateFlagDeviceLaunch &&
        flags != hipGraphInstantiateFlagUseNodePriority) {
        instantiateParams->result_out = hipGraphInstantiateError;
        return sim_ret(hipErrorInvalidValue);
    }
    hipError_t err = instantiate(pGraphExec, graph);
    if (err != hipSuccess) {
        instantiateParams->result_out = hipGraphInstantiateError;
        return sim_ret(err);
    }
    instantiateParams->result_out = hipGraphInstantiateSuccess;
    instantiateParams->errNode_out = NULL;
    if (flags == hipGraphInstantiateFlagUpload)
        err = graph_upload(*pGraphExec, instantiateParams->uploadStream);
    return sim_ret(err);
}

hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec)
{
    sim_init();
    sim_lock();
    bool ok = sim_handle_valid(graphExec, SIM_H_GRAPH_EXEC);
    if (ok) {
        sim_handle_remove(graphExec);
        graph_free_nodes(&graphExec->graph);
        free(graphExec);
    }
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorInvalidValue);
}

static hipError_t graph_launch(hipGraphExec_t exec, hipStream_t stream, bool spt)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = hipErrorInvalidValue;
    if (!sim_handle_valid(exec, SIM_H_GRAPH_EXEC))
        goto out;
    err = sim_stream_resolve(stream, spt, &s);
    for (size_t i = 0; err == hipSuccess && i < exec->graph.count; i++) {
        struct sim_cmd *c = sim_cmd_clone(exec->graph.nodes[i]);
        err = c ? sim_submit(s, c) : hipErrorOutOfMemory;
    }
out:
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream)
{
    return graph_launch(graphExec, stream, false);
}

hipError_t hipGraphLaunch_spt(hipGraphExec_t graphExec, hipStream_t stream)
{
    return graph_launch(graphExec, stream, true);
}

hipError_t hipGraphUpload(hipGraphExec_t graphExec, hipStream_t stream)
{
    sim_init();
    return sim_ret(graph_upload(graphExec, stream));
}
