/*
 * stream_stats.c - the shim gives every stream an XQueue that observes it.
 *
 * Run under LD_PRELOAD of libgpuprio-hip.so over the simulator. The program does not link
 * gpuprio; it finds the public API with dlsym, as a Python program would with ctypes, and checks
 * what the XQueues saw: commands counted per stream (created streams, the null stream, the
 * per-thread stream, _spt entry points, hipExtModuleLaunchKernel under its C and C++ names,
 * ROCm 5's hipLaunchKernelGGLImpl),
 * creation flags and priority, destroyed streams
 * forgotten, and the runtime gpuprio bound to being the simulator the program linked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuprio.h"
#include "hipsim.h"

static int failures;

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static uint64_t noop(hipsimLaunch *l)
{
    (void)l;
    return 0;
}

int main(void)
{
    int (*stats)(void *, struct gpuprio_queue_stats *) = dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    int (*runtime_path)(char *, size_t) = dlsym(RTLD_DEFAULT, "gpuprio_runtime_path");
    if (!stats || !runtime_path) {
        printf("FAIL: the gpuprio API is not in the process (run under LD_PRELOAD)\n");
        return 1;
    }
    const void *k = hipsimRegisterKernel("noop", noop, 0, NULL);
    dim3 one = {1, 1, 1};

    hipStream_t hi, nb;
    EXPECT(hipStreamCreateWithPriority(&hi, 0, -1) == hipSuccess);
    EXPECT(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking) == hipSuccess);
    for (int i = 0; i < 5; i++)
        EXPECT(hipLaunchKernel(k, one, one, NULL, 0, hi) == hipSuccess);
    for (int i = 0; i < 3; i++)
        EXPECT(hipLaunchKernel(k, one, one, NULL, 0, NULL) == hipSuccess);
    EXPECT(hipLaunchKernel_spt(k, one, one, NULL, 0, NULL) == hipSuccess);
    EXPECT(hipLaunchKernel(k, one, one, NULL, 0, hipStreamPerThread) == hipSuccess);
    EXPECT(hipMemsetAsync(&(int){0}, 0, 0, nb) == hipSuccess); /* zero bytes: still a call */
    /* A failed launch is not work. */
    EXPECT(hipLaunchKernel((const void *)main, one, one, NULL, 0, hi) ==
           hipErrorInvalidDeviceFunction);
    EXPECT(hipDeviceSynchronize() == hipSuccess);

    struct gpuprio_queue_stats st;
    EXPECT(stats(hi, &st) == 0 && st.submitted == 5 && st.stream_priority == -1 && st.device == 0);
    EXPECT(stats(NULL, &st) == 0 && st.submitted == 3);
    EXPECT(stats(hipStreamLegacy, &st) == 0 && st.submitted == 3);
    EXPECT(stats(hipStreamPerThread, &st) == 0 && st.submitted == 2);
    EXPECT(stats(nb, &st) == 0 && st.flags == hipStreamNonBlocking && st.submitted == 1);
    EXPECT(hipStreamDestroy(hi) == hipSuccess);
    EXPECT(stats(hi, &st) == -ENOENT);
    EXPECT(stats(nb, NULL) == -EINVAL);

    /* hip_ext.h's launch under its C++ name (found as rocBLAS would link it) and its C name. */
    typedef hipError_t (*ext_launch_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                        uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                        hipEvent_t, hipEvent_t, uint32_t);
    ext_launch_fn ext_cxx = (ext_launch_fn)dlsym(RTLD_DEFAULT, HIP_EXT_MODULE_LAUNCH_KERNEL_CXX);
    hipModule_t mod;
    hipFunction_t fn;
    hipStream_t ext;
    EXPECT(hipStreamCreate(&ext) == hipSuccess);
    EXPECT(hipModuleLoadData(&mod, "hipsim") == hipSuccess);
    EXPECT(hipModuleGetFunction(&fn, mod, "noop") == hipSuccess);
    EXPECT(ext_cxx && ext_cxx(fn, 1, 1, 1, 1, 1, 1, 0, ext, NULL, NULL, NULL, NULL, 0) ==
                          hipSuccess);
    EXPECT(hipExtModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, ext, NULL, NULL, NULL, NULL, 0) ==
           hipSuccess);
    /* ROCm 5's hipLaunchKernelGGL back end: counted when accepted, not when it failed. */
    typedef void (*ggl_impl_fn)(uintptr_t, const dim3 *, const dim3 *, uint32_t, hipStream_t,
                                void **);
    ggl_impl_fn ggl = (ggl_impl_fn)dlsym(RTLD_DEFAULT, HIP_LAUNCH_KERNEL_GGL_IMPL_CXX);
    EXPECT(ggl != NULL);
    if (ggl) {
        (void)hipGetLastError(); /* the sticky error of the launch of main above */
        ggl((uintptr_t)k, &one, &one, 0, ext, NULL);
        EXPECT(hipPeekAtLastError() == hipSuccess);
        ggl((uintptr_t)main, &one, &one, 0, ext, NULL); /* not a kernel */
        EXPECT(hipGetLastError() == hipErrorInvalidDeviceFunction);
    }
    EXPECT(hipStreamSynchronize(ext) == hipSuccess);
    EXPECT(stats(ext, &st) == 0 && st.submitted == 3);

    char path[4096];
    EXPECT(runtime_path(path, sizeof path) == 0 && strstr(path, "libamdhip64.so") != NULL);
    EXPECT(runtime_path(path, 4) == -ERANGE);
    printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
    return failures != 0;
}
