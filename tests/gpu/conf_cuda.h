/*
 * conf_cuda.h - shared helpers of the CUDA ports of tests/conformance (tests/gpu/*.cu).
 *
 * Like the HIP programs, each prints only what an application observes (values, error names,
 * event and stream states, orders the API defines), deterministically, so that run.sh can
 * compare a run without gpuprio with a run under LD_PRELOAD=libgpuprio-cuda.so byte for byte.
 * Kernels here really run on the GPU: "sleep" kernels spin on the global timer, and everything a
 * kernel shares with the host lives in mapped pinned memory, written by one command at a time.
 */
#ifndef GPUPRIO_CONF_CUDA_H
#define GPUPRIO_CONF_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONF_MS ((uint64_t)1000000) /* one millisecond, in ns */

static int conf_failures;

static inline const char *conf_yes(int cond)
{
    return cond ? "yes" : "no";
}

static inline cudaError_t conf_show(const char *label, cudaError_t e)
{
    printf("%s -> %s\n", label, cudaGetErrorName(e));
    return e;
}
#define SHOW(label, expr) conf_show((label), (expr))

/* A call the program's structure depends on: on failure, say so on stdout and exit 1. */
static inline void conf_must(const char *what, cudaError_t e)
{
    if (e != cudaSuccess) {
        printf("FATAL: %s -> %s\n", what, cudaGetErrorName(e));
        fflush(stdout);
        exit(1);
    }
}
#define MUST(expr) conf_must(#expr, (expr))

static inline void conf_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Host memory the device reads and writes too (zero-copy). */
template <typename T> static inline T *conf_mapped(size_t n)
{
    T *p = NULL;
    MUST(cudaHostAlloc((void **)&p, n * sizeof(T), cudaHostAllocMapped));
    memset((void *)p, 0, n * sizeof(T));
    return p;
}
template <typename T> static inline T *conf_dev(T *host)
{
    void *d = NULL;
    MUST(cudaHostGetDevicePointer(&d, (void *)host, 0));
    return (T *)d;
}

__device__ static inline uint64_t conf_now(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ static void k_sleep(uint64_t ns)
{
    uint64_t start = conf_now();
    while (conf_now() - start < ns)
        __nanosleep(1000);
}

__global__ static void k_fill(int *dst, int value, int count, uint64_t ns)
{
    uint64_t start = conf_now();
    while (conf_now() - start < ns)
        __nanosleep(1000);
    for (int i = 0; i < count; i++)
        dst[i] = value;
}

__global__ static void k_add(int *dst, int value)
{
    *dst += value;
}

__global__ static void k_copy_add(int *dst, const int *src, int add)
{
    *dst = *src + add;
}

/* A per-stream log in mapped memory: n, then the values, appended by one command at a time. */
struct conf_log {
    volatile int n;
    volatile int v[256];
};

__global__ static void k_log(conf_log *log, int value, uint64_t ns)
{
    uint64_t start = conf_now();
    while (conf_now() - start < ns)
        __nanosleep(1000);
    int n = log->n;
    if (n < 256)
        log->v[n] = value;
    __threadfence_system();
    log->n = n + 1;
    __threadfence_system();
}

struct conf_hlog {
    conf_log *log;
    int value;
};

static void CUDART_CB conf_host_log(void *p)
{
    conf_hlog *h = (conf_hlog *)p;
    int n = h->log->n;
    if (n < 256)
        h->log->v[n] = h->value;
    h->log->n = n + 1;
}

static inline void conf_log_print(const char *label, conf_log *log)
{
    printf("%s:", label);
    for (int i = 0; i < log->n && i < 256; i++)
        printf(" %d", log->v[i]);
    printf("\n");
}

/* Host functions that set a flag, or record whether it was set. */
struct conf_hset {
    volatile int *flag;
    int value;
};
static void CUDART_CB conf_host_set(void *p)
{
    conf_hset *h = (conf_hset *)p;
    *h->flag = h->value;
}
struct conf_hprobe {
    volatile int *flag;
    volatile int *seen;
};
static void CUDART_CB conf_host_probe(void *p)
{
    conf_hprobe *h = (conf_hprobe *)p;
    *h->seen = *h->flag;
}
__global__ static void k_probe(volatile int *flag, volatile int *seen)
{
    *seen = *flag;
    __threadfence_system();
}

static inline int conf_done(void)
{
    cudaError_t e = cudaDeviceSynchronize();
    printf("exit=%d\n", e == cudaSuccess && !conf_failures ? 0 : 1);
    return e == cudaSuccess && !conf_failures ? 0 : 1;
}

#endif /* GPUPRIO_CONF_CUDA_H */
