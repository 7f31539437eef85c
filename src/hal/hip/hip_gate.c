/*
 * hip_gate.c - HIP's gates (Level 2, src/preempt/devgate.h): the device waits with
 * hipStreamWaitValue64 (hipStreamWaitValueGte, all bits) on a word of the board that every
 * process registered with hipHostRegister, or where the runtime refuses the board's file (off
 * tmpfs and hugetlbfs), on the process's private copy of it (mirrored gates, devgate.h).
 *
 * Preparing a device happens once per board, on a thread of gpuprio's own (hip_device.c says
 * why). A gate is put on the application's thread right before its own call on the same stream,
 * which then sets the thread's errors itself; a gate that fails must not leave an error the
 * application's call would not have left, so the sticky error is put back to success when it was
 * success before (hipPeekAtLastError, then hipGetLastError to clear ours). An error the
 * application left pending cannot be put back by any call once a failed gate replaced it: then
 * the gate goes on from a thread of gpuprio's own, whose errors are its own, which only a created
 * stream's handle allows (the null and per-thread handles name another stream there); on those
 * this one gate is not put (-EAGAIN): the batch behind it runs ungated, a leak of one gate's
 * worth of work, where holding the queue on the host for good would cost its Level 2 for an error
 * the application may clear with its next call.
 */
#include "hip_gate.h"

#include <errno.h>
#include <pthread.h>

#include "hip_bind.h"
#include "hip_compat.h"
#include "hip_device.h"

static struct {
    hipError_t (*wait64)(hipStream_t, void *, uint64_t, unsigned, uint64_t);
    hipError_t (*peek)(void);
    hipError_t (*get_last)(void);
} rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&rt.wait64 = hiphal_sym("hipStreamWaitValue64");
    *(void **)&rt.peek = hiphal_sym("hipPeekAtLastError");
    *(void **)&rt.get_last = hiphal_sym("hipGetLastError");
}

struct prepare_job {
    int device;
    void *base;
    size_t size;
    uintptr_t device_base;
    int result;
};

static void prepare(void *arg)
{
    struct prepare_job *job = arg;
    hipError_t (*attribute)(int *, hipDeviceAttribute_t, int);
    hipError_t (*host_register)(void *, size_t, unsigned);
    hipError_t (*device_pointer)(void **, void *, unsigned);
    hipError_t (*set_device)(int);
    *(void **)&attribute = hiphal_sym("hipDeviceGetAttribute");
    *(void **)&set_device = hiphal_sym("hipSetDevice");
    *(void **)&host_register = hiphal_sym("hipHostRegister");
    *(void **)&device_pointer = hiphal_sym("hipHostGetDevicePointer");
    int can_wait = 0;
    job->result = -ENOTSUP;
    if (!attribute || !host_register || !device_pointer || !rt.wait64 || !rt.peek || !rt.get_last ||
        attribute(&can_wait, hipDeviceAttributeCanUseStreamWaitValue, job->device) != hipSuccess ||
        !can_wait)
        return;
    job->result = -EIO;
    /* A registration belongs to the device current when it is made, and that device's reset
     * destroys it: this thread (fresh, our own) makes the board's own device current, so that
     * resetting another device, which the application may do while this one works on, leaves
     * the lines that this device's gates wait on alone. */
    if (!set_device || set_device(job->device) != hipSuccess)
        return;
    /* Registered already: prepared again after a reset that left the registration alone. */
    hipError_t r =
        host_register(job->base, job->size, hipHostRegisterMapped | hipHostRegisterPortable);
    if (r != hipSuccess && r != hipErrorHostMemoryAlreadyRegistered)
        return;
    void *device_base = NULL;
    if (device_pointer(&device_base, job->base, 0) != hipSuccess || !device_base)
        return; /* registered for nothing: harmless, the process keeps the mapping to its end */
    job->device_base = (uintptr_t)device_base;
    job->result = 0;
}

int hiphal_gates_prepare(int device, void *base, size_t size, uintptr_t *device_base)
{
    pthread_once(&rt_once, resolve);
    struct prepare_job job = {.device = device, .base = base, .size = size};
    int rc = hiphal_on_own_thread(prepare, &job);
    if (rc != 0)
        return rc;
    *device_base = job.device_base;
    return job.result;
}

struct gate_job {
    uintptr_t stream, device_addr;
    uint64_t value;
    hipError_t result;
};

static void put_gate(void *arg)
{
    struct gate_job *job = arg;
    job->result = rt.wait64((hipStream_t)job->stream, (void *)job->device_addr, job->value,
                            hipStreamWaitValueGte, UINT64_MAX);
}

int hiphal_gate_wait(uintptr_t stream, uintptr_t device_addr, uint64_t value)
{
    struct gate_job job = {stream, device_addr, value, hipSuccess};
    if (rt.peek() == hipSuccess) {
        put_gate(&job);
        if (job.result == hipSuccess)
            return 0;
        rt.get_last();
        return -EIO;
    }
    if (stream == 0 || stream == (uintptr_t)hipStreamLegacy ||
        stream == (uintptr_t)hipStreamPerThread)
        return -EAGAIN;
    int rc = hiphal_on_own_thread(put_gate, &job);
    return rc != 0 ? rc : job.result == hipSuccess ? 0 : -EIO;
}
