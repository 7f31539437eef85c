/*
 * stream_stats.c - the shim gives every stream an XQueue that observes it.
 *
 * Run under LD_PRELOAD of libgpuprio-hip.so over the simulator. The program does not link
 * gpuprio; it finds the public API with dlsym, as a Python program would with ctypes, and checks
 * what the XQueues saw: commands counted per stream (created streams, the null stream, the
 * per-thread stream, _spt entry points, hipExtModuleLaunchKernel under its C and C++ names,
 * ROCm 5's hipLaunchKernelGGLImpl, hipLaunchByPtr on the stream given to hipConfigureCall,
 * hipGraphInstantiateWithParams uploading on its uploadStream),
 * creation flags and priority, destroyed streams
 * forgotten, and the runtime gpuprio bound to being the simulator the program linked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gpuprio.h"
#include "hipsim.h"
/* hipGraphInstantiateWithParams is newer than the 5.2.3 headers. */
#include "../../src/shim/hip/hip_compat_shim.h"

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

static int (*stats)(void *, struct gpuprio_queue_stats *);

/* Commands the shim counted on stream s (-1 when it knows no such stream). */
static long submitted(hipStream_t s)
{
    struct gpuprio_queue_stats st;
    return stats(s, &st) == 0 ? (long)st.submitted : -1;
}

/* Two threads configure their own streams, then both launch: each launch counts on its thread's
 * configured stream. */
#define LOCKSTEP_ROUNDS 20
static pthread_barrier_t lockstep;
static const void *noop_kernel;

static void *lockstep_thread(void *arg)
{
    hipStream_t s = arg;
    dim3 one = {1, 1, 1};
    for (int i = 0; i < LOCKSTEP_ROUNDS; i++) {
        EXPECT(hipConfigureCall(one, one, 0, s) == hipSuccess);
        pthread_barrier_wait(&lockstep);
        EXPECT(hipLaunchByPtr(noop_kernel) == hipSuccess);
        pthread_barrier_wait(&lockstep);
    }
    EXPECT(hipStreamSynchronize(s) == hipSuccess);
    return NULL;
}

/* The legacy launch sequence: hipLaunchByPtr counts on the stream given to hipConfigureCall. */
static void legacy_launches(const void *k)
{
    dim3 one = {1, 1, 1};
    hipStream_t lg, other;
    EXPECT(hipStreamCreate(&lg) == hipSuccess);
    EXPECT(hipStreamCreate(&other) == hipSuccess);
    long null_before = submitted(NULL);

    EXPECT(hipConfigureCall(one, one, 0, lg) == hipSuccess);
    EXPECT(submitted(lg) == 0); /* configuring is not work */
    EXPECT(hipLaunchByPtr(k) == hipSuccess);
    EXPECT(submitted(lg) == 1);
    /* Nested: the launch takes the latest configuration. */
    EXPECT(hipConfigureCall(one, one, 0, lg) == hipSuccess);
    EXPECT(hipConfigureCall(one, one, 0, NULL) == hipSuccess);
    EXPECT(hipLaunchByPtr(k) == hipSuccess);
    EXPECT(submitted(NULL) == null_before + 1 && submitted(lg) == 1);
    EXPECT(hipLaunchByPtr(k) == hipSuccess);
    EXPECT(submitted(lg) == 2);
    /* A failed launch uses its configuration up and is not counted; with nothing configured a
     * launch is counted nowhere. */
    EXPECT(hipConfigureCall(one, one, 0, other) == hipSuccess);
    EXPECT(hipLaunchByPtr((const void *)legacy_launches) == hipErrorInvalidDeviceFunction);
    EXPECT(hipLaunchByPtr(k) == hipErrorMissingConfiguration);
    EXPECT(submitted(other) == 0 && submitted(lg) == 2 && submitted(NULL) == null_before + 1);
    /* The simulator holds 8 configurations: the ninth fails, and the shim must not push it. */
    int pushed = 0;
    while (pushed < 100 && hipConfigureCall(one, one, 0, lg) == hipSuccess)
        pushed++;
    EXPECT(pushed == 8);
    EXPECT(hipConfigureCall(one, one, 0, other) == hipErrorOutOfMemory);
    for (int i = 0; i < pushed; i++)
        EXPECT(hipLaunchByPtr(k) == hipSuccess);
    EXPECT(hipLaunchByPtr(k) == hipErrorMissingConfiguration);
    EXPECT(submitted(lg) == 2 + pushed && submitted(other) == 0);
    (void)hipGetLastError();

    /* Each thread's configurations stay its own. */
    hipStream_t ts[2];
    pthread_t tid[2];
    noop_kernel = k;
    pthread_barrier_init(&lockstep, NULL, 2);
    for (int i = 0; i < 2; i++) {
        EXPECT(hipStreamCreate(&ts[i]) == hipSuccess);
        pthread_create(&tid[i], NULL, lockstep_thread, ts[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(tid[i], NULL);
        EXPECT(submitted(ts[i]) == LOCKSTEP_ROUNDS);
        EXPECT(hipStreamDestroy(ts[i]) == hipSuccess);
    }
    pthread_barrier_destroy(&lockstep);

    EXPECT(hipDeviceSynchronize() == hipSuccess);
    EXPECT(hipStreamDestroy(lg) == hipSuccess);
    EXPECT(hipStreamDestroy(other) == hipSuccess);
}

/* hipGraphInstantiateWithParams is work on uploadStream with hipGraphInstantiateFlagUpload only. */
static void instantiate_with_params(void)
{
    hipStream_t up;
    hipGraph_t g;
    hipGraphExec_t x;
    EXPECT(hipStreamCreate(&up) == hipSuccess);
    EXPECT(hipGraphCreate(&g, 0) == hipSuccess);
    long null_before = submitted(NULL);

    hipGraphInstantiateParams p = {.flags = 0, .uploadStream = up};
    EXPECT(hipGraphInstantiateWithParams(&x, g, &p) == hipSuccess);
    EXPECT(p.result_out == hipGraphInstantiateSuccess && hipGraphExecDestroy(x) == hipSuccess);
    EXPECT(submitted(up) == 0 && submitted(NULL) == null_before);

    p = (hipGraphInstantiateParams){.flags = hipGraphInstantiateFlagUpload, .uploadStream = up};
    EXPECT(hipGraphInstantiateWithParams(&x, g, &p) == hipSuccess);
    EXPECT(hipGraphExecDestroy(x) == hipSuccess);
    EXPECT(submitted(up) == 1 && submitted(NULL) == null_before);

    p = (hipGraphInstantiateParams){.flags = hipGraphInstantiateFlagUpload, .uploadStream = NULL};
    EXPECT(hipGraphInstantiateWithParams(&x, g, &p) == hipSuccess);
    EXPECT(hipGraphExecDestroy(x) == hipSuccess);
    EXPECT(submitted(NULL) == null_before + 1 && submitted(up) == 1);

    /* Refused flags and missing parameters: nothing counted, nothing read through NULL. */
    p = (hipGraphInstantiateParams){.flags = hipGraphInstantiateFlagUpload |
                                             hipGraphInstantiateFlagAutoFreeOnLaunch,
                                    .uploadStream = up};
    EXPECT(hipGraphInstantiateWithParams(&x, g, &p) == hipErrorInvalidValue);
    EXPECT(p.result_out == hipGraphInstantiateError);
    EXPECT(hipGraphInstantiateWithParams(&x, g, NULL) == hipErrorInvalidValue);
    EXPECT(submitted(up) == 1 && submitted(NULL) == null_before + 1);
    (void)hipGetLastError();

    EXPECT(hipGraphDestroy(g) == hipSuccess);
    EXPECT(hipStreamDestroy(up) == hipSuccess);
}

int main(void)
{
    stats = dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
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

    legacy_launches(k);
    instantiate_with_params();

    char path[4096];
    EXPECT(runtime_path(path, sizeof path) == 0 && strstr(path, "libamdhip64.so") != NULL);
    EXPECT(runtime_path(path, 4) == -ERANGE);
    printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
    return failures != 0;
}
