/*
 * conf.h - shared helpers of the HIP conformance programs (tests/conformance).
 *
 * Every program prints what an application can observe (values, error names, event and stream
 * states, orders the API defines) to stdout, deterministically; run.sh compares that with
 * expected/NAME.out, which was written from docs/simulator.md and the HIP semantics.
 *
 * Kernels are host functions registered with hipsimRegisterKernel (hipsim.h). They run on the
 * simulator's worker threads, so everything they share with main is either an atomic or is read
 * by main only after a HIP synchronisation.
 *
 * Include this header first: it selects the POSIX/GNU feature set the programs use.
 */
#ifndef GPUPRIO_CONF_H
#define GPUPRIO_CONF_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hip_compat.h"
#include "hipsim.h"

#define CONF_MS ((uint64_t)1000000) /* one simulated millisecond, in ns */

/* ---- printing ------------------------------------------------------------------------------ */

static inline const char *conf_err(hipError_t e)
{
    const char *n = hipGetErrorName(e);
    return n ? n : "(null)";
}

static inline const char *conf_yes(int cond)
{
    return cond ? "yes" : "no";
}

/* Prints "label -> hipErrorName" and returns the result. */
static inline hipError_t conf_show(const char *label, hipError_t e)
{
    printf("%s -> %s\n", label, conf_err(e));
    return e;
}
#define SHOW(label, expr) conf_show((label), (expr))

/* A call the program's structure depends on: on failure, say so on stdout and exit 1. */
static inline void conf_must(const char *what, hipError_t e)
{
    if (e != hipSuccess) {
        printf("FATAL: %s -> %s\n", what, conf_err(e));
        fflush(stdout);
        exit(1);
    }
}
#define MUST(expr) conf_must(#expr, (expr))

static inline const char *conf_capture_status(hipStreamCaptureStatus s)
{
    switch (s) {
    case hipStreamCaptureStatusNone:
        return "None";
    case hipStreamCaptureStatusActive:
        return "Active";
    case hipStreamCaptureStatusInvalidated:
        return "Invalidated";
    }
    return "(unknown)";
}

/* ---- time ---------------------------------------------------------------------------------- */

static inline void conf_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- an order log that kernels and host functions append to -------------------------------- */

#define CONF_LOG_MAX 1024

typedef struct conf_log {
    atomic_int n;
    atomic_int v[CONF_LOG_MAX];
} conf_log;

static inline void conf_log_reset(conf_log *l)
{
    atomic_store(&l->n, 0);
}

static inline void conf_log_add(conf_log *l, int value)
{
    int i = atomic_fetch_add(&l->n, 1);
    if (i >= 0 && i < CONF_LOG_MAX)
        atomic_store(&l->v[i], value);
}

static inline int conf_log_count(conf_log *l)
{
    return atomic_load(&l->n);
}

/* Prints "label: v0 v1 ..." (only the entries for which keep(v) holds when keep is given). */
static inline void conf_log_print_if(const char *label, conf_log *l, int (*keep)(int))
{
    int n = atomic_load(&l->n);
    printf("%s:", label);
    for (int i = 0; i < n && i < CONF_LOG_MAX; i++) {
        int v = atomic_load(&l->v[i]);
        if (!keep || keep(v))
            printf(" %d", v);
    }
    printf("\n");
}

static inline void conf_log_print(const char *label, conf_log *l)
{
    conf_log_print_if(label, l, NULL);
}

/* ---- kernels ------------------------------------------------------------------------------- */

#define CONF_ARG(launch, i, type) (*(type *)(launch)->args[(i)])

/* conf_log(conf_log *log, int value, uint64_t ns): appends value, runs ns. */
static inline uint64_t conf_kernel_log(hipsimLaunch *l)
{
    conf_log_add(CONF_ARG(l, 0, conf_log *), CONF_ARG(l, 1, int));
    l->tag = (uint64_t)CONF_ARG(l, 1, int);
    return CONF_ARG(l, 2, uint64_t);
}

/* conf_sleep(uint64_t ns): does nothing for ns. */
static inline uint64_t conf_kernel_sleep(hipsimLaunch *l)
{
    return CONF_ARG(l, 0, uint64_t);
}

/* conf_fill(int *dst, int value, int count, uint64_t ns): dst[0..count) = value. */
static inline uint64_t conf_kernel_fill(hipsimLaunch *l)
{
    int *dst = CONF_ARG(l, 0, int *);
    int value = CONF_ARG(l, 1, int);
    int count = CONF_ARG(l, 2, int);
    for (int i = 0; i < count; i++)
        dst[i] = value;
    return CONF_ARG(l, 3, uint64_t);
}

/* conf_add(int *dst, int value): dst[0] += value (stream-ordered, not atomic). */
static inline uint64_t conf_kernel_add(hipsimLaunch *l)
{
    int *dst = CONF_ARG(l, 0, int *);
    dst[0] += CONF_ARG(l, 1, int);
    return 0;
}

/* conf_copy_add(int *dst, const int *src, int add): dst[0] = src[0] + add. */
static inline uint64_t conf_kernel_copy_add(hipsimLaunch *l)
{
    int *dst = CONF_ARG(l, 0, int *);
    const int *src = CONF_ARG(l, 1, const int *);
    dst[0] = src[0] + CONF_ARG(l, 2, int);
    return 0;
}

/* conf_mad(uint32_t *dst, uint32_t v, uint64_t ns): dst[0] = dst[0] * 3 + v, for ns; the result
 * depends on the order of every such kernel on dst (the fuzzer's and the chaos tests' models). */
static inline uint64_t conf_kernel_mad(hipsimLaunch *l)
{
    uint32_t *dst = CONF_ARG(l, 0, uint32_t *);
    dst[0] = dst[0] * 3u + CONF_ARG(l, 1, uint32_t);
    return CONF_ARG(l, 2, uint64_t);
}

/* conf_flag(atomic_int *flag, int value, uint64_t ns): *flag = value, visible to main at once. */
static inline uint64_t conf_kernel_flag(hipsimLaunch *l)
{
    atomic_store(CONF_ARG(l, 0, atomic_int *), CONF_ARG(l, 1, int));
    return CONF_ARG(l, 2, uint64_t);
}

/* conf_probe(atomic_int *src, atomic_int *dst): *dst = *src (what the kernel saw when it ran). */
static inline uint64_t conf_kernel_probe(hipsimLaunch *l)
{
    atomic_store(CONF_ARG(l, 1, atomic_int *), atomic_load(CONF_ARG(l, 0, atomic_int *)));
    return 0;
}

/* ---- held work: commands that run until the program lets them end ------------------------- *
 * A "not yet" check (a host function behind a kernel has not run, a stream is still busy) looks
 * while an earlier command still runs. Behind a kernel of fixed length it depends on the
 * program's own speed: descheduled for 40 ms in a loaded sanitizer run, a check saw a 60 ms
 * kernel end. A held kernel (or host function) runs until conf_release, so such checks cannot
 * race; conf_release_after lets a blocking call (a synchronize, hipFree) be what waits for it. A
 * hold never released ends after CONF_HOLD_MAX_MS with a FATAL line, so the output differs
 * instead of the program hanging. Relaunch a hold only after its work has finished. */

#define CONF_HOLD_MAX_MS 10000u

typedef struct conf_hold {
    atomic_int started;
    atomic_int released;
    atomic_int launches; /* a timer armed before the latest launch leaves it alone */
} conf_hold;

static inline uint64_t conf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Whether *v equals want within ms (looks every 0.1 ms). */
static inline int conf_await(atomic_int *v, int want, unsigned ms)
{
    uint64_t deadline = conf_now_ms() + ms;
    while (atomic_load(v) != want) {
        if (conf_now_ms() >= deadline)
            return 0;
        struct timespec ts = {0, 100000L};
        nanosleep(&ts, NULL);
    }
    return 1;
}

static inline void conf_hold_wait(conf_hold *h)
{
    atomic_store(&h->started, 1);
    if (!conf_await(&h->released, 1, CONF_HOLD_MAX_MS))
        printf("FATAL: held work not released within %u ms\n", CONF_HOLD_MAX_MS);
}

/* conf_hold(conf_hold *h): runs until h is released. */
static inline uint64_t conf_kernel_hold(hipsimLaunch *l)
{
    conf_hold_wait(CONF_ARG(l, 0, conf_hold *));
    return 0;
}

/* A host function that runs until h is released (hipLaunchHostFunc(s, conf_host_hold, h)). */
static inline void conf_host_hold(void *p)
{
    conf_hold_wait(p);
}

static inline void conf_release(conf_hold *h)
{
    atomic_store(&h->released, 1);
}

typedef struct conf_timer {
    conf_hold *hold;
    unsigned ms;
    int launches;
} conf_timer;

static inline void *conf_timer_main(void *p)
{
    conf_timer t = *(conf_timer *)p;
    free(p);
    conf_sleep_ms(t.ms);
    if (atomic_load(&t.hold->launches) == t.launches)
        conf_release(t.hold);
    return NULL;
}

/* Releases h ms from now, from a thread of its own. */
static inline void conf_release_after(conf_hold *h, unsigned ms)
{
    conf_timer *t = malloc(sizeof *t);
    pthread_t tid;
    pthread_attr_t attr;
    if (!t) {
        conf_release(h);
        return;
    }
    *t = (conf_timer){h, ms, atomic_load(&h->launches)};
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&tid, &attr, conf_timer_main, t) != 0) {
        free(t);
        conf_release(h);
    }
    pthread_attr_destroy(&attr);
}

typedef struct conf_kernels {
    const void *log, *sleep, *fill, *add, *copy_add, *flag, *probe, *mad, *hold;
} conf_kernels;

static conf_kernels conf_k;

static inline const void *conf_register(const char *name, hipsimKernelFn fn, int nargs,
                                        const size_t *sizes)
{
    const void *k = hipsimRegisterKernel(name, fn, nargs, sizes);
    if (!k) {
        printf("FATAL: hipsimRegisterKernel(%s) failed\n", name);
        fflush(stdout);
        exit(1);
    }
    return k;
}

/* Registers the common kernels; call first thing in main, before any thread starts. */
static inline void conf_init(void)
{
    static const size_t log_sz[] = {sizeof(conf_log *), sizeof(int), sizeof(uint64_t)};
    static const size_t sleep_sz[] = {sizeof(uint64_t)};
    static const size_t fill_sz[] = {sizeof(int *), sizeof(int), sizeof(int), sizeof(uint64_t)};
    static const size_t add_sz[] = {sizeof(int *), sizeof(int)};
    static const size_t copy_add_sz[] = {sizeof(int *), sizeof(const int *), sizeof(int)};
    static const size_t flag_sz[] = {sizeof(atomic_int *), sizeof(int), sizeof(uint64_t)};
    static const size_t probe_sz[] = {sizeof(atomic_int *), sizeof(atomic_int *)};
    static const size_t mad_sz[] = {sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint64_t)};
    static const size_t hold_sz[] = {sizeof(conf_hold *)};
    setvbuf(stdout, NULL, _IOLBF, 0);
    conf_k.log = conf_register("conf_log", conf_kernel_log, 3, log_sz);
    conf_k.sleep = conf_register("conf_sleep", conf_kernel_sleep, 1, sleep_sz);
    conf_k.fill = conf_register("conf_fill", conf_kernel_fill, 4, fill_sz);
    conf_k.add = conf_register("conf_add", conf_kernel_add, 2, add_sz);
    conf_k.copy_add = conf_register("conf_copy_add", conf_kernel_copy_add, 3, copy_add_sz);
    conf_k.flag = conf_register("conf_flag", conf_kernel_flag, 3, flag_sz);
    conf_k.probe = conf_register("conf_probe", conf_kernel_probe, 2, probe_sz);
    conf_k.mad = conf_register("conf_mad", conf_kernel_mad, 3, mad_sz);
    conf_k.hold = conf_register("conf_hold", conf_kernel_hold, 1, hold_sz);
}

static inline dim3 conf_dim(unsigned x)
{
    dim3 d = {x, 1, 1};
    return d;
}

/* Launches kernel k with one block of one thread through hipLaunchKernel. */
static inline hipError_t conf_launch(const void *k, hipStream_t s, void **args)
{
    return hipLaunchKernel(k, conf_dim(1), conf_dim(1), args, 0, s);
}

static inline hipError_t conf_launch_log(hipStream_t s, conf_log *log, int value, uint64_t ns)
{
    void *args[] = {&log, &value, &ns};
    return conf_launch(conf_k.log, s, args);
}

static inline hipError_t conf_launch_mad(hipStream_t s, uint32_t *dst, uint32_t v, uint64_t ns)
{
    void *args[] = {&dst, &v, &ns};
    return conf_launch(conf_k.mad, s, args);
}

static inline hipError_t conf_launch_sleep(hipStream_t s, uint64_t ns)
{
    void *args[] = {&ns};
    return conf_launch(conf_k.sleep, s, args);
}

static inline hipError_t conf_launch_fill(hipStream_t s, int *dst, int value, int count,
                                          uint64_t ns)
{
    void *args[] = {&dst, &value, &count, &ns};
    return conf_launch(conf_k.fill, s, args);
}

static inline hipError_t conf_launch_add(hipStream_t s, int *dst, int value)
{
    void *args[] = {&dst, &value};
    return conf_launch(conf_k.add, s, args);
}

static inline hipError_t conf_launch_copy_add(hipStream_t s, int *dst, const int *src, int add)
{
    void *args[] = {&dst, &src, &add};
    return conf_launch(conf_k.copy_add, s, args);
}

/* Launches a held kernel of `blocks` blocks on s (h fresh: not started, not released). */
static inline hipError_t conf_launch_hold_wide(hipStream_t s, conf_hold *h, unsigned blocks)
{
    atomic_fetch_add(&h->launches, 1);
    atomic_store(&h->started, 0);
    atomic_store(&h->released, 0);
    void *args[] = {&h};
    return hipLaunchKernel(conf_k.hold, conf_dim(blocks), conf_dim(1), args, 0, s);
}

static inline hipError_t conf_launch_hold(hipStream_t s, conf_hold *h)
{
    return conf_launch_hold_wide(s, h, 1);
}

static inline hipError_t conf_launch_flag(hipStream_t s, atomic_int *flag, int value, uint64_t ns)
{
    void *args[] = {&flag, &value, &ns};
    return conf_launch(conf_k.flag, s, args);
}

static inline hipError_t conf_launch_probe(hipStream_t s, atomic_int *src, atomic_int *dst)
{
    void *args[] = {&src, &dst};
    return conf_launch(conf_k.probe, s, args);
}

/* ---- host functions (hipLaunchHostFunc / hipStreamAddCallback user data) ------------------- */

/* Appends value to log. */
typedef struct conf_hlog {
    conf_log *log;
    int value;
} conf_hlog;

static inline void conf_host_log(void *p)
{
    conf_hlog *h = p;
    conf_log_add(h->log, h->value);
}

/* *flag = value. */
typedef struct conf_hset {
    atomic_int *flag;
    int value;
} conf_hset;

static inline void conf_host_set(void *p)
{
    conf_hset *h = p;
    atomic_store(h->flag, h->value);
}

/* *dst = *src: what the stream saw when it reached this point. */
typedef struct conf_hprobe {
    atomic_int *src;
    atomic_int *dst;
} conf_hprobe;

static inline void conf_host_probe(void *p)
{
    conf_hprobe *h = p;
    atomic_store(h->dst, atomic_load(h->src));
}

/* ---- device memory ------------------------------------------------------------------------- */

/* Reads one int of device memory (hipMemcpy: synchronous, legacy null stream). */
static inline int conf_read_int(const int *dev)
{
    int v = 0;
    MUST(hipMemcpy(&v, dev, sizeof v, hipMemcpyDeviceToHost));
    return v;
}

static inline void conf_write_int(int *dev, int v)
{
    MUST(hipMemcpy(dev, &v, sizeof v, hipMemcpyHostToDevice));
}

/* Ends the program: flushes what it printed and exits 0 (observations never change the status). */
static inline int conf_done(void)
{
    fflush(stdout);
    return 0;
}

#endif /* GPUPRIO_CONF_H */
