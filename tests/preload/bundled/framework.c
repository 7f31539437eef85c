/*
 * framework.c - stands in for a framework library inside a Python wheel (like
 * torch/lib/libtorch_hip.so): it depends on the runtime bundled next to it (RUNPATH $ORIGIN)
 * and is itself loaded with dlopen(RTLD_LOCAL), so the runtime is not in the global scope.
 */
#include "hipsim.h"

int framework_run(hipStream_t *stream_out);

static uint64_t add_one(hipsimLaunch *l)
{
    ++**(int **)l->args[0];
    return 0;
}

/* Adds 1 to a device integer three times on a stream of its own; returns the result. */
int framework_run(hipStream_t *stream_out)
{
    size_t sizes[] = {sizeof(int *)};
    const void *k = hipsimRegisterKernel("add_one", add_one, 1, sizes);
    int *d, h = -1;
    hipStream_t s;
    dim3 one = {1, 1, 1};
    if (hipStreamCreate(&s) || hipMalloc((void **)&d, sizeof *d) || hipMemset(d, 0, sizeof *d))
        return -1;
    for (int i = 0; i < 3; i++) {
        void *args[] = {&d};
        if (hipLaunchKernel(k, one, one, args, 0, s))
            return -2;
    }
    if (hipMemcpyAsync(&h, d, sizeof h, hipMemcpyDeviceToHost, s) || hipStreamSynchronize(s))
        return -3;
    hipFree(d);
    *stream_out = s;
    return h;
}
