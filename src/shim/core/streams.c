/*
 * streams.c - which XQueue an application's stream handle means, one rule for every platform.
 *
 * A created stream is its handle. The special handles (platform.h) name a different stream on
 * each thread and device, so their queues are the calling thread's, on its current device:
 *   - the null handle (in the legacy form of an entry point) and the legacy handle: the legacy
 *     null stream, keyed with the null handle, one queue per (device, thread);
 *   - the per-thread handle, and the null handle in a per-thread-default-stream form (HIP's
 *     _spt, CUDA's _ptsz and _ptds): the thread's per-thread stream, keyed with the per-thread
 *     handle, one queue per (thread, device). So is the legacy handle in HIP's _spt forms (clr's
 *     PER_THREAD_DEFAULT_STREAM takes it for the per-thread stream): the platform says
 *     (per_thread_takes_legacy).
 * Per-thread queues of the null stream let threads of different priorities share it (xqueue.h
 * says why); the per-thread stream is the thread's own anyway. Without a current device the
 * call is left unscheduled: the runtime will fail it.
 */
#include "core.h"
#include "gp_log.h"
#include "gp_thread.h"

uintptr_t core_stream_named(uintptr_t handle, bool per_thread_default)
{
    const struct gp_stream_handles *s = &core_shim.platform->streams;
    if (handle == s->null)
        return per_thread_default ? s->per_thread : s->legacy;
    if (handle == s->legacy && per_thread_default && s->per_thread_takes_legacy)
        return s->per_thread;
    return handle;
}

struct xqueue *core_queue_of(uintptr_t handle, bool per_thread_default)
{
    const struct gp_platform *p = core_shim.platform;
    uintptr_t named = core_stream_named(handle, per_thread_default);
    struct xq_key key = {named, -1, 0};
    if (named == p->streams.legacy)
        key.handle = p->streams.null;
    else if (named != p->streams.per_thread)
        return xq_find(&key);
    int device = p->current_device();
    if (device < 0)
        return NULL;
    key.device = device;
    key.tid = gp_tid();
    return xq_get_thread_queue(&key, p->special_cu_mask);
}

void core_stream_created(uintptr_t stream)
{
    struct xq_stream_props props;
    core_shim.platform->stream_props(stream, &props);
    if (core_creating.adjusted)
        props.priority = 0; /* the application's: it chose none (core.h) */
    if (core_creating.cu_reserved && props.cus.mask == XQ_CU_MASKED)
        props.cus.mask = XQ_CU_RESERVED;
    struct xq_key key = {stream, -1, 0};
    if (!xq_create(&key, &props, gp_tid()))
        gp_log(GP_LOG_WARN, "out of memory: stream %p is not scheduled", (void *)stream);
}

void core_stream_destroyed(uintptr_t stream)
{
    xq_destroy(&(struct xq_key){stream, -1, 0});
}
