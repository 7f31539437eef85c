/*
 * binding_common.h - helpers shared by the binding tests (override.c, two_runtimes.c,
 * exec_test.c), which check which HIP runtime the preloaded shim binds to and that the
 * application's HIP results stay right whatever it binds to.
 *
 * The programs link the simulator (libamdhip64.so.6) and not gpuprio: they find the public API
 * with dlsym, as a Python program would with ctypes. Failed checks are printed on stdout, so
 * that the runners can require stderr to hold nothing but what gpuprio says.
 */
#ifndef BINDING_COMMON_H
#define BINDING_COMMON_H

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "gpuprio.h"
#include "hipsim.h"

#include "../../expect.h"

/* The public gpuprio API, found in the process (NULL members when the shim is not loaded). */
struct gp_api {
    int (*stream_stats)(void *, struct gpuprio_queue_stats *);
    int (*runtime_path)(char *, size_t);
};

static inline int gp_api_find(struct gp_api *api)
{
    api->stream_stats =
        (int (*)(void *, struct gpuprio_queue_stats *))dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    api->runtime_path = (int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "gpuprio_runtime_path");
    if (api->stream_stats && api->runtime_path)
        return 0;
    printf("FAIL: the gpuprio API is not in the process (run under LD_PRELOAD)\n");
    return -1;
}

/* The commands gpuprio counted on stream, or -1 with the API's error in *rc. */
static inline long long gp_submitted(const struct gp_api *api, hipStream_t stream, int *rc)
{
    struct gpuprio_queue_stats st = {0};
    *rc = api->stream_stats(stream, &st);
    return *rc == 0 ? (long long)st.submitted : -1;
}

static inline int count_runtime(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    *(int *)data += strncmp(base, "libamdhip64.so", 14) == 0;
    return 0;
}

/* How many HIP runtimes (objects named libamdhip64.so*) are mapped in the process. */
static inline int mapped_runtimes(void)
{
    int n = 0;
    dl_iterate_phdr(count_runtime, &n);
    return n;
}

/*
 * The path under which the runtime the program links is mapped. hipsimRegisterKernel is the
 * simulator's own API, which the shim does not export, so this is never the shim.
 */
static inline const char *linked_runtime(void)
{
    Dl_info info;
    if (!dladdr((const void *)&hipsimRegisterKernel, &info) || !info.dli_fname)
        return "";
    return info.dli_fname;
}

static inline uint64_t add_fn(hipsimLaunch *l)
{
    int *p = *(int **)l->args[0];
    *p += *(int *)l->args[1];
    return *(uint64_t *)l->args[2];
}

/* hipLaunchKernel of "add": *dst += value, holding the device for ns nanoseconds. */
static inline hipError_t launch_add(int *dst, int value, uint64_t ns, hipStream_t s)
{
    size_t sizes[] = {sizeof(int *), sizeof(int), sizeof(uint64_t)};
    const void *k = hipsimRegisterKernel("add", add_fn, 3, sizes);
    void *args[] = {&dst, &value, &ns};
    dim3 one = {1, 1, 1};
    return hipLaunchKernel(k, one, one, args, 0, s);
}

/*
 * On a new stream (returned in *stream_out, for the caller to look up): 3 launches adding 1 to a
 * zeroed device integer, then a copy back. Returns the value read (3 when right), or a negative
 * number naming the step that failed. The stream sees 4 commands.
 */
static inline int add_three_on_stream(hipStream_t *stream_out)
{
    int *d = NULL, h = -100;
    hipStream_t s;
    if (hipStreamCreate(&s) != hipSuccess)
        return -1;
    *stream_out = s;
    if (hipMalloc((void **)&d, sizeof *d) != hipSuccess || hipMemset(d, 0, sizeof *d) != hipSuccess)
        return -2;
    for (int i = 0; i < 3; i++)
        if (launch_add(d, 1, 1000, s) != hipSuccess)
            return -3;
    if (hipMemcpyAsync(&h, d, sizeof h, hipMemcpyDeviceToHost, s) != hipSuccess ||
        hipStreamSynchronize(s) != hipSuccess)
        return -4;
    hipFree(d);
    return h;
}

#endif /* BINDING_COMMON_H */
