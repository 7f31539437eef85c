/*
 * broken.c - a deliberately broken interposer, preloaded in front of the shim to show that the
 * fuzzer catches the kind of bug a shim can have (fuzz.catches_broken_*). FUZZ_BROKEN picks one:
 *   last-error   a forwarded call that fails has its error swallowed from the thread's last error
 *                (as a shim that calls the runtime on the application's thread afterwards would)
 *   host-func    hipLaunchHostFunc says hipSuccess without forwarding (a command lost)
 *   wait-event   hipStreamWaitEvent says hipSuccess without forwarding (an ordering lost)
 * Anything else (or unset) forwards everything untouched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "hip_compat.h"

static int broken(const char *what)
{
    const char *v = getenv("FUZZ_BROKEN");
    return v && strcmp(v, what) == 0;
}

static hipError_t swallow(hipError_t e)
{
    if (e != hipSuccess && broken("last-error")) {
        hipError_t (*get_last)(void) = (hipError_t(*)(void))dlsym(RTLD_NEXT, "hipGetLastError");
        if (get_last)
            get_last();
    }
    return e;
}

hipError_t hipMemcpy(void *dst, const void *src, size_t bytes, hipMemcpyKind kind)
{
    hipError_t (*real)(void *, const void *, size_t, hipMemcpyKind) =
        (hipError_t(*)(void *, const void *, size_t, hipMemcpyKind))dlsym(RTLD_NEXT, "hipMemcpy");
    return swallow(real(dst, src, bytes, kind));
}

hipError_t hipMalloc(void **p, size_t bytes)
{
    hipError_t (*real)(void **, size_t) =
        (hipError_t(*)(void **, size_t))dlsym(RTLD_NEXT, "hipMalloc");
    return swallow(real(p, bytes));
}

hipError_t hipSetDevice(int device)
{
    hipError_t (*real)(int) = (hipError_t(*)(int))dlsym(RTLD_NEXT, "hipSetDevice");
    return swallow(real(device));
}

hipError_t hipEventQuery(hipEvent_t e)
{
    hipError_t (*real)(hipEvent_t) = (hipError_t(*)(hipEvent_t))dlsym(RTLD_NEXT, "hipEventQuery");
    return swallow(real(e));
}

hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void *data)
{
    if (broken("host-func"))
        return hipSuccess;
    hipError_t (*real)(hipStream_t, hipHostFn_t, void *) =
        (hipError_t(*)(hipStream_t, hipHostFn_t, void *))dlsym(RTLD_NEXT, "hipLaunchHostFunc");
    return real(s, fn, data);
}

hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int flags)
{
    if (broken("wait-event"))
        return hipSuccess;
    hipError_t (*real)(hipStream_t, hipEvent_t, unsigned int) =
        (hipError_t(*)(hipStream_t, hipEvent_t, unsigned int))dlsym(RTLD_NEXT,
                                                                    "hipStreamWaitEvent");
    return real(s, e, flags);
}
