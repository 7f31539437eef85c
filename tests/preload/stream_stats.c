/*
 * stream_stats.c - the shim gives every stream an XQueue that observes it.
 *
 * Run under LD_PRELOAD of libgpuprio-hip.so over the simulator. The program does not link
 * gpuprio; it finds the public API with dlsym, as a Python program would with ctypes, and checks
 * what the XQueues saw: commands counted per stream (created streams, the null stream, the
 * per-thread stream, _spt entry points, hipExtModuleLaunchKernel and hipHccModuleLaunchKernel
 * under their C and C++ names,
 * ROCm 5's hipLaunchKernelGGLImpl, hipLaunchByPtr on the stream given to hipConfigureCall,
 * hipGraphInstantiateWithParams uploading on its uploadStream),
 * creation flags and priority, destroyed streams
 * forgotten, and the runtime gpuprio bound to being the simulator the program linked. Per-thread
 * work has one queue per (thread, device), apart from the thread's null-stream queue (run with
 * HIPSIM_DEVICES=2).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpuprio.h"
#include "hipsim.h"
/* hipGraphInstantiateWithParams is newer than the 5.2.3 headers. */
#include "../../src/shim/hip/hip_compat_shim.h"

#include "../expect.h"

static uint64_t noop(hipsimLaunch *l)
{
    (void)l;
    return 0;
}

static int (*stats)(void *, struct gpuprio_queue_stats *);
static int (*drain)(void *, unsigned);

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

/*
 * Per-thread work on two threads at once, each on two devices: the per-thread stream (stream 0
 * in the _spt form, or hipStreamPerThread) has one queue per (thread, device), the legacy null
 * stream another per (device, thread), and each counts its own thread's work on its own device
 * only, as gpuprio_stream_stats on the thread and gpuprio_stats from anywhere show.
 */
#define PT_THREADS 2
static pthread_barrier_t pt_barrier;
static uint64_t pt_tid[PT_THREADS];
static int (*all_stats)(struct gpuprio_queue_stats *, size_t);

/* How many queues gpuprio_stats lists of handle `stream` and thread tid, and their devices. */
static int queues_of(uint64_t stream, uint64_t tid, unsigned *devices)
{
    struct gpuprio_queue_stats st[64];
    int n = all_stats(st, 64), found = 0;
    *devices = 0;
    for (int i = 0; i < n && i < 64; i++) {
        if (st[i].stream == stream && st[i].thread == tid) {
            found++;
            *devices |= 1u << st[i].device;
        }
    }
    return found;
}

static void *per_thread_worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    uint64_t pt = (uintptr_t)hipStreamPerThread;
    dim3 one = {1, 1, 1};
    struct gpuprio_queue_stats st;
    pt_tid[me] = (uint64_t)gettid();

    /* Device 0: three per-thread launches (two in the _spt form), one on the null stream. */
    EXPECT(hipSetDevice(0) == hipSuccess);
    EXPECT(hipLaunchKernel_spt(noop_kernel, one, one, NULL, 0, NULL) == hipSuccess);
    EXPECT(hipLaunchKernel_spt(noop_kernel, one, one, NULL, 0, NULL) == hipSuccess);
    EXPECT(hipLaunchKernel(noop_kernel, one, one, NULL, 0, hipStreamPerThread) == hipSuccess);
    EXPECT(hipLaunchKernel(noop_kernel, one, one, NULL, 0, NULL) == hipSuccess);
    /* Device 1: one per-thread launch. */
    EXPECT(hipSetDevice(1) == hipSuccess);
    EXPECT(hipLaunchKernel_spt(noop_kernel, one, one, NULL, 0, NULL) == hipSuccess);
    EXPECT(hipStreamSynchronize(hipStreamPerThread) == hipSuccess);
    EXPECT(stats(hipStreamPerThread, &st) == 0 && st.submitted == 1 && st.device == 1 &&
           st.thread == pt_tid[me] && st.stream == pt);
    EXPECT(hipSetDevice(0) == hipSuccess);
    EXPECT(hipStreamSynchronize(hipStreamPerThread) == hipSuccess);
    EXPECT(stats(hipStreamPerThread, &st) == 0 && st.submitted == 3 && st.device == 0 &&
           st.thread == pt_tid[me] && st.stream == pt);
    EXPECT(stats(NULL, &st) == 0 && st.submitted == 1 && st.device == 0 &&
           st.thread == pt_tid[me] && st.stream == 0);

    /* Both threads' queues at once (a thread's are forgotten when it exits). */
    pthread_barrier_wait(&pt_barrier);
    unsigned devices;
    for (int t = 0; t < PT_THREADS; t++) {
        EXPECT(queues_of(pt, pt_tid[t], &devices) == 2 && devices == 3);
        EXPECT(queues_of(0, pt_tid[t], &devices) == 1 && devices == 1);
    }
    pthread_barrier_wait(&pt_barrier);
    return NULL;
}

static void per_thread_queues(const void *k)
{
    long own = submitted(hipStreamPerThread), own_null = submitted(NULL);
    pthread_t tid[PT_THREADS];
    noop_kernel = k;
    pthread_barrier_init(&pt_barrier, NULL, PT_THREADS);
    for (int t = 0; t < PT_THREADS; t++)
        pthread_create(&tid[t], NULL, per_thread_worker, (void *)(intptr_t)t);
    for (int t = 0; t < PT_THREADS; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&pt_barrier);
    EXPECT(pt_tid[0] != pt_tid[1]);
    /* This thread's queues saw none of it. */
    EXPECT(submitted(hipStreamPerThread) == own && submitted(NULL) == own_null);
}

int main(void)
{
    stats = dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    *(void **)&drain = dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    int (*runtime_path)(char *, size_t) = dlsym(RTLD_DEFAULT, "gpuprio_runtime_path");
    *(void **)&all_stats = dlsym(RTLD_DEFAULT, "gpuprio_stats");
    if (!stats || !drain || !runtime_path || !all_stats) {
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

    /* hipStreamLegacy in an _spt form is the per-thread stream (clr's PER_THREAD_DEFAULT_STREAM):
     * its work counts there, not on the legacy null stream. */
    long pt_before = submitted(hipStreamPerThread), legacy_before = submitted(hipStreamLegacy);
    EXPECT(hipLaunchKernel_spt(k, one, one, NULL, 0, hipStreamLegacy) == hipSuccess);
    EXPECT(hipMemsetAsync_spt(&(int){0}, 0, 0, hipStreamLegacy) == hipSuccess);
    EXPECT(hipDeviceSynchronize() == hipSuccess);
    EXPECT(submitted(hipStreamPerThread) == pt_before + 2);
    EXPECT(submitted(hipStreamLegacy) == legacy_before);
    /* So is a capture begun there, which ends through hipStreamPerThread: gpuprio must see it end,
     * or it takes a capture for in progress for good and follows no stream's commands again. */
    hipGraph_t captured = NULL;
    EXPECT(hipStreamBeginCapture_spt(hipStreamLegacy, hipStreamCaptureModeGlobal) == hipSuccess);
    EXPECT(hipStreamEndCapture(hipStreamPerThread, &captured) == hipSuccess && captured);
    EXPECT(hipGraphDestroy(captured) == hipSuccess);
    hipStream_t urgent, low;
    EXPECT(hipStreamCreateWithPriority(&urgent, 0, -1) == hipSuccess);
    EXPECT(hipStreamCreateWithPriority(&low, 0, 1) == hipSuccess);
    EXPECT(hipLaunchKernel(k, one, one, NULL, 0, urgent) == hipSuccess);
    for (int i = 0; i < 3; i++)
        EXPECT(hipLaunchKernel(k, one, one, NULL, 0, low) == hipSuccess);
    EXPECT(hipStreamSynchronize(low) == hipSuccess);
    EXPECT(drain(low, 5000) == 0);
    EXPECT(stats(low, &st) == 0 && st.submitted == 3 && st.completed == 3);
    EXPECT(hipStreamDestroy(urgent) == hipSuccess && hipStreamDestroy(low) == hipSuccess);
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
    EXPECT(ext_cxx &&
           ext_cxx(fn, 1, 1, 1, 1, 1, 1, 0, ext, NULL, NULL, NULL, NULL, 0) == hipSuccess);
    EXPECT(hipExtModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, ext, NULL, NULL, NULL, NULL, 0) ==
           hipSuccess);
    typedef hipError_t (*hcc_launch_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                        uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                        hipEvent_t, hipEvent_t);
    hcc_launch_fn hcc_cxx = (hcc_launch_fn)dlsym(RTLD_DEFAULT, HIP_HCC_MODULE_LAUNCH_KERNEL_CXX);
    EXPECT(hcc_cxx && hcc_cxx(fn, 1, 1, 1, 1, 1, 1, 0, ext, NULL, NULL, NULL, NULL) == hipSuccess);
    EXPECT(hipHccModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, ext, NULL, NULL, NULL, NULL) ==
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
    EXPECT(stats(ext, &st) == 0 && st.submitted == 5);

    legacy_launches(k);
    instantiate_with_params();
    per_thread_queues(k);

    char path[4096];
    EXPECT(runtime_path(path, sizeof path) == 0 && strstr(path, "libamdhip64.so") != NULL);
    EXPECT(runtime_path(path, 4) == -ERANGE);
    printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
    return failures != 0;
}
