/*
 * sim_memory.c - device and pinned allocations, copies and memsets.
 *
 * "Device" memory is host memory the simulator hands out and remembers, so that it can tell
 * device and pinned pointers from pageable ones. That distinction is observable: a copy whose
 * host side is pageable is host-synchronous, as in ROCm, while one between pinned or device
 * memory returns at once. hipFree and hipHostFree first wait for all work on all devices.
 */
#include "sim_internal.h"
#include "sim_pinning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum range_kind { RANGE_DEVICE, RANGE_PINNED, RANGE_REGISTERED };

struct range {
    uintptr_t base;
    size_t size;
    enum range_kind kind;
    int device; /* the device current when it was made */
};

/* Host registrations hipDeviceReset destroyed, until registered again: a stream memory operation
 * on one is reported (sim_memory_dead). */
static struct dead_range {
    uintptr_t base;
    size_t size;
} * dead;
static size_t ndead, dead_cap;

static struct range *ranges; /* sorted by base */
static size_t nranges, ranges_cap;

static size_t range_lower_bound(uintptr_t p)
{
    size_t lo = 0, hi = nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranges[mid].base < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct range *range_containing(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    size_t i = range_lower_bound(p + 1); /* first range starting after p */
    if (i == 0)
        return NULL;
    struct range *r = &ranges[i - 1];
    return p < r->base + (r->size ? r->size : 1) ? r : NULL;
}

static int range_add(void *ptr, size_t size, enum range_kind kind)
{
    if (nranges == ranges_cap) {
        size_t cap = ranges_cap ? 2 * ranges_cap : 64;
        struct range *n = realloc(ranges, cap * sizeof *n);
        if (!n)
            return -1;
        ranges = n;
        ranges_cap = cap;
    }
    size_t i = range_lower_bound((uintptr_t)ptr);
    memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof *ranges);
    ranges[i] = (struct range){(uintptr_t)ptr, size, kind, sim_current_device()};
    nranges++;
    return 0;
}

/* Removes the allocation that starts exactly at ptr; false when there is none of that kind. */
static bool range_remove(void *ptr, enum range_kind kind)
{
    size_t i = range_lower_bound((uintptr_t)ptr);
    if (i == nranges || ranges[i].base != (uintptr_t)ptr || ranges[i].kind != kind)
        return false;
    memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
    nranges--;
    return true;
}

static hipError_t allocate(void **ptr, size_t size, enum range_kind kind)
{
    sim_init();
    if (!ptr)
        return hipErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return hipSuccess;
    }
    void *p = aligned_alloc(256, (size + 255) & ~(size_t)255);
    if (!p)
        return hipErrorOutOfMemory;
    sim_lock();
    int rc = range_add(p, size, kind);
    sim_unlock();
    if (rc < 0) {
        free(p);
        return hipErrorOutOfMemory;
    }
    *ptr = p;
    return hipSuccess;
}

static hipError_t release(void *ptr, enum range_kind kind)
{
    sim_init();
    if (!ptr)
        return hipSuccess;
    sim_lock();
    if (sim.cfg.fault != SIM_FAULT_FREE_NO_SYNC)
        sim_wait_all_devices();
    bool ok = range_remove(ptr, kind);
    sim_unlock();
    if (!ok)
        return hipErrorInvalidValue;
    free(ptr);
    return hipSuccess;
}

/* Each of these six is a call clr deems unsafe during a capture, checked before anything else
 * (sim_capture_mode.c). */
#define UNSAFE_DURING_CAPTURE()                                                                    \
    do {                                                                                           \
        hipError_t unsafe_ = sim_unsafe_during_capture();                                          \
        if (unsafe_ != hipSuccess)                                                                 \
            return sim_ret(unsafe_);                                                               \
    } while (0)

hipError_t hipMalloc(void **ptr, size_t size)
{
    UNSAFE_DURING_CAPTURE();
    return sim_ret(allocate(ptr, size, RANGE_DEVICE));
}

hipError_t hipFree(void *ptr)
{
    UNSAFE_DURING_CAPTURE();
    return sim_ret(release(ptr, RANGE_DEVICE));
}

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    SIM_UNUSED(flags);
    UNSAFE_DURING_CAPTURE();
    return sim_ret(allocate(ptr, size, RANGE_PINNED));
}

hipError_t hipHostFree(void *ptr)
{
    UNSAFE_DURING_CAPTURE();
    return sim_ret(release(ptr, RANGE_PINNED));
}

/* ---- registered host memory ---- */

static hipError_t host_register(void *ptr, size_t size, unsigned flags)
{
    sim_init();
    if (!ptr || !size ||
        (flags &
         ~(unsigned)(hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory)))
        return hipErrorInvalidValue;
    /* ROCm fails pinning such pages as running out of memory does. */
    if (sim_unpinnable_file_mapping(ptr, size))
        return hipErrorOutOfMemory;
    sim_lock();
    hipError_t err = hipSuccess;
    size_t i = range_lower_bound((uintptr_t)ptr);
    if (range_containing(ptr) || (i < nranges && ranges[i].base < (uintptr_t)ptr + size))
        err = hipErrorHostMemoryAlreadyRegistered;
    else if (range_add(ptr, size, RANGE_REGISTERED) < 0)
        err = hipErrorOutOfMemory;
    for (size_t j = 0; err == hipSuccess && j < ndead;) /* alive again */
        if (dead[j].base < (uintptr_t)ptr + size && (uintptr_t)ptr < dead[j].base + dead[j].size)
            dead[j] = dead[--ndead];
        else
            j++;
    sim_unlock();
    return err;
}

hipError_t hipHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags)
{
    UNSAFE_DURING_CAPTURE();
    return sim_ret(host_register(hostPtr, sizeBytes, flags));
}

hipError_t hipHostUnregister(void *hostPtr)
{
    UNSAFE_DURING_CAPTURE();
    sim_init();
    sim_lock();
    bool ok = hostPtr && range_remove(hostPtr, RANGE_REGISTERED);
    sim_unlock();
    return sim_ret(ok ? hipSuccess : hipErrorHostMemoryNotRegistered);
}

hipError_t hipHostGetDevicePointer(void **devPtr, void *hstPtr, unsigned int flags)
{
    sim_init();
    if (!devPtr || !hstPtr || flags)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    const struct range *r = range_containing(hstPtr);
    bool host = r && r->kind != RANGE_DEVICE;
    sim_unlock();
    if (!host)
        return sim_ret(hipErrorInvalidValue);
    *devPtr = hstPtr; /* the simulated device sees host memory where the host does */
    return sim_ret(hipSuccess);
}

hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t stream)
{
    sim_init();
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, false, &s);
    sim_unlock();
    if (err == hipSuccess)
        err = allocate(ptr, size, RANGE_DEVICE);
    return sim_ret(err);
}

void sim_memory_reset(int device)
{
    for (size_t i = 0; i < nranges;) {
        struct range r = ranges[i];
        if (r.kind != RANGE_REGISTERED || r.device != device) {
            i++;
            continue;
        }
        if (ndead == dead_cap) {
            size_t cap = dead_cap ? 2 * dead_cap : 16;
            struct dead_range *n = realloc(dead, cap * sizeof *n);
            if (n) {
                dead = n;
                dead_cap = cap;
            }
        }
        if (ndead < dead_cap)
            dead[ndead++] = (struct dead_range){r.base, r.size};
        range_remove((void *)r.base, RANGE_REGISTERED);
    }
}

bool sim_memory_dead(const void *ptr, size_t size)
{
    if (range_containing(ptr))
        return false;
    for (size_t i = 0; i < ndead; i++)
        if (dead[i].base <= (uintptr_t)ptr && (uintptr_t)ptr + size <= dead[i].base + dead[i].size)
            return true;
    return false;
}

void sim_memory_release(void *ptr)
{
    if (range_remove(ptr, RANGE_DEVICE))
        free(ptr);
}

hipError_t hipFreeAsync(void *ptr, hipStream_t stream)
{
    sim_init();
    if (!ptr)
        return sim_ret(hipSuccess);
    struct sim_cmd *c = sim_cmd_new(SIM_CMD_FREE);
    if (!c)
        return sim_ret(hipErrorOutOfMemory);
    c->u.free.ptr = ptr;
    sim_lock();
    struct ihipStream_t *s;
    const struct range *r = range_containing(ptr);
    hipError_t err = sim_stream_resolve(stream, false, &s);
    if (err == hipSuccess && (!r || r->base != (uintptr_t)ptr || r->kind != RANGE_DEVICE))
        err = hipErrorInvalidValue;
    if (err == hipSuccess) {
        err = sim_submit(s, c);
        c = NULL;
    }
    sim_unlock();
    sim_cmd_unref(c);
    return sim_ret(err);
}

/* ---- copies and memsets ---- */

static bool pageable(const void *p)
{
    return !range_containing(p);
}

/*
 * Queues cmd on the stream; waits for it when sync is set or when it touches pageable memory
 * (ROCm's host-synchronous pageable copies). Consumes cmd.
 */
static hipError_t transfer(struct sim_cmd *cmd, hipStream_t stream, bool spt, bool sync,
                           const void *host_a, const void *host_b)
{
    sim_lock();
    struct ihipStream_t *s;
    hipError_t err = sim_stream_resolve(stream, spt, &s);
    if (err != hipSuccess) {
        sim_cmd_unref(cmd);
        goto out;
    }
    bool wait = sync || (sim.cfg.fault != SIM_FAULT_PAGEABLE_ASYNC &&
                         ((host_a && pageable(host_a)) || (host_b && pageable(host_b))));
    if (s->capture)
        wait = false; /* recorded, not run */
    sim_cmd_ref(cmd);
    err = sim_submit(s, cmd);
    if (err == hipSuccess && wait)
        sim_wait_cmd(cmd);
    sim_cmd_unref(cmd);
out:
    sim_unlock();
    return err;
}

static hipError_t copy(void *dst, const void *src, size_t bytes, hipStream_t stream, bool spt,
                       bool sync)
{
    sim_init();
    if (bytes == 0)
        return hipSuccess;
    if (!dst || !src)
        return hipErrorInvalidValue;
    struct sim_cmd *c = sim_cmd_new(SIM_CMD_COPY);
    if (!c)
        return hipErrorOutOfMemory;
    c->u.copy.dst = dst;
    c->u.copy.src = src;
    c->u.copy.bytes = bytes;
    return transfer(c, stream, spt, sync, dst, src);
}

static bool valid_kind(hipMemcpyKind kind)
{
    return kind >= hipMemcpyHostToHost && kind <= hipMemcpyDefault;
}

hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind)
{
    if (!valid_kind(kind))
        return sim_ret(hipErrorInvalidMemcpyDirection);
    return sim_ret(copy(dst, src, sizeBytes, NULL, false, true));
}

hipError_t hipMemcpy_spt(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind)
{
    if (!valid_kind(kind))
        return sim_ret(hipErrorInvalidMemcpyDirection);
    return sim_ret(copy(dst, src, sizeBytes, NULL, true, true));
}

hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                               hipStream_t stream)
{
    if (!valid_kind(kind))
        return sim_ret(hipErrorInvalidMemcpyDirection);
    return sim_ret(copy(dst, src, sizeBytes, stream, false, true));
}

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                          hipStream_t stream)
{
    if (!valid_kind(kind))
        return sim_ret(hipErrorInvalidMemcpyDirection);
    return sim_ret(copy(dst, src, sizeBytes, stream, false, false));
}

hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                              hipStream_t stream)
{
    if (!valid_kind(kind))
        return sim_ret(hipErrorInvalidMemcpyDirection);
    return sim_ret(copy(dst, src, sizeBytes, stream, true, false));
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, GP_HIP_HTOD_CONST void *src, size_t sizeBytes)
{
    return sim_ret(copy(dst, src, sizeBytes, NULL, false, true));
}

hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes)
{
    return sim_ret(copy(dst, src, sizeBytes, NULL, false, true));
}

hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes)
{
    return sim_ret(copy(dst, src, sizeBytes, NULL, false, true));
}

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, GP_HIP_HTOD_CONST void *src, size_t sizeBytes,
                              hipStream_t stream)
{
    return sim_ret(copy(dst, src, sizeBytes, stream, false, false));
}

hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream)
{
    return sim_ret(copy(dst, src, sizeBytes, stream, false, false));
}

hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes,
                              hipStream_t stream)
{
    return sim_ret(copy(dst, src, sizeBytes, stream, false, false));
}

static hipError_t set(void *dst, uint32_t value, size_t elem_size, size_t count, hipStream_t stream,
                      bool spt, bool sync)
{
    sim_init();
    if (count == 0)
        return hipSuccess;
    if (!dst)
        return hipErrorInvalidValue;
    struct sim_cmd *c = sim_cmd_new(SIM_CMD_SET);
    if (!c)
        return hipErrorOutOfMemory;
    c->u.set.dst = dst;
    c->u.set.value = value;
    c->u.set.elem_size = elem_size;
    c->u.set.count = count;
    return transfer(c, stream, spt, sync, dst, NULL);
}

hipError_t hipMemset(void *dst, int value, size_t sizeBytes)
{
    return sim_ret(set(dst, (uint32_t)value, 1, sizeBytes, NULL, false, true));
}

hipError_t hipMemset_spt(void *dst, int value, size_t sizeBytes)
{
    return sim_ret(set(dst, (uint32_t)value, 1, sizeBytes, NULL, true, true));
}

hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream)
{
    return sim_ret(set(dst, (uint32_t)value, 1, sizeBytes, stream, false, false));
}

hipError_t hipMemsetAsync_spt(void *dst, int value, size_t sizeBytes, hipStream_t stream)
{
    return sim_ret(set(dst, (uint32_t)value, 1, sizeBytes, stream, true, false));
}

hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count)
{
    return sim_ret(set(dest, value, 1, count, NULL, false, true));
}

hipError_t hipMemsetD16(hipDeviceptr_t dest, unsigned short value, size_t count)
{
    return sim_ret(set(dest, value, 2, count, NULL, false, true));
}

hipError_t hipMemsetD32(hipDeviceptr_t dest, int value, size_t count)
{
    return sim_ret(set(dest, (uint32_t)value, 4, count, NULL, false, true));
}

hipError_t hipMemsetD8Async(hipDeviceptr_t dest, unsigned char value, size_t count,
                            hipStream_t stream)
{
    return sim_ret(set(dest, value, 1, count, stream, false, false));
}

hipError_t hipMemsetD16Async(hipDeviceptr_t dest, unsigned short value, size_t count,
                             hipStream_t stream)
{
    return sim_ret(set(dest, value, 2, count, stream, false, false));
}

hipError_t hipMemsetD32Async(hipDeviceptr_t dest, int value, size_t count, hipStream_t stream)
{
    return sim_ret(set(dest, (uint32_t)value, 4, count, stream, false, false));
}
