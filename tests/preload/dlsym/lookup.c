/*
 * lookup.c - run-time lookups find the shim's wrappers, the way Triton's HIP launcher looks up
 * hipModuleLaunchKernel: dlopen(RTLD_NOLOAD) of the runtime, then dlsym/dlvsym on that handle.
 * Everything else a lookup answers stays as without gpuprio: functions the shim does not wrap,
 * failed lookups and dlerror(), other libraries, and RTLD_DEFAULT/RTLD_NEXT lookups made from
 * a library loaded with RTLD_LOCAL (answered from that library's own scope).
 *
 *   lookup SCOPE_CALLER_LIB    (under LD_PRELOAD of libgpuprio-hip.so over the simulator)
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpuprio.h"
#include "hipsim.h"

#include "../../expect.h"

/* The file name of the object that defines addr ("" when none). */
static const char *object_of(const void *addr)
{
    Dl_info info;
    return addr && dladdr(addr, &info) && info.dli_fname ? info.dli_fname : "";
}

static bool in_shim(const void *addr)
{
    return strstr(object_of(addr), "libgpuprio-hip") != NULL;
}

static uint64_t noop(hipsimLaunch *l)
{
    (void)l;
    return 0;
}

typedef hipError_t (*launch_kernel_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t);
typedef hipError_t (*module_launch_fn)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, unsigned, hipStream_t, void **, void **);

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: lookup SCOPE_CALLER_LIB\n");
        return 2;
    }
    int (*stats)(void *, struct gpuprio_queue_stats *) =
        dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    if (!stats) {
        printf("FAIL: the gpuprio API is not in the process (run under LD_PRELOAD)\n");
        return 1;
    }

    /* Triton: the runtime the process already has, then its functions by name. */
    void *hip = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_NOLOAD);
    EXPECT(hip != NULL);
    module_launch_fn module_launch = (module_launch_fn)dlsym(hip, "hipModuleLaunchKernel");
    EXPECT(module_launch && in_shim((void *)module_launch));
    EXPECT(dlerror() == NULL);
    launch_kernel_fn launch = (launch_kernel_fn)dlvsym(hip, "hipLaunchKernel", "hip_4.2");
    EXPECT(launch && in_shim((void *)launch));
    EXPECT((void *)launch == dlsym(RTLD_DEFAULT, "hipLaunchKernel"));

    /* Calls through the looked-up pointers are seen. */
    hipStream_t s;
    EXPECT(hipStreamCreate(&s) == hipSuccess);
    const void *k = hipsimRegisterKernel("noop", noop, 0, NULL);
    dim3 one = {1, 1, 1};
    EXPECT(launch && launch(k, one, one, NULL, 0, s) == hipSuccess);
    EXPECT(module_launch &&
           module_launch((hipFunction_t)k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL) == hipSuccess);
    EXPECT(hipStreamSynchronize(s) == hipSuccess);
    struct gpuprio_queue_stats st;
    EXPECT(stats(s, &st) == 0 && st.submitted == 2);

    /* What the shim does not wrap, and failures, are the runtime's and libc's own answers. */
    void *count = dlsym(hip, "hipGetDeviceCount");
    EXPECT(count && strstr(object_of(count), "libamdhip64") != NULL);
    EXPECT(dlsym(hip, "hipNoSuchFunction") == NULL);
    const char *err = dlerror();
    EXPECT(err && strstr(err, "hipNoSuchFunction") != NULL);
    EXPECT(dlvsym(hip, "hipLaunchKernel", "hip_9.9") == NULL && dlerror() != NULL);
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    EXPECT(libc && dlsym(libc, "getpid") == (void *)getpid); /* not intercepted by sanitizers */

    /* RTLD_NEXT from the program: the next definition is the preloaded shim's. */
    EXPECT(in_shim(dlsym(RTLD_NEXT, "hipLaunchKernel")));

    /* Lookups from a library loaded RTLD_LOCAL are answered from its own scope. */
    void *caller = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    EXPECT(caller != NULL);
    if (caller) {
        void *(*lookup_default)(const char *) =
            (void *(*)(const char *))dlsym(caller, "scope_lookup_default");
        void *(*lookup_next)(const char *) =
            (void *(*)(const char *))dlsym(caller, "scope_lookup_next");
        EXPECT(lookup_default && lookup_next);
        if (lookup_default && lookup_next) {
            int (*value)(void) = (int (*)(void))lookup_default("scope_private_value");
            EXPECT(value && value() == 42);
            value = (int (*)(void))lookup_next("scope_private_value");
            EXPECT(value && value() == 42);
            EXPECT(lookup_default("no_such_symbol_anywhere") == NULL && dlerror() != NULL);
        }
    }

    EXPECT(hipStreamDestroy(s) == hipSuccess);
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
