/*
 * sched_test.h - what the scheduler tests share: checks that count failures, the public gpuprio
 * API found with dlsym (as Python's ctypes finds it), and a simulated kernel that runs for a
 * given time with a tag that shows up in the simulator's trace.
 */
#ifndef SCHED_TEST_H
#define SCHED_TEST_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuprio.h"
#include "hipsim.h"

#include "../../expect.h"

#define MUST(call)                                                                                 \
    do {                                                                                           \
        hipError_t must_err = (call);                                                              \
        if (must_err != hipSuccess) {                                                              \
            printf("FAIL %s:%d: %s -> %d\n", __FILE__, __LINE__, #call, (int)must_err);            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

struct gp_api {
    int (*thread_set_priority)(int);
    int (*thread_get_priority)(int *);
    int (*stream_set_priority)(void *, int);
    int (*stream_get_priority)(void *, int *);
    int (*stream_stats)(void *, struct gpuprio_queue_stats *);
    int (*stats)(struct gpuprio_queue_stats *, size_t);
    int (*stream_drain)(void *, unsigned);
};

/* The API of the preloaded shim; exits when it is not loaded. */
static inline struct gp_api gp_api_find(void)
{
    struct gp_api a;
    *(void **)&a.thread_set_priority = dlsym(RTLD_DEFAULT, "gpuprio_thread_set_priority");
    *(void **)&a.thread_get_priority = dlsym(RTLD_DEFAULT, "gpuprio_thread_get_priority");
    *(void **)&a.stream_set_priority = dlsym(RTLD_DEFAULT, "gpuprio_stream_set_priority");
    *(void **)&a.stream_get_priority = dlsym(RTLD_DEFAULT, "gpuprio_stream_get_priority");
    *(void **)&a.stream_stats = dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    *(void **)&a.stats = dlsym(RTLD_DEFAULT, "gpuprio_stats");
    *(void **)&a.stream_drain = dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    if (!a.thread_set_priority || !a.thread_get_priority || !a.stream_set_priority ||
        !a.stream_get_priority || !a.stream_stats || !a.stats || !a.stream_drain) {
        printf("FAIL: the gpuprio API is not in the process (run under LD_PRELOAD)\n");
        exit(1);
    }
    return a;
}

/* The HIP stream priority gpuprio creates a stream of gpuprio priority p with (hardware
 * priorities: greatest above normal, least below, the default at normal). */
static inline int hip_priority_of(int p)
{
    return p > GPUPRIO_PRIORITY_NORMAL ? -1 : p < GPUPRIO_PRIORITY_NORMAL ? 1 : 0;
}

/* The stream's stats once gpuprio has seen all its work finish (gpuprio_stream_drain). */
static inline struct gpuprio_queue_stats settled_stats(const struct gp_api *api, void *stream)
{
    struct gpuprio_queue_stats st = {0};
    EXPECT(api->stream_drain(stream, 2000) == 0);
    EXPECT(api->stream_stats(stream, &st) == 0);
    return st;
}

/* busy(ns, tag): occupies the device for ns and tags its trace entry. */
static inline uint64_t busy_kernel(hipsimLaunch *l)
{
    l->tag = *(uint64_t *)l->args[1];
    return *(uint64_t *)l->args[0];
}

static inline const void *busy_register(void)
{
    size_t sizes[] = {sizeof(uint64_t), sizeof(uint64_t)};
    return hipsimRegisterKernel("busy", busy_kernel, 2, sizes);
}

/* A queue takes part in scheduling from its first command on (docs/scheduler.md): the
 * latency-critical side of a test puts one on its stream before the load starts, as a service
 * warms up before it takes requests. An event record occupies no engine and leaves no trace. */
static inline void warm_up(hipStream_t s)
{
    hipEvent_t e;
    MUST(hipEventCreate(&e));
    MUST(hipEventRecord(e, s));
    MUST(hipEventSynchronize(e));
    MUST(hipEventDestroy(e));
}

static inline hipError_t busy_launch(const void *k, uint64_t ns, uint64_t tag, hipStream_t s)
{
    void *args[] = {&ns, &tag};
    dim3 one = {1, 1, 1};
    return hipLaunchKernel(k, one, one, args, 0, s);
}

#endif /* SCHED_TEST_H */
