/*
 * cuda_shim_test.c - a CUDA driver program that behaves the same with and without
 * libgpuprio-cuda.so, and whose streams the shim sees, whichever way it reaches the driver.
 *
 * Linked against the fake driver (fake_cuda.c, as libcuda.so.1). On stdout it prints only what
 * the application observes (results of "kernels" and copies, call results, its current
 * context); compare.sh runs it without the shim and with it, and requires identical stdout and
 * exit status. With --shim (only under LD_PRELOAD) it also checks, on stderr, what the shim saw,
 * through the public API found with dlsym as a Python program would find it with ctypes: the
 * queues of created streams, the null stream (NULL and CU_STREAM_LEGACY alike), the per-thread
 * stream (CU_STREAM_PER_THREAD, and NULL in the _ptsz form), a stream of another context,
 * another thread's null stream and per-thread streams (one queue per thread and device, in
 * gpuprio_stream_stats and gpuprio_stats); commands counted per queue (failed calls not), also
 * through pointers from cuGetProcAddress_v2 and from dlsym on dlopen("libcuda.so.1",
 * RTLD_NOLOAD), which must be the shim's wrappers; stream priorities;
 * gpuprio_stream_set_priority; destroyed streams forgotten. Any failed check makes the exit
 * status differ.
 *
 *   cuda_shim_test [--shim [--expect-tracked] [--expect-hw-priority=N]]
 *
 * --expect-tracked: the run schedules (streams of different priorities on both devices), so
 * the shim must have followed s1's and s3's commands with completion markers, queried from a
 * thread in relaxed capture mode.
 * --expect-hw-priority: the CUDA priority the shim must have given the stream created with
 * cuStreamCreate (run with GPUPRIO_PRIORITY set).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "cuda_must.h"
#include "gpuprio.h"

/* The per-thread form, declared by cuda.h only under CUDA_API_PER_THREAD_DEFAULT_STREAM. */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                             unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                             void **kernelParams, void **extra);

typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);

static int failures;

/* A check of what the shim saw (stderr only, so that stdout stays the application's). */
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The "kernel": adds params[1] to the int params[0] points to. */
static void add_kernel(void **params)
{
    *(int *)params[0] += *(int *)params[1];
}

static int sum;

static CUresult launch_with(launch_fn fn, CUstream s, int value)
{
    void *params[] = {&sum, &value};
    return fn((CUfunction)(void *)add_kernel, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

static CUresult launch(CUstream s, int value)
{
    return launch_with(cuLaunchKernel, s, value);
}

/* The public API, when the shim is loaded. */
static struct {
    int (*stats)(void *, struct gpuprio_queue_stats *);
    int (*all_stats)(struct gpuprio_queue_stats *, size_t);
    int (*set_priority)(void *, int);
    int (*get_priority)(void *, int *);
    int (*drain)(void *, unsigned);
    int (*runtime_path)(char *, size_t);
} api;
static int shim;

static uint64_t submitted(void *stream)
{
    struct gpuprio_queue_stats st;
    return api.stats(stream, &st) == 0 ? st.submitted : UINT64_MAX;
}

static CUcontext ctx0, ctx1;
static uint64_t main_tid;

/* How many queues gpuprio_stats lists of handle `stream` and thread tid, and their devices. */
static int queues_of(uint64_t stream, uint64_t tid, unsigned *devices)
{
    struct gpuprio_queue_stats st[64];
    int n = api.all_stats(st, 64), found = 0;
    *devices = 0;
    for (int i = 0; i < n && i < 64; i++) {
        if (st[i].stream == stream && st[i].thread == tid) {
            found++;
            *devices |= 1u << st[i].device;
        }
    }
    return found;
}

static void *other_thread(void *arg)
{
    (void)arg;
    MUST(cuCtxSetCurrent(ctx0));
    MUST(launch(NULL, 1000));
    MUST(launch(NULL, 1000));
    MUST(cuStreamSynchronize(NULL));
    if (shim)
        EXPECT(submitted(NULL) == 2); /* this thread's own null-stream queue */

    /* Per-thread work on both devices: one queue per (thread, device), this thread's own. */
    uint64_t me = (uint64_t)gettid(), pt = (uintptr_t)CU_STREAM_PER_THREAD;
    struct gpuprio_queue_stats st;
    MUST(launch(CU_STREAM_PER_THREAD, 1000000));
    MUST(launch_with(cuLaunchKernel_ptsz, NULL, 1000000));
    MUST(cuCtxSetCurrent(ctx1));
    MUST(launch_with(cuLaunchKernel_ptsz, NULL, 1000000));
    MUST(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    if (shim)
        EXPECT(api.stats(CU_STREAM_PER_THREAD, &st) == 0 && st.submitted == 1 && st.device == 1 &&
               st.thread == me && st.stream == pt);
    MUST(cuCtxSetCurrent(ctx0));
    MUST(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    if (shim) {
        EXPECT(api.stats(CU_STREAM_PER_THREAD, &st) == 0 && st.submitted == 2 && st.device == 0 &&
               st.thread == me && st.stream == pt);
        EXPECT(api.stats(NULL, &st) == 0 && st.submitted == 2 && st.thread == me && st.stream == 0);
        /* gpuprio_stats: this thread's two per-thread queues, and the main thread's own. */
        unsigned devices;
        EXPECT(queues_of(pt, me, &devices) == 2 && devices == 3);
        EXPECT(queues_of(pt, main_tid, &devices) == 1 && devices == 1);
        EXPECT(queues_of(0, me, &devices) == 1 && devices == 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int expect_hw = 1; /* 1: no expectation (CUDA priorities are <= 0) */
    int expect_tracked = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--shim") == 0)
            shim = 1;
        else if (strncmp(argv[i], "--expect-hw-priority=", 21) == 0)
            expect_hw = atoi(argv[i] + 21);
        else if (strcmp(argv[i], "--expect-tracked") == 0)
            expect_tracked = 1;
    }
    if (shim) {
        *(void **)&api.stats = dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
        *(void **)&api.all_stats = dlsym(RTLD_DEFAULT, "gpuprio_stats");
        *(void **)&api.set_priority = dlsym(RTLD_DEFAULT, "gpuprio_stream_set_priority");
        *(void **)&api.get_priority = dlsym(RTLD_DEFAULT, "gpuprio_stream_get_priority");
        *(void **)&api.drain = dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
        *(void **)&api.runtime_path = dlsym(RTLD_DEFAULT, "gpuprio_runtime_path");
        if (!api.stats || !api.all_stats || !api.set_priority || !api.get_priority || !api.drain ||
            !api.runtime_path) {
            fprintf(stderr, "FAIL: the gpuprio API is not in the process (run under LD_PRELOAD)\n");
            return 2;
        }
    }

    /* Before cuInit: the driver's error, unchanged. */
    CUstream early;
    printf("cuStreamCreate before cuInit -> %d\n", (int)cuStreamCreate(&early, 0));
    MUST(cuInit(0));
    CUdevice dev0, dev1;
    MUST(cuDeviceGet(&dev0, 0));
    MUST(cuDeviceGet(&dev1, 1));
    MUST(cuDevicePrimaryCtxRetain(&ctx0, dev0));
    MUST(cuDevicePrimaryCtxRetain(&ctx1, dev1));
    printf("launch without a context -> %d\n", (int)launch(NULL, 1));
    MUST(cuCtxSetCurrent(ctx0));

    CUstream s1, s2, s3, s4;
    MUST(cuStreamCreate(&s1, 0));
    MUST(cuStreamCreateWithPriority(&s2, CU_STREAM_NON_BLOCKING, -2));
    MUST(cuCtxSetCurrent(ctx1));
    MUST(cuStreamCreate(&s3, 0));
    MUST(cuStreamCreate(&s4, 0));
    MUST(cuCtxSetCurrent(ctx0));
    int p2;
    MUST(cuStreamGetPriority(s2, &p2));
    printf("s2 priority %d\n", p2);

    /* Work on every kind of stream. */
    for (int i = 0; i < 5; i++)
        MUST(launch(s1, 1));
    for (int i = 0; i < 3; i++)
        MUST(launch(s2, 10));
    MUST(launch(NULL, 100));
    MUST(launch(NULL, 100));
    MUST(launch(CU_STREAM_LEGACY, 100));
    MUST(launch(CU_STREAM_PER_THREAD, 10000));
    MUST(launch_with(cuLaunchKernel_ptsz, NULL, 10000));
    MUST(launch(s3, 100000)); /* a stream of ctx1 while ctx0 is current */
    MUST(launch(s3, 100000));
    char src[16] = "gpuprio-cuda", dst[16] = {0};
    MUST(cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, sizeof src, s1));
    CUevent ev;
    MUST(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    MUST(cuEventRecord(ev, s2));
    /* Instantiation with an upload puts work on the upload stream; without one, on none. */
    CUgraphExec exec;
    CUDA_GRAPH_INSTANTIATE_PARAMS upload = {.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD,
                                            .hUploadStream = s2};
    CUDA_GRAPH_INSTANTIATE_PARAMS no_upload = {.flags = 0, .hUploadStream = s2};
    MUST(cuGraphInstantiateWithParams(&exec, (CUgraph)(void *)&upload, &upload));
    MUST(cuGraphInstantiateWithParams(&exec, (CUgraph)(void *)&no_upload, &no_upload));
    printf("instantiate with a NULL params -> %d\n",
           (int)cuGraphInstantiateWithParams(&exec, (CUgraph)(void *)&upload, NULL));
    /* Failed calls: the driver's errors, unchanged, and not counted as work. */
    printf("launch of a NULL function -> %d\n",
           (int)cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    printf("empty grid -> %d\n", (int)cuLaunchKernel((CUfunction)(void *)add_kernel, 0, 1, 1, 1, 1,
                                                     1, 0, s1, NULL, NULL));

    /* Through cuGetProcAddress_v2, legacy and per-thread forms. */
    launch_fn by_proc = NULL, by_proc_pt = NULL;
    CUdriverProcAddressQueryResult status;
    MUST(cuGetProcAddress_v2("cuLaunchKernel", (void **)&by_proc, 13000,
                             CU_GET_PROC_ADDRESS_DEFAULT, &status));
    printf("cuGetProcAddress_v2(cuLaunchKernel) status %d\n", (int)status);
    MUST(cuGetProcAddress_v2("cuLaunchKernel", (void **)&by_proc_pt, 13000,
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));
    void *none = (void *)1;
    printf("cuGetProcAddress_v2(cuNoSuchFunction) -> %d, %s\n",
           (int)cuGetProcAddress_v2("cuNoSuchFunction", &none, 13000, 0, &status),
           none ? "pointer" : "NULL");
    MUST(launch_with(by_proc, s1, 1));
    MUST(launch_with(by_proc_pt, NULL, 10000));

    /* Through dlsym on the driver's handle, as the CUDA runtime and Triton look it up. */
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    launch_fn by_dlsym = h ? (launch_fn)dlsym(h, "cuLaunchKernel") : NULL;
    printf("dlsym(libcuda.so.1, cuLaunchKernel): %s\n", by_dlsym ? "found" : "missing");
    if (by_dlsym)
        MUST(launch_with(by_dlsym, s1, 1));
    printf("dlsym(libcuda.so.1, cuNoSuchFunction): %s\n",
           h && dlsym(h, "cuNoSuchFunction") ? "found" : "missing");

    pthread_t t;
    main_tid = (uint64_t)gettid();
    if (pthread_create(&t, NULL, other_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;

    MUST(cuStreamSynchronize(s1));
    MUST(cuStreamSynchronize(s2));
    MUST(cuStreamSynchronize(NULL));
    MUST(cuStreamSynchronize(s3));
    printf("sum %d\n", sum);
    printf("copied \"%s\"\n", dst);
    CUcontext now;
    MUST(cuCtxGetCurrent(&now));
    printf("current context is %s\n", now == ctx0 ? "ctx0" : "another");

    if (shim) {
        Dl_info info;
        EXPECT(by_proc == (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel"));
        EXPECT(by_proc && dladdr((void *)by_proc, &info) && strstr(info.dli_fname, "gpuprio"));
        EXPECT(by_proc_pt == (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel_ptsz"));
        EXPECT(by_dlsym == (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel"));

        struct gpuprio_queue_stats st;
        /* 5 launches, the copy, one through cuGetProcAddress_v2, one through dlsym. */
        EXPECT(submitted(s1) == 8);
        EXPECT(submitted(s2) == 5); /* 3 launches, the event record, the graph upload */
        EXPECT(api.stats(s2, &st) == 0 && st.stream_priority == -2 &&
               st.flags == CU_STREAM_NON_BLOCKING && st.device == 0);
        EXPECT(submitted(NULL) == 3); /* NULL twice and CU_STREAM_LEGACY: one stream */
        EXPECT(submitted(CU_STREAM_LEGACY) == 3);
        /* CU_STREAM_PER_THREAD, NULL in cuLaunchKernel_ptsz and through the _ptsz pointer; the
         * other thread's per-thread work went to its own queues. */
        EXPECT(submitted(CU_STREAM_PER_THREAD) == 3);
        EXPECT(api.stats(CU_STREAM_PER_THREAD, &st) == 0 && st.thread == main_tid &&
               st.device == 0 && st.stream == (uintptr_t)CU_STREAM_PER_THREAD);
        EXPECT(api.stats(s3, &st) == 0 && st.submitted == 2 && st.device == 1);
        EXPECT(api.stats(NULL, &st) == 0 && st.thread != 0 && st.device == 0);
        EXPECT(api.all_stats(NULL, 0) >= 5);

        int p = 0;
        EXPECT(api.set_priority(s1, GPUPRIO_PRIORITY_HIGH) == 0);
        EXPECT(api.get_priority(s1, &p) == 0 && p == GPUPRIO_PRIORITY_HIGH);
        EXPECT(api.set_priority(s1, GPUPRIO_PRIORITY_MAX + 1) == -EINVAL);
        EXPECT(api.set_priority((void *)&p, 0) == -ENOENT);
        EXPECT(api.drain(s1, 5000) == 0);
        EXPECT(api.stats(s1, &st) == 0 && st.completed <= st.submitted);

        char path[4096];
        EXPECT(api.runtime_path(path, sizeof path) == 0 && strstr(path, "libcuda.so") != NULL);
        /* Scheduled runs follow s1 and s3 with markers: every command's marker was recorded
         * (s3's in ctx1, pushed for the purpose, ctx0 being current) and seen reached. */
        if (expect_tracked) {
            EXPECT(api.stats(s1, &st) == 0 && st.completed == st.submitted);
            EXPECT(api.drain(s3, 5000) == 0);
            EXPECT(api.stats(s3, &st) == 0 && st.completed == 2);
            /* This program queries no event itself: every query was the watcher's, made in
             * relaxed capture mode, so that it can never break another thread's capture. */
            void (*queries)(int *, int *) = NULL;
            *(void **)&queries = dlsym(RTLD_DEFAULT, "fake_cuda_event_queries");
            int relaxed = 0, other = -1;
            if (queries)
                queries(&relaxed, &other);
            EXPECT(relaxed > 0 && other == 0);
        }
        if (expect_hw <= 0) {
            int p1 = 1;
            EXPECT(cuStreamGetPriority(s1, &p1) == CUDA_SUCCESS && p1 == expect_hw);
        }
    }

    MUST(cuEventDestroy(ev));
    MUST(cuStreamDestroy(s1));
    MUST(cuStreamDestroy(s2));
    MUST(cuStreamDestroy(s3));
    MUST(cuStreamDestroy(s4));
    if (shim) {
        struct gpuprio_queue_stats st;
        EXPECT(api.stats(s1, &st) == -ENOENT);
        EXPECT(api.stats(s3, &st) == -ENOENT);
        fprintf(stderr, "%s: %d failures\n", failures ? "FAIL" : "ok", failures);
    }
    if (h)
        dlclose(h);
    printf("done\n");
    return failures ? 3 : 0;
}
