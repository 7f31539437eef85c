/*
 * call.c - the wrapper skeleton every platform's shim shares: what happens before and after an
 * intercepted call is forwarded (core.h, CORE_WRAPPER_BODY).
 *
 * Before: find the queue the call acts on and, for work, admit it (which may hold the thread).
 * After, inside the depth (the runtime may call its own exports from here): hand the command
 * over to be followed, register or forget streams (whose creation the shim's creators may adjust
 * in between: creation.c), note captures, hand out wrappers from lookups; around a device reset or
 * a context's destruction, drop what dies with it (teardown.c). Which of these a call
 * gets follows only from its kind (kinds.def).
 *
 * The legacy launch sequence names its stream in one call (CONFIGURE: hipConfigureCall) and
 * puts the work on it in another (CONFIGURED_LAUNCH: hipLaunchByPtr), which pops the runtime's
 * per-thread stack of configurations (nested when a launch's arguments launch kernels
 * themselves). A stack of the configured streams mirrors it, per thread. Deeper configurations
 * than it holds are only counted, and their launches go through unobserved, like a launch with
 * nothing configured (undefined in ROCm, whose stack pops empty) or one configured by
 * __hipPushCallConfiguration, which compilers never mix with hipLaunchByPtr.
 */
#include <string.h>

#include "core.h"
#include "sched_board.h"

#define CONFIGURED_MAX 32
struct configured_streams {
    void *stream[CONFIGURED_MAX];
    size_t depth; /* configurations pushed and not yet launched, stored or not */
};
static _Thread_local struct configured_streams configured;

static void push_configured(void *stream)
{
    if (configured.depth < CONFIGURED_MAX)
        configured.stream[configured.depth] = stream;
    configured.depth++;
}

/* Pops the latest configuration: true and its stream, or false when unknown. */
static bool pop_configured(void **stream)
{
    if (configured.depth == 0)
        return false;
    size_t i = --configured.depth;
    if (i >= CONFIGURED_MAX)
        return false;
    *stream = configured.stream[i];
    return true;
}

static bool is_pt(enum core_kind kind)
{
    return kind == CORE_KIND_WORK_PT || kind == CORE_KIND_WORK_IF_PT ||
           kind == CORE_KIND_GRAPH_LAUNCH_PT || kind == CORE_KIND_GRAPH_INSTANTIATE_IF_PT ||
           kind == CORE_KIND_CAPTURE_BEGIN_PT || kind == CORE_KIND_CAPTURE_END_PT;
}

/* The handle a HANDLE_PTR stream expression points to (handles are pointer-sized on every
 * platform: platform.h). */
static uintptr_t handle_at(const void *p)
{
    void *handle;
    memcpy(&handle, p, sizeof handle);
    return (uintptr_t)handle;
}

/* Admits c's work: the gates of its device registered again first where a device reset or a
 * context's destruction unregistered them (teardown.c), so that admission may gate it. */
static void admit(struct core_call *c, unsigned entry, uint64_t what)
{
    if (c->q)
        sb_gates_renew(c->q->device);
    xq_admit(c->q, &c->ticket, entry, what);
}

void core_call_begin(struct core_call *c, enum core_kind kind, void *stream, unsigned entry,
                     uint64_t what)
{
    c->kind = kind;
    c->stream = stream;
    c->q = NULL;
    c->ticket.q = NULL;
    c->ticket.reserved = false;
    c->ticket.gate = 0;
    c->ticket.cost_key = 0; /* set where admission schedules the call (graph launches read it) */
    switch (kind) {
    case CORE_KIND_WORK:
    case CORE_KIND_WORK_PT:
    case CORE_KIND_GRAPH_LAUNCH:
    case CORE_KIND_GRAPH_LAUNCH_PT:
        c->q = core_queue_of((uintptr_t)stream, is_pt(kind));
        admit(c, entry, what);
        break;
    case CORE_KIND_WORK_IF:
    case CORE_KIND_WORK_IF_PT:
    case CORE_KIND_GRAPH_INSTANTIATE_IF:
    case CORE_KIND_GRAPH_INSTANTIATE_IF_PT:
        if (stream)
            c->q = core_queue_of(handle_at(stream), is_pt(kind));
        admit(c, entry, what); /* no queue: nothing to admit or count */
        break;
    case CORE_KIND_CONFIGURED_LAUNCH: {
        void *configured_stream;
        if (pop_configured(&configured_stream))
            c->q = core_queue_of((uintptr_t)configured_stream, false);
        admit(c, entry, what);
        break;
    }
    case CORE_KIND_DEVICE_RESET:
    case CORE_KIND_CONTEXT_DESTROY:
    case CORE_KIND_CONTEXT_RELEASE:
        core_teardown_begin(kind, stream);
        break;
    case CORE_KIND_CAPTURE_BEGIN:
    case CORE_KIND_CAPTURE_BEGIN_PT:
        c->q = core_queue_of((uintptr_t)stream, is_pt(kind));
        xq_capture_beginning();
        break;
    case CORE_KIND_CAPTURE_END:
    case CORE_KIND_CAPTURE_END_PT:
        c->q = core_queue_of((uintptr_t)stream, is_pt(kind));
        break;
    case CORE_KIND_STREAM_CREATE:
        core_creation_begin();
        break;
    case CORE_KIND_STREAM_DESTROY:
        c->q = xq_find(&(struct xq_key){(uintptr_t)stream, -1, 0});
        xq_stream_closing(c->q);
        break;
    default:
        break;
    }
    if (c->ticket.gate)
        core_put_gate(c->q, c->ticket.gate);
}

void core_call_end(struct core_call *c, bool ok)
{
    switch (c->kind) {
    case CORE_KIND_WORK:
    case CORE_KIND_WORK_PT:
    case CORE_KIND_WORK_IF:
    case CORE_KIND_WORK_IF_PT:
    case CORE_KIND_GRAPH_LAUNCH:
    case CORE_KIND_GRAPH_LAUNCH_PT:
    case CORE_KIND_GRAPH_INSTANTIATE_IF:
    case CORE_KIND_GRAPH_INSTANTIATE_IF_PT:
    case CORE_KIND_CONFIGURED_LAUNCH:
        xq_submitted(&c->ticket, ok);
        break;
    case CORE_KIND_CONFIGURE:
        if (ok) /* a failed configuration pushes nothing, and no launch follows it */
            push_configured(c->stream);
        break;
    case CORE_KIND_CAPTURE_BEGIN:
    case CORE_KIND_CAPTURE_BEGIN_PT:
        xq_capture_begun(ok && c->q && !atomic_exchange(&c->q->capturing, true));
        break;
    case CORE_KIND_CAPTURE_END:
    case CORE_KIND_CAPTURE_END_PT:
        /* Whatever the result, the stream no longer captures (a failed end still ends it). */
        if (c->q && atomic_exchange(&c->q->capturing, false))
            xq_capture_end();
        break;
    case CORE_KIND_STREAM_CREATE:
        ok = ok && c->stream;
        if (ok)
            core_stream_created(handle_at(c->stream));
        core_creation_end(ok);
        break;
    case CORE_KIND_STREAM_DESTROY:
        xq_stream_closed(c->q, ok); /* a failed destroy leaves the stream running: queried again */
        if (ok)
            core_stream_destroyed((uintptr_t)c->stream);
        break;
    case CORE_KIND_LOOKUP:
        if (ok)
            core_hand_out(c->stream);
        break;
    case CORE_KIND_DEVICE_RESET:
    case CORE_KIND_CONTEXT_DESTROY:
    case CORE_KIND_CONTEXT_RELEASE:
        core_teardown_end(ok);
        break;
    default:
        break;
    }
}
