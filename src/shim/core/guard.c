/*
 * guard.c - the shim's depth, and the platform's completion markers and gates called inside it.
 *
 * A runtime may call its own exports (HIP's calls its own hip* functions), and the dynamic
 * linker sends those calls to the shim's wrappers like the application's. Inside a forwarded
 * call, or inside the core's own use of the runtime, they must go straight through: neither
 * admitted nor counted twice, nor held while their caller holds a lock. The depth says so, per
 * thread.
 *
 * Admission records markers on the application's thread, and the watcher queries and releases
 * them on its own: both inside the depth. The watcher does not query while any stream capture
 * is in progress: under the global capture mode (PyTorch's default for graphs) an event query
 * on any thread is a "potentially unsafe" call that invalidates the capture. The markers are
 * simply seen reached later (admission holds no thread during a capture).
 */
#include <errno.h>

#include "core.h"

_Thread_local int core_depth;

static void *record(const struct xqueue *q)
{
    core_depth++;
    void *m = core_shim.platform->markers.record(q);
    core_depth--;
    return m;
}

static void *record_behind_refused(const struct xqueue *q)
{
    core_depth++;
    void *m = core_shim.platform->markers.record_behind_refused(q);
    core_depth--;
    return m;
}

static int query(void *marker)
{
    if (xq_capturing())
        return 0;
    core_depth++;
    int r = core_shim.platform->markers.query(marker);
    core_depth--;
    return r;
}

static void release(const struct xqueue *q, void *marker)
{
    core_depth++;
    core_shim.platform->markers.release(q, marker);
    core_depth--;
}

/* Called only with no capture in progress and the stream not destroyed (xq_admission.c). */
static int stream_idle(const struct xqueue *q)
{
    core_depth++;
    int r = core_shim.platform->markers.stream_idle(q);
    core_depth--;
    return r;
}

const struct xq_marker_ops *core_markers(void)
{
    static struct xq_marker_ops guarded = {.record = record, .query = query, .release = release};
    guarded.stream_idle = core_shim.platform->markers.stream_idle ? stream_idle : NULL;
    guarded.record_behind_refused =
        core_shim.platform->markers.record_behind_refused ? record_behind_refused : NULL;
    return &guarded;
}

int core_gates_prepare(int device, void *base, size_t size, uintptr_t *device_base)
{
    core_depth++;
    int rc = core_shim.platform->gates_prepare(device, base, size, device_base);
    core_depth--;
    return rc;
}

int core_mps(int device, struct xq_mps *out)
{
    core_depth++;
    int rc = core_shim.platform->mps(device, out);
    core_depth--;
    return rc;
}

void core_put_gate(struct xqueue *q, uint64_t number)
{
    const struct dg_region *r = q->dgate_region;
    struct dg_line *l = atomic_load(&q->dgate);
    if (!l || !r || !dg_ready(r))
        return;
    core_depth++;
    int rc = core_shim.platform->gate_wait(q->key.handle, dg_device_addr(r, l), number);
    core_depth--;
    if (rc != 0 && rc != -EAGAIN)
        xq_gate_failed(q);
}
