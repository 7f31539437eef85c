/*
 * sim_stream.c - streams: creation, destruction, the special handles, synchronization.
 *
 * Handles: 0 is the legacy null stream of the current device (the per-thread stream in `_spt`
 * entry points), hipStreamLegacy is always the legacy null stream, hipStreamPerThread is the
 * thread's own stream on the current device, created on first use and released when the thread
 * exits. Any other handle must be a live stream of this runtime, or the call fails with
 * hipErrorContextIsDestroyed, as ROCm answers for streams it does not own.
 */
#include "sim_internal.h"

#include <stdio.h>

#include <stdlib.h>

/* hipStreamGetId is newer than the 5.2.3 headers; the shim's compatibility header declares it. */
#include "../../src/shim/hip/hip_compat_shim.h"

static _Thread_local int current_device;
static _Thread_local struct ihipStream_t *per_thread[SIM_MAX_DEVICES];
static struct ihipStream_t *shared_per_thread[SIM_MAX_DEVICES]; /* SIM_FAULT_PER_THREAD_SHARED */
static pthread_key_t per_thread_key;
static pthread_once_t per_thread_once = PTHREAD_ONCE_INIT;

int sim_current_device(void)
{
    return current_device;
}

hipError_t hipSetDevice(int device)
{
    sim_init();
    if (device < 0 || device >= sim.cfg.devices)
        return sim_ret(hipErrorInvalidDevice);
    current_device = device;
    return sim_ret(hipSuccess);
}

hipError_t hipGetDevice(int *device)
{
    sim_init();
    if (!device)
        return sim_ret(hipErrorInvalidValue);
    *device = current_device;
    return sim_ret(hipSuccess);
}

/* The pool of a stream priority (HIP's terms, already clamped to -1..1). */
static enum sim_pool pool_of(int priority)
{
    if (sim.cfg.fault == SIM_FAULT_POOLS_SHARED || priority == 0)
        return SIM_POOL_NORMAL;
    return priority < 0 ? SIM_POOL_HIGH : SIM_POOL_LOW;
}

/* A hardware queue for a new stream: the next of its priority's pool, or, for a stream with a CU
 * mask, one of its own (-1 when none is left). */
static int hw_queue_for(struct sim_device *dev, int priority, bool masked)
{
    if (masked) {
        for (int i = 0; i < SIM_MAX_MASKED_QUEUES; i++)
            if (!dev->masked_queue_used[i]) {
                dev->masked_queue_used[i] = true;
                return SIM_MASKED_QUEUE_BASE + i;
            }
        return -1;
    }
    enum sim_pool pool = pool_of(priority);
    unsigned i = dev->next_hw_queue[pool]++ % (unsigned)sim.cfg.hw_queues;
    return (int)(pool * SIM_MAX_HW_QUEUES + i);
}

/*
 * HIPSIM_STREAM_REUSE=1: created streams that are gone (destroyed, their work done), whose memory
 * the next new stream takes, the latest first, as an allocator hands a freed block out again: a
 * new stream then has a destroyed one's handle, which gpuprio must not take for the old stream.
 */
static struct ihipStream_t *reusable;

/* cu_mask: NULL, or the mask of a stream created with one. */
static struct ihipStream_t *stream_new(int device, unsigned flags, int priority,
                                       const uint64_t *cu_mask, enum sim_stream_kind kind)
{
    struct ihipStream_t *s = reusable;
    if (s) {
        reusable = s->next;
        *s = (struct ihipStream_t){0};
    } else if (!(s = calloc(1, sizeof *s))) {
        return NULL;
    }
    struct sim_device *dev = &sim.dev[device];
    s->device = device;
    s->flags = flags;
    s->priority = priority;
    s->masked = cu_mask != NULL;
    s->cu_mask = cu_mask ? *cu_mask : 0;
    s->kind = kind;
    s->refs = 1;
    s->hw_queue = hw_queue_for(dev, priority, s->masked);
    if (s->hw_queue < 0 || sim_handle_add(s, SIM_H_STREAM) < 0) {
        if (s->hw_queue >= SIM_MASKED_QUEUE_BASE)
            dev->masked_queue_used[s->hw_queue - SIM_MASKED_QUEUE_BASE] = false;
        free(s);
        return NULL;
    }
    s->id = ++sim.next_stream_id;
    s->next = dev->streams;
    if (dev->streams)
        dev->streams->prev = s;
    dev->streams = s;
    return s;
}

uint64_t sim_device_slots(int device)
{
    unsigned n = sim_slots_count(sim.dev[device].slots);
    return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
}

uint64_t sim_stream_slots(const struct ihipStream_t *s)
{
    uint64_t all = sim_device_slots(s->device);
    uint64_t mask = s->cu_mask & all;
    /* As clr: a mask that leaves no CU of the device is not applied. */
    if (!s->masked || !mask || sim.cfg.fault == SIM_FAULT_CU_MASK_IGNORED)
        return all;
    return mask;
}

/* Takes s off its device's list and out of the registry; its queued work still runs. */
static void stream_retire(struct ihipStream_t *s)
{
    struct sim_device *dev = &sim.dev[s->device];
    if (s->capture)
        sim_capture_leave(s); /* while s is still listed, so that it is found and released */
    if (s->prev)
        s->prev->next = s->next;
    else
        dev->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    sim_handle_remove(s);
    sim_stream_unref(s);
}

void sim_streams_reset(struct sim_device *d)
{
    while (d->streams) {
        struct ihipStream_t *s = d->streams;
        s->refs++; /* never freed: its address stays dead (sim_internal.h, SIM_H_DEAD) */
        stream_retire(s);
        sim_handle_add(s, SIM_H_STREAM + SIM_H_DEAD);
    }
}

void sim_stream_unref(struct ihipStream_t *s)
{
    if (--s->refs > 0)
        return;
    sim_cmd_unref(s->last);
    if (s->hw_queue >= SIM_MASKED_QUEUE_BASE)
        sim.dev[s->device].masked_queue_used[s->hw_queue - SIM_MASKED_QUEUE_BASE] = false;
    if (sim.cfg.stream_reuse && s->kind == SIM_STREAM_USER) {
        s->next = reusable;
        reusable = s;
        return;
    }
    free(s);
}

struct ihipStream_t *sim_stream_for_graph(int device)
{
    struct ihipStream_t *s = stream_new(device, hipStreamNonBlocking, 0, NULL, SIM_STREAM_USER);
    if (s)
        s->refs++; /* the executable graph's, so that hipDeviceReset leaves it valid memory */
    return s;
}

void sim_stream_for_graph_drop(struct ihipStream_t *s)
{
    for (struct ihipStream_t *o = sim.dev[s->device].streams; o; o = o->next)
        if (o == s) { /* not retired by hipDeviceReset meanwhile */
            stream_retire(s);
            break;
        }
    sim_stream_unref(s);
}

/* Thread exit: the thread's per-thread streams finish their work and go away. */
static void per_thread_exit(void *unused)
{
    SIM_UNUSED(unused);
    sim_lock();
    for (int d = 0; d < SIM_MAX_DEVICES; d++) {
        struct ihipStream_t *s = per_thread[d];
        if (!s)
            continue;
        per_thread[d] = NULL;
        sim_wait_stream(s);
        stream_retire(s);
    }
    sim_unlock();
}

static void per_thread_key_init(void)
{
    pthread_key_create(&per_thread_key, per_thread_exit);
}

static hipError_t per_thread_stream(int device, struct ihipStream_t **out)
{
    struct ihipStream_t **slot = sim.cfg.fault == SIM_FAULT_PER_THREAD_SHARED
                                     ? &shared_per_thread[device]
                                     : &per_thread[device];
    if (!*slot) {
        *slot = stream_new(device, 0, 0, NULL, SIM_STREAM_PER_THREAD);
        if (!*slot)
            return hipErrorOutOfMemory;
        if (sim.cfg.fault != SIM_FAULT_PER_THREAD_SHARED) {
            pthread_once(&per_thread_once, per_thread_key_init);
            pthread_setspecific(per_thread_key, (void *)1);
        }
    }
    *out = *slot;
    return hipSuccess;
}

hipError_t sim_stream_resolve(hipStream_t handle, bool spt, struct ihipStream_t **out)
{
    int dev = current_device;
    if (handle == hipStreamPerThread || (spt && (handle == NULL || handle == hipStreamLegacy)))
        return per_thread_stream(dev, out);
    if (handle == NULL || handle == hipStreamLegacy) {
        *out = sim.dev[dev].null_stream;
        return hipSuccess;
    }
    if (!sim_handle_valid(handle, SIM_H_STREAM))
        return hipErrorContextIsDestroyed;
    *out = handle;
    return hipSuccess;
}

/* ---- creation and destruction ---- */

static hipError_t stream_create(hipStream_t *stream, unsigned flags, int priority,
                                const uint64_t *cu_mask)
{
    sim_init();
    if (!stream)
        return sim_ret(hipErrorInvalidValue);
    if (flags & ~(unsigned)hipStreamNonBlocking)
        return sim_ret(hipErrorInvalidValue);
    if (priority > 1)
        priority = 1;
    if (priority < -1)
        priority = -1;
    sim_lock();
    struct ihipStream_t *s = stream_new(current_device, flags, priority, cu_mask, SIM_STREAM_USER);
    sim_unlock();
    if (!s)
        return sim_ret(hipErrorOutOfMemory);
    *stream = s;
    return sim_ret(hipSuccess);
}

hipError_t hipStreamCreate(hipStream_t *stream)
{
    return stream_create(stream, hipStreamDefault, 0, NULL);
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    return stream_create(stream, flags, 0, NULL);
}

hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority)
{
    return stream_create(stream, flags, priority, NULL);
}

/* As clr: a blocking stream of normal priority, on a hardware queue of its own. Bits past the
 * simulator's 64 slots are dropped; a mask with none of the device's slots is kept as given, and
 * its kernels then use every slot (sim_stream_slots). */
hipError_t hipExtStreamCreateWithCUMask(hipStream_t *stream, uint32_t cuMaskSize,
                                        const uint32_t *cuMask)
{
    if (cuMaskSize == 0 || !cuMask) {
        sim_init();
        return sim_ret(hipErrorInvalidValue);
    }
    uint64_t mask = cuMask[0];
    if (cuMaskSize > 1)
        mask |= (uint64_t)cuMask[1] << 32;
    return stream_create(stream, hipStreamDefault, 0, &mask);
}

/* As clr: NULL mask or fewer words than the device's CUs need: hipErrorInvalidValue; the null
 * and per-thread streams, and a stream without a mask, report every CU; a masked stream its
 * mask, limited to the device's CUs (all of them when that leaves none). */
hipError_t hipExtStreamGetCUMask(hipStream_t stream, uint32_t cuMaskSize, uint32_t *cuMask)
{
    sim_init();
    if (!cuMask)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    int device = current_device;
    unsigned n = sim_slots_count(sim.dev[device].slots);
    uint32_t words = (n + 31) / 32;
    hipError_t err = hipErrorInvalidValue;
    struct ihipStream_t *s = NULL;
    if (cuMaskSize >= words)
        err = stream == NULL || stream == hipStreamPerThread
                  ? hipSuccess
                  : sim_stream_resolve(stream, false, &s);
    if (err == hipSuccess) {
        uint64_t mask = s ? sim_stream_slots(s) : sim_device_slots(device);
        for (uint32_t i = 0; i < words; i++)
            cuMask[i] = (uint32_t)(mask >> (32 * i));
    }
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    sim_init();
    if (leastPriority)
        *leastPriority = 1;
    if (greatestPriority)
        *greatestPriority = -1;
    return sim_ret(hipSuccess);
}

/* HIPSIM_REFUSE_STREAM_DESTROY=N: the first N destroys of live streams fail with
 * hipErrorUnknown and leave the stream as it was, working (the tests of gpuprio's handling of a
 * destroy that fails: the stream must still be followed). With the simulator's lock held. */
static bool refuse_destroy(void)
{
    static long left = -1;
    if (left < 0) {
        const char *v = getenv("HIPSIM_REFUSE_STREAM_DESTROY");
        left = v && strtol(v, NULL, 10) > 0 ? strtol(v, NULL, 10) : 0;
    }
    if (left == 0)
        return false;
    left--;
    return true;
}

hipError_t hipStreamDestroy(hipStream_t stream)
{
    sim_init();
    if (stream == NULL || stream == hipStreamLegacy || stream == hipStreamPerThread)
        return sim_ret(hipErrorInvalidHandle);
    sim_lock();
    hipError_t err = hipErrorContextIsDestroyed;
    if (sim_handle_valid(stream, SIM_H_STREAM) && refuse_destroy()) {
        err = hipErrorUnknown;
    } else if (sim_handle_valid(stream, SIM_H_STREAM)) {
        stream_retire(stream);
        err = hipSuccess;
    }
    sim_unlock();
    return sim_ret(err);
}

/* ---- synchronization ---- */

/* Checks that waiting on s is legal during captures, invalidating captures it breaks: s's own,
 * the global ones for the null stream, and for any other stream those clr's
 * StreamCaptureOngoing names from a thread not in relaxed mode (sim_capture_ongoing). */
static hipError_t capture_check_sync(struct ihipStream_t *s)
{
    if (s->capture) {
        sim_capture_invalidate(s->capture);
        return hipErrorStreamCaptureUnsupported;
    }
    if (s->kind == SIM_STREAM_NULL && sim.global_captures > 0) {
        sim_invalidate_global_captures();
        return hipErrorStreamCaptureImplicit;
    }
    if (s->kind != SIM_STREAM_NULL && sim_capture_ongoing(sim_thread_capture_mode()))
        return hipErrorStreamCaptureUnsupported;
    return hipSuccess;
}

static hipError_t stream_synchronize(hipStream_t stream, bool spt)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    if (err == hipSuccess)
        err = capture_check_sync(s);
    if (err == hipSuccess) {
        s->refs++;
        sim_wait_stream(s);
        sim_stream_unref(s);
    }
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipStreamSynchronize(hipStream_t stream)
{
    return stream_synchronize(stream, false);
}

hipError_t hipStreamSynchronize_spt(hipStream_t stream)
{
    return stream_synchronize(stream, true);
}

static hipError_t stream_query(hipStream_t stream, bool spt)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    if (err == hipSuccess)
        err = capture_check_sync(s);
    if (err == hipSuccess && !sim_stream_idle(s))
        err = hipErrorNotReady;
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipStreamQuery(hipStream_t stream)
{
    return stream_query(stream, false);
}

hipError_t hipStreamQuery_spt(hipStream_t stream)
{
    return stream_query(stream, true);
}

hipError_t hipDeviceSynchronize(void)
{
    sim_init();
    sim_lock();
    sim_wait_device(&sim.dev[current_device]);
    sim_unlock();
    return sim_ret(hipSuccess);
}

/* ---- properties ---- */

enum stream_property { PROP_FLAGS, PROP_PRIORITY, PROP_DEVICE };

static hipError_t stream_get(hipStream_t stream, bool spt, enum stream_property what, int *out)
{
    sim_init();
    if (!out)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    if (err == hipSuccess)
        *out = what == PROP_FLAGS ? (int)s->flags : what == PROP_PRIORITY ? s->priority : s->device;
    sim_unlock();
    return sim_ret(err);
}

hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags)
{
    return stream_get(stream, false, PROP_FLAGS, (int *)flags);
}

hipError_t hipStreamGetFlags_spt(hipStream_t stream, unsigned int *flags)
{
    return stream_get(stream, true, PROP_FLAGS, (int *)flags);
}

hipError_t hipStreamGetPriority(hipStream_t stream, int *priority)
{
    return stream_get(stream, false, PROP_PRIORITY, priority);
}

hipError_t hipStreamGetPriority_spt(hipStream_t stream, int *priority)
{
    return stream_get(stream, true, PROP_PRIORITY, priority);
}

/* ROCm/clr's answers 0 for the null stream but takes hipStreamLegacy, which its validity check
 * lets through, for a stream object and dereferences it (hip_stream.cpp, hipStreamGetDevice):
 * a GPU process crashes there. The simulator reports it as an error and refuses it. */
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device)
{
    if (stream == hipStreamLegacy) {
        sim_misuse("hipStreamGetDevice(hipStreamLegacy): ROCm/clr dereferences that handle as a "
                   "stream");
        return sim_ret(hipErrorInvalidHandle);
    }
    return stream_get(stream, false, PROP_DEVICE, device);
}

/* HIP 7.1's: the simulator's id of the stream (hipsimStreamId), never reused in the process. A
 * handle that is not a live stream: hipErrorInvalidHandle, as clr answers. HIPSIM_STREAM_ID=0:
 * hipErrorNotSupported, standing in for the runtimes before 7.1, which have no such call. */
hipError_t hipStreamGetId(hipStream_t stream, unsigned long long *streamId)
{
    sim_init();
    if (!sim.cfg.stream_ids)
        return sim_ret(hipErrorNotSupported);
    if (!streamId)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, false, &s);
    if (err == hipSuccess)
        *streamId = s->id;
    else if (err == hipErrorContextIsDestroyed)
        err = hipErrorInvalidHandle;
    sim_unlock();
    return sim_ret(err);
}

/* ---- simulator API ---- */

uint64_t hipsimStreamId(hipStream_t stream)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    uint64_t id = sim_stream_resolve(stream, false, &s) == hipSuccess ? s->id : 0;
    sim_unlock();
    return id;
}

int hipsimStreamHwQueue(hipStream_t stream)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    int q = sim_stream_resolve(stream, false, &s) == hipSuccess ? s->hw_queue : -1;
    sim_unlock();
    return q;
}
