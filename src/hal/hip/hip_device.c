/*
 * hip_device.c - a device's identity that every process agrees on, for the board (board.h):
 * its PCI bus id. Device indices differ between processes (HIP_VISIBLE_DEVICES and friends
 * renumber them); the bus id does not.
 *
 * The runtime is asked on a short-lived thread of gpuprio's own: queues appear on the
 * application's thread before the call that creates them is forwarded, and there any call of
 * ours would change what ROCm 6's hipExtGetLastError reports (docs/design.md, "Transparency"). This
 * happens once per device, and so does preparing a device's gates (hip_gate.c).
 */
#include "hip_device.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "hip_bind.h"
#include "hip_compat.h"

struct own_thread_job {
    void (*fn)(void *);
    void *arg;
};

/* pthread_create's signature around hiphal_on_own_thread's job, in relaxed stream capture mode
 * where the runtime has it: a fresh thread is in global mode, where a call the runtime deems
 * unsafe during a capture (hipHostRegister, say) would invalidate a capture another thread of the
 * application has begun in global mode. */
static void *run_job(void *arg)
{
    struct own_thread_job *job = arg;
    hipError_t (*exchange)(hipStreamCaptureMode *) =
        (hipError_t(*)(hipStreamCaptureMode *))hiphal_sym("hipThreadExchangeStreamCaptureMode");
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    if (exchange)
        exchange(&mode);
    job->fn(job->arg);
    return NULL;
}

int hiphal_on_own_thread(void (*fn)(void *arg), void *arg)
{
    struct own_thread_job job = {fn, arg};
    pthread_t t;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t, NULL, run_job, &job);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return -rc;
    pthread_join(t, NULL);
    return 0;
}

struct key_job {
    hipError_t (*bus_id)(char *, int, int);
    int device;
    char *buf;
    size_t size;
    hipError_t result;
};

static void ask(void *arg)
{
    struct key_job *job = arg;
    job->result = job->bus_id(job->buf, (int)job->size, job->device);
}

int hiphal_device_key(int device, char *buf, size_t size)
{
    struct key_job job = {.device = device, .buf = buf, .size = size};
    job.bus_id = (hipError_t(*)(char *, int, int))hiphal_sym("hipDeviceGetPCIBusId");
    if (!job.bus_id || size < 2)
        return -ENOENT;
    int rc = hiphal_on_own_thread(ask, &job);
    if (rc != 0)
        return rc;
    if (job.result != hipSuccess || !buf[0])
        return -ENOENT;
    buf[size - 1] = '\0';
    return 0;
}
