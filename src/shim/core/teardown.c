/*
 * teardown.c - device resets and context destruction: hipDeviceReset, cuDevicePrimaryCtxReset,
 * cuCtxDestroy and the last cuDevicePrimaryCtxRelease destroy a context with its streams, events
 * and host registrations, and gpuprio holds some of each (docs/design.md, "Resets and context
 * destruction").
 *
 * After such a call, a marker gpuprio recorded there, or pooled for reuse, is a dead handle (on
 * HIP a raw pointer into freed memory, and the next context may hand out the same handle); the
 * watcher must not query it, nor its dead stream, and nobody may destroy or record it. The
 * board's gate lines are no longer registered with the runtime, so a gate put on a stream would
 * wait on an address the device no longer maps. So, around the call:
 *   - before forwarding: the platform says what will die (teardown_scope), the created streams
 *     that die with it are listed while their handles are still valid, and the watcher is paused,
 *     so that no query of it can run into the teardown;
 *   - the call is forwarded, unchanged;
 *   - after it, if the context died: every command in flight on a queue of the device is taken as
 *     reached, with its marker forgotten (or pooled, where it belongs to a context that lives),
 *     the platform forgets its pooled markers and GEMM timings of what died, the queues of the
 *     dead streams are retired as if their streams were destroyed (their board slots freed,
 *     which reopens their gate lines), and every board's gates count as unregistered: the next
 *     command on a device registers them again before it is admitted (sb_gates_renew), so gates
 *     come back without the application doing anything; markers are created again as they are
 *     needed.
 * A call that fails, or a release that was not the last, changes nothing of gpuprio's.
 *
 * The application must not use a context on other threads while it destroys it (the runtimes say
 * so); gpuprio asks no more than that.
 */
#include <stdlib.h>

#include "core.h"
#include "gp_grow.h"
#include "gp_log.h"
#include "scheduler.h"
#include "xq_watcher.h"

/* The teardown the calling thread is forwarding (a thread forwards one call at a time). */
static _Thread_local struct {
    bool on;
    struct gp_teardown t;
    uintptr_t *dying; /* handles of the created streams that die with it */
    size_t n, cap;
} td;

struct candidates {
    uintptr_t *handles;
    size_t n, cap;
    int device; /* -1: every device */
};

static void collect(struct xqueue *q, void *arg)
{
    struct candidates *c = arg;
    if (q->key.device >= 0 || q->key.tid) /* a null or per-thread stream: it outlives contexts */
        return;
    if (c->device >= 0 && q->device != c->device)
        return;
    uintptr_t *h = gp_grow(c->handles, &c->cap, c->n, sizeof *h, 16);
    if (!h)
        return; /* out of memory: that queue stays registered, and is replaced if its handle is */
    c->handles = h;
    c->handles[c->n++] = q->key.handle;
}

void core_teardown_begin(enum core_kind kind, void *arg)
{
    const struct gp_platform *p = core_shim.platform;
    td.on = false;
    td.n = 0;
    if (!p->teardown_scope)
        return;
    core_depth++;
    enum gp_teardown_kind what = kind == CORE_KIND_CONTEXT_DESTROY   ? GP_TEARDOWN_DESTROY
                                 : kind == CORE_KIND_CONTEXT_RELEASE ? GP_TEARDOWN_RELEASE
                                                                     : GP_TEARDOWN_RESET;
    int rc = p->teardown_scope(what, (uintptr_t)arg, &td.t);
    core_depth--;
    if (rc != 0)
        return;
    /* The created streams of the device, then those of them in what dies (the platform may ask
     * the runtime, so outside the registry's lock; the handles are valid until forwarded). */
    struct candidates c = {.device = td.t.device};
    xq_foreach(collect, &c);
    core_depth++;
    for (size_t i = 0; i < c.n; i++) {
        struct xqueue *q = xq_find(&(struct xq_key){c.handles[i], -1, 0});
        if (q && p->teardown_stream(c.handles[i], q->device, &td.t))
            c.handles[td.n++] = c.handles[i];
    }
    core_depth--;
    td.dying = c.handles;
    td.cap = c.cap;
    td.on = true;
    xq_watcher_pause();
}

static bool on_device(const struct xqueue *q, void *arg)
{
    const struct gp_teardown *t = arg;
    return t->device < 0 || q->device == t->device;
}

static void forget_marker(struct xqueue *q, void *marker, void *arg)
{
    core_shim.platform->teardown_marker(q, marker, arg);
}

void core_teardown_end(bool ok)
{
    if (!td.on)
        return;
    td.on = false;
    const struct gp_platform *p = core_shim.platform;
    if (!p->teardown_done(&td.t, ok)) {
        xq_watcher_resume();
        free(td.dying);
        td.dying = NULL;
        td.n = td.cap = 0;
        return;
    }
    xq_watcher_drop(on_device, forget_marker, &td.t);
    for (size_t i = 0; i < td.n; i++) {
        struct xq_key key = {td.dying[i], -1, 0};
        /* Closing, not closed: its dead handle is never queried again, and the stream counts as
         * busy, not idle; nothing waits on that, since every command it had in flight was taken
         * as reached above (xq_watcher_drop) and a dead stream gets no more. */
        xq_stream_closing(xq_find(&key));
        xq_destroy(&key);
    }
    sb_gates_lost();
    xq_watcher_resume();
    if (td.t.device >= 0)
        gp_log(GP_LOG_DEBUG,
               "device %d: its context was destroyed; %zu of its streams' queues retired, its "
               "markers dropped, the boards' gates to be registered again",
               td.t.device, td.n);
    else
        gp_log(GP_LOG_DEBUG,
               "context %#llx was destroyed; %zu of its streams' queues retired, its markers "
               "dropped, the boards' gates to be registered again",
               (unsigned long long)td.t.context, td.n);
    free(td.dying);
    td.dying = NULL;
    td.n = td.cap = 0;
}
