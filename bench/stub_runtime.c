/*
 * stub_runtime.c - a HIP "runtime" whose calls do nothing, for measuring the shim alone.
 *
 * On the simulator a launch costs microseconds of the simulator's own work, which buries the
 * shim's cost in noise (docs/benchmarks.md). This library has the simulator's soname and answers
 * the calls bench/launch_overhead.c and the shim make with success at once: streams and events
 * are distinct tokens, every event has completed. With it, the time per call with the shim minus
 * the time without is what gpuprio adds, down to nanoseconds. It also provides the two hipsim*
 * functions launch_overhead.c uses, so the same program runs on either.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "hipsim.h"

static _Atomic uintptr_t next_token = 0x1000;

/* Distinct handles; a stream's creation priority (-1, 0 or 1) lives in its low bits. */
static void *token(void)
{
    return (void *)(atomic_fetch_add(&next_token, 16) + 16);
}

static int stream_priority(hipStream_t stream)
{
    return (int)((uintptr_t)stream & 3) - 1;
}

const void *hipsimRegisterKernel(const char *name, hipsimKernelFn fn, int nargs,
                                 const size_t *arg_sizes)
{
    (void)name, (void)nargs, (void)arg_sizes;
    return (const void *)fn;
}

uint64_t hipsimNowNs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

hipError_t hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t shared,
                           hipStream_t stream)
{
    (void)f, (void)grid, (void)block, (void)args, (void)shared, (void)stream;
    return hipSuccess;
}

hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority);

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    return hipStreamCreateWithPriority(stream, flags, 0);
}

hipError_t hipStreamCreate(hipStream_t *stream)
{
    return hipStreamCreateWithFlags(stream, 0);
}

hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority)
{
    (void)flags;
    if (priority < -1)
        priority = -1;
    if (priority > 1)
        priority = 1;
    *stream = (hipStream_t)((uintptr_t)token() | (uintptr_t)(priority + 1));
    return hipSuccess;
}

hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 1;
    *greatest = -1;
    return hipSuccess;
}

hipError_t hipStreamDestroy(hipStream_t stream)
{
    (void)stream;
    return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream)
{
    (void)stream;
    return hipSuccess;
}

hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags)
{
    (void)stream;
    *flags = 0;
    return hipSuccess;
}

hipError_t hipStreamGetPriority(hipStream_t stream, int *priority)
{
    *priority = stream_priority(stream);
    return hipSuccess;
}

hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device)
{
    (void)stream;
    *device = 0;
    return hipSuccess;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    (void)flags;
    *event = token();
    return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    (void)event, (void)stream;
    return hipSuccess;
}

hipError_t hipEventQuery(hipEvent_t event)
{
    (void)event;
    return hipSuccess;
}

hipError_t hipEventDestroy(hipEvent_t event)
{
    (void)event;
    return hipSuccess;
}

hipError_t hipGetDevice(int *device)
{
    *device = 0;
    return hipSuccess;
}

hipError_t hipSetDevice(int device)
{
    (void)device;
    return hipSuccess;
}

hipError_t hipPeekAtLastError(void)
{
    return hipSuccess;
}

const char *hipGetErrorName(hipError_t error)
{
    return error == hipSuccess ? "hipSuccess" : "hipError";
}
