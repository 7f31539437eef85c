/*
 * sim_event.c - events, cross-stream waits, stream memory operations and host work.
 *
 * An event remembers the marker command of its most recent record; waiting on the event means
 * depending on that marker. Recorded inside a capture, it remembers the capture instead, so a
 * stream that waits on it joins the capture (the fork/join pattern of multi-stream capture).
 *
 * An event also remembers whether its latest record named hipStreamLegacy: ROCm/clr keeps the
 * handle as passed, and hipStreamWaitEvent on such an event takes it for a stream object and
 * dereferences it (hip_stream.cpp, hipStreamWaitEvent_common, in ROCm/clr's last trees and
 * rocm-systems'), where a GPU process crashes. The simulator reports that wait as an error and
 * refuses it.
 */
#include "sim_internal.h"

#include <stdatomic.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ihipEvent_t {
    unsigned flags;
    int device;
    struct sim_cmd *marker;      /* most recent record outside a capture */
    struct sim_capture *capture; /* most recent record inside one */
    bool on_legacy_handle;       /* the latest record named hipStreamLegacy (not in an _spt form) */
};

#define EVENT_FLAGS                                                                                \
    (hipEventDefault | hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess |       \
     hipEventReleaseToDevice | hipEventReleaseToSystem)

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    sim_init();
    if (!event || (flags & ~(unsigned)EVENT_FLAGS))
        return sim_ret(hipErrorInvalidValue);
    if ((flags & hipEventInterprocess) && !(flags & hipEventDisableTiming))
        return sim_ret(hipErrorInvalidValue);
    struct ihipEvent_t *e = calloc(1, sizeof *e);
    if (!e)
        return sim_ret(hipErrorOutOfMemory);
    e->flags = flags;
    e->device = sim_current_device();
    sim_lock();
    int rc = sim_handle_add(e, SIM_H_EVENT);
    sim_unlock();
    if (rc < 0) {
        free(e);
        return sim_ret(hipErrorOutOfMemory);
    }
    *event = e;
    return sim_ret(hipSuccess);
}

hipError_t hipEventCreate(hipEvent_t *event)
{
    return hipEventCreateWithFlags(event, hipEventDefault);
}

static void event_forget(struct ihipEvent_t *e)
{
    sim_cmd_unref(e->marker);
    e->marker = NULL;
    if (e->capture)
        sim_capture_unref(e->capture);
    e->capture = NULL;
}

hipError_t hipEventDestroy(hipEvent_t event)
{
    sim_init();
    sim_lock();
    hipError_t err = hipErrorInvalidHandle;
    if (sim_handle_valid(event, SIM_H_EVENT)) {
        sim_handle_remove(event);
        event_forget(event);
        free(event);
        err = hipSuccess;
    }
    sim_unlock();
    return sim_ret(err);
}

/* The event dies with its device (hipDeviceReset); its memory is kept (sim_internal.h). */
static bool event_dies(void *p, void *arg)
{
    struct ihipEvent_t *e = p;
    if (e->device != *(int *)arg)
        return false;
    event_forget(e);
    return true;
}

void sim_events_reset(int device)
{
    sim_handles_kill(SIM_H_EVENT, event_dies, &device);
}

hipError_t sim_event_record(hipEvent_t e, struct ihipStream_t *s)
{
    e->on_legacy_handle = false; /* the runtime's own records name a stream object */
    /* An event belongs to its device: ROCm/clr refuses a record on another device's stream
     * (hip_event.cpp, hipEventRecord_common). */
    if (e->device != s->device)
        return hipErrorInvalidHandle;
    if (s->capture) {
        if (sim_capture_invalidated(s->capture))
            return hipErrorStreamCaptureInvalidated;
        event_forget(e);
        e->capture = s->capture;
        sim_capture_ref(e->capture);
        return hipSuccess;
    }
    struct sim_cmd *m = sim_cmd_new(SIM_CMD_MARKER);
    if (!m)
        return hipErrorOutOfMemory;
    sim_cmd_ref(m); /* the event's reference, kept if the submission succeeds */
    hipError_t err = sim_submit(s, m);
    if (err != hipSuccess) {
        sim_cmd_unref(m);
        return err;
    }
    event_forget(e);
    e->marker = m;
    return hipSuccess;
}

static _Atomic uint64_t records; /* hipsimEventRecords */

uint64_t hipsimEventRecords(void)
{
    return atomic_load(&records);
}

static hipError_t event_record(hipEvent_t event, hipStream_t stream, bool spt)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = hipErrorInvalidHandle;
    if (sim_handle_valid(event, SIM_H_EVENT)) {
        err = sim_stream_resolve(stream, spt, &s);
        /* clr notes the handle before it checks the stream's device: a refused record too. An
         * _spt form takes hipStreamLegacy for the per-thread stream first. */
        if (err == hipSuccess) {
            err = sim_event_record(event, s);
            ((struct ihipEvent_t *)event)->on_legacy_handle = !spt && stream == hipStreamLegacy;
        }
    }
    sim_unlock();
    if (err == hipSuccess)
        atomic_fetch_add(&records, 1);
    return sim_ret(err);
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    return event_record(event, stream, false);
}

hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream)
{
    return event_record(event, stream, true);
}

hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags)
{
    if (flags & ~(unsigned)hipEventRecordExternal) {
        sim_init();
        return sim_ret(hipErrorInvalidValue);
    }
    return event_record(event, stream, false);
}

hipError_t hipEventQuery(hipEvent_t event)
{
    sim_init();
    sim_lock();
    hipError_t err = hipErrorInvalidHandle;
    if (sim_handle_valid(event, SIM_H_EVENT)) {
        const struct ihipEvent_t *e = event;
        if (e->marker)
            err = e->marker->done ? hipSuccess : hipErrorNotReady;
        else
            err = sim.cfg.fault == SIM_FAULT_EVENT_QUERY_UNRECORDED && !e->capture
                      ? hipErrorNotReady
                      : hipSuccess;
    }
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipEventSynchronize(hipEvent_t event)
{
    sim_init();
    sim_lock();
    hipError_t err = hipErrorInvalidHandle;
    if (sim_handle_valid(event, SIM_H_EVENT)) {
        struct sim_cmd *m = ((struct ihipEvent_t *)event)->marker;
        if (m) {
            sim_cmd_ref(m); /* the event may be re-recorded meanwhile */
            sim_wait_cmd(m);
            sim_cmd_unref(m);
        }
        err = hipSuccess;
    }
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    sim_init();
    if (!ms)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    hipError_t err = hipErrorInvalidHandle;
    if (sim_handle_valid(start, SIM_H_EVENT) && sim_handle_valid(stop, SIM_H_EVENT)) {
        const struct ihipEvent_t *a = start, *b = stop;
        if ((a->flags | b->flags) & hipEventDisableTiming || !a->marker || !b->marker)
            err = hipErrorInvalidHandle;
        else if ((!a->marker->done || !b->marker->done) &&
                 sim.cfg.fault != SIM_FAULT_ELAPSED_NO_NOTREADY)
            err = hipErrorNotReady;
        else {
            *ms = (float)((double)((int64_t)b->marker->end_ns - (int64_t)a->marker->end_ns) / 1e6);
            err = hipSuccess;
        }
    }
    sim_unlock();
    return sim_ret(err);
}

/* ---- cross-stream waits ---- */

static hipError_t stream_wait_event(hipStream_t stream, hipEvent_t event, unsigned flags, bool spt)
{
    sim_init();
    if (flags)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = hipErrorInvalidHandle;
    if (!sim_handle_valid(event, SIM_H_EVENT))
        goto out;
    err = sim_stream_resolve(stream, spt, &s);
    if (err != hipSuccess)
        goto out;
    struct ihipEvent_t *e = event;
    if (e->on_legacy_handle) {
        sim_misuse("hipStreamWaitEvent on event %p, last recorded on hipStreamLegacy: ROCm/clr "
                   "dereferences that handle as a stream",
                   (void *)e);
        err = hipErrorInvalidHandle;
        goto out;
    }
    if (e->capture && !s->capture && sim_capture_active(e->capture)) {
        s->capture = e->capture; /* join the capture */
        sim_capture_ref(s->capture);
        goto out;
    }
    if (!e->marker || sim.cfg.fault == SIM_FAULT_WAIT_EVENT_IGNORED)
        goto out;
    struct sim_cmd *w = sim_cmd_new(SIM_CMD_WAIT);
    if (!w || sim_cmd_add_dep(w, e->marker) < 0) {
        sim_cmd_unref(w);
        err = hipErrorOutOfMemory;
        goto out;
    }
    err = sim_submit(s, w);
out:
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
    return stream_wait_event(stream, event, flags, false);
}

hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
    return stream_wait_event(stream, event, flags, true);
}

/* ---- stream memory operations ---- */

static _Atomic uint64_t stream_waits; /* hipsimStreamWaits */

uint64_t hipsimStreamWaits(void)
{
    return atomic_load(&stream_waits);
}

static hipError_t stream_value_op(enum sim_cmd_kind kind, hipStream_t stream, void *ptr,
                                  uint64_t value, unsigned flags, uint64_t mask, int width)
{
    sim_init();
    if (!ptr || ((uintptr_t)ptr % (unsigned)(width / 8)) ||
        (kind == SIM_CMD_WAIT_VALUE && flags > hipStreamWaitValueNor) ||
        (kind == SIM_CMD_WRITE_VALUE && flags))
        return sim_ret(hipErrorInvalidValue);
    struct sim_cmd *c = sim_cmd_new(kind);
    if (!c)
        return sim_ret(hipErrorOutOfMemory);
    c->u.value.ptr = ptr;
    c->u.value.value = value;
    c->u.value.mask = mask;
    c->u.value.flags = flags;
    c->u.value.width = width;
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, false, &s);
    if (err == hipSuccess && sim_memory_dead(ptr, (size_t)width / 8)) {
        sim_stale_use("registered host memory at", ptr);
        err = hipErrorInvalidValue;
    }
    if (err == hipSuccess)
        err = sim_submit(s, c);
    else
        sim_cmd_unref(c);
    sim_unlock();
    if (err == hipSuccess && kind == SIM_CMD_WAIT_VALUE)
        atomic_fetch_add(&stream_waits, 1);
    return sim_ret(err);
}

hipError_t hipStreamWaitValue32(hipStream_t stream, void *ptr, uint32_t value, unsigned int flags,
                                uint32_t mask)
{
    return stream_value_op(SIM_CMD_WAIT_VALUE, stream, ptr, value, flags, mask, 32);
}

hipError_t hipStreamWaitValue64(hipStream_t stream, void *ptr, uint64_t value, unsigned int flags,
                                uint64_t mask)
{
    /* HIPSIM_REFUSE_WAIT_VALUE64=1: refused as a runtime short of resources would (the tests of
     * gpuprio's refused gates). */
    static _Atomic int refuse = -1;
    if (atomic_load(&refuse) < 0) {
        const char *v = getenv("HIPSIM_REFUSE_WAIT_VALUE64");
        atomic_store(&refuse, v && !strcmp(v, "1"));
    }
    if (atomic_load(&refuse)) {
        sim_init();
        return sim_ret(hipErrorOutOfMemory);
    }
    return stream_value_op(SIM_CMD_WAIT_VALUE, stream, ptr, value, flags, mask, 64);
}

hipError_t hipStreamWriteValue32(hipStream_t stream, void *ptr, uint32_t value, unsigned int flags)
{
    return stream_value_op(SIM_CMD_WRITE_VALUE, stream, ptr, value, flags, UINT32_MAX, 32);
}

hipError_t hipStreamWriteValue64(hipStream_t stream, void *ptr, uint64_t value, unsigned int flags)
{
    return stream_value_op(SIM_CMD_WRITE_VALUE, stream, ptr, value, flags, UINT64_MAX, 64);
}

/* ---- host functions and callbacks ---- */

static hipError_t host_work(hipStream_t stream, bool spt, hipHostFn_t fn,
                            hipStreamCallback_t callback, void *user)
{
    struct sim_cmd *c = sim_cmd_new(SIM_CMD_HOST_FN);
    if (!c)
        return hipErrorOutOfMemory;
    c->u.host.fn = fn;
    c->u.host.callback = callback;
    c->u.host.handle = stream;
    c->u.host.user = user;
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    bool early = err == hipSuccess && !s->capture && sim.cfg.fault == SIM_FAULT_CALLBACK_EARLY;
    if (err == hipSuccess && !early) {
        err = sim_submit(s, c);
        c = NULL;
    }
    sim_unlock();
    if (early) { /* the fault: run it now, on the caller's thread */
        if (fn)
            fn(user);
        else
            callback(stream, hipSuccess, user);
    }
    sim_cmd_unref(c);
    return err;
}

hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData)
{
    sim_init();
    if (!fn)
        return sim_ret(hipErrorInvalidValue);
    return sim_ret(host_work(stream, false, fn, NULL, userData));
}

hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void *userData)
{
    sim_init();
    if (!fn)
        return sim_ret(hipErrorInvalidValue);
    return sim_ret(host_work(stream, true, fn, NULL, userData));
}

static hipError_t add_callback(hipStream_t stream, hipStreamCallback_t callback, void *userData,
                               unsigned flags, bool spt)
{
    sim_init();
    if (!callback || flags)
        return sim_ret(hipErrorInvalidValue);
    return sim_ret(host_work(stream, spt, NULL, callback, userData));
}

hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void *userData,
                                unsigned int flags)
{
    return add_callback(stream, callback, userData, flags, false);
}

hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback,
                                    void *userData, unsigned int flags)
{
    return add_callback(stream, callback, userData, flags, true);
}
