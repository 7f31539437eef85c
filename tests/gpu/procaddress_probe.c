/*
 * procaddress_probe.c - what the real driver's cuGetProcAddress_v2 hands out, and whether the
 * CUDA shim's assumptions about it hold (run WITHOUT gpuprio, on a machine with a GPU).
 *
 * libgpuprio-cuda.so swaps a pointer from cuGetProcAddress for its wrapper only when the pointer
 * is the address of an exported driver function (what dlsym on the driver handle gives). For a
 * few functions and both per-thread-default-stream flags this prints which export the pointer
 * equals: the base name, _v2, _ptsz, _ptds, _v2_ptsz, or none (the assumption fails for it).
 * It also checks the completion markers' assumptions: cuEventQuery answers on a thread with no
 * current context, and cuStreamGetCtx of the special handles is the current context.
 *
 * Built with a plain C compiler against cuda.h; libcuda.so.1 is dlopen()ed, never linked.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static void *lib;

#define LOAD(var, name)                                                                            \
    do {                                                                                           \
        *(void **)&(var) = dlsym(lib, name);                                                       \
        if (!(var)) {                                                                              \
            printf("FATAL: libcuda.so.1 lacks %s\n", name);                                        \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static CUresult (*p_event_query)(CUevent);
static CUevent event;
static CUresult thread_result;

static void *query_without_context(void *arg)
{
    (void)arg;
    thread_result = p_event_query(event);
    return NULL;
}

int main(void)
{
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("FATAL: dlopen(libcuda.so.1): %s\n", dlerror());
        return 1;
    }
    CUresult (*p_init)(unsigned);
    CUresult (*p_get_proc)(const char *, void **, int, cuuint64_t,
                           CUdriverProcAddressQueryResult *);
    CUresult (*p_version)(int *);
    LOAD(p_init, "cuInit");
    LOAD(p_get_proc, "cuGetProcAddress_v2");
    LOAD(p_version, "cuDriverGetVersion");
    if (p_init(0) != CUDA_SUCCESS) {
        printf("FATAL: cuInit failed\n");
        return 1;
    }
    int version = 0;
    p_version(&version);
    printf("driver version %d\n", version);

    static const char *const names[] = {
        "cuLaunchKernel",      "cuLaunchKernelEx",  "cuMemcpyAsync",        "cuEventRecord",
        "cuStreamSynchronize", "cuMemcpyHtoDAsync", "cuStreamBeginCapture", "cuGetProcAddress"};
    static const char *const suffixes[] = {"",      "_v2",      "_v3",     "_ptsz",
                                           "_ptds", "_v2_ptsz", "_v2_ptds"};
    static const struct {
        const char *name;
        cuuint64_t value;
    } flags[] = {{"CU_GET_PROC_ADDRESS_DEFAULT", CU_GET_PROC_ADDRESS_DEFAULT},
                 {"CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM",
                  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM}};
    int unmatched = 0;
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
            void *fn = NULL;
            CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
            CUresult r = p_get_proc(names[n], &fn, 13000, flags[f].value, &status);
            printf("%-22s %-46s -> result %d status %d:", names[n], flags[f].name, (int)r,
                   (int)status);
            int matched = 0;
            for (size_t s = 0; fn && s < sizeof suffixes / sizeof suffixes[0]; s++) {
                char sym[128];
                snprintf(sym, sizeof sym, "%s%s", names[n], suffixes[s]);
                void *exported = dlsym(lib, sym);
                if (exported && exported == fn) {
                    printf(" = dlsym(%s)", sym);
                    matched = 1;
                }
            }
            if (!fn)
                printf(" NULL");
            else if (!matched) {
                Dl_info info;
                printf(" MATCHES NO EXPORT (%p, near %s)", fn,
                       dladdr(fn, &info) && info.dli_sname ? info.dli_sname : "?");
                unmatched++;
            }
            printf("\n");
        }

    /* The markers' assumptions. */
    CUresult (*p_device_get)(CUdevice *, int);
    CUresult (*p_retain)(CUcontext *, CUdevice);
    CUresult (*p_set_current)(CUcontext);
    CUresult (*p_stream_create)(CUstream *, unsigned);
    CUresult (*p_stream_get_ctx)(CUstream, CUcontext *);
    CUresult (*p_event_create)(CUevent *, unsigned);
    CUresult (*p_event_record)(CUevent, CUstream);
    CUresult (*p_sync)(CUstream);
    CUresult (*p_range)(int *, int *);
    LOAD(p_device_get, "cuDeviceGet");
    LOAD(p_retain, "cuDevicePrimaryCtxRetain");
    LOAD(p_set_current, "cuCtxSetCurrent");
    LOAD(p_stream_create, "cuStreamCreate");
    LOAD(p_stream_get_ctx, "cuStreamGetCtx");
    LOAD(p_event_create, "cuEventCreate");
    LOAD(p_event_record, "cuEventRecord");
    LOAD(p_event_query, "cuEventQuery");
    LOAD(p_sync, "cuStreamSynchronize");
    LOAD(p_range, "cuCtxGetStreamPriorityRange");
    CUdevice dev;
    CUcontext ctx, got;
    CUstream s;
    if (p_device_get(&dev, 0) || p_retain(&ctx, dev) || p_set_current(ctx) ||
        p_stream_create(&s, 0) || p_event_create(&event, CU_EVENT_DISABLE_TIMING) ||
        p_event_record(event, s) || p_sync(s)) {
        printf("FATAL: context, stream or event setup failed\n");
        return 1;
    }
    int least = 0, greatest = 0;
    p_range(&least, &greatest);
    printf("stream priority range: least %d, greatest %d\n", least, greatest);
    static const struct {
        const char *name;
        CUstream s;
    } specials[] = {{"NULL", NULL},
                    {"CU_STREAM_LEGACY", CU_STREAM_LEGACY},
                    {"CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD}};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        got = NULL;
        CUresult r = p_stream_get_ctx(specials[i].s, &got);
        printf("cuStreamGetCtx(%s) -> %d, %s\n", specials[i].name, (int)r,
               got == ctx ? "the current context" : "another context");
    }
    pthread_t t;
    if (pthread_create(&t, NULL, query_without_context, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    printf("cuEventQuery on a thread without a current context -> %d (%s)\n", (int)thread_result,
           thread_result == CUDA_SUCCESS ? "fine" : "the watcher must set the context");
    printf("%s: %d lookups match no export\n", unmatched ? "WARNING" : "ok", unmatched);
    return 0;
}
