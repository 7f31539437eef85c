/*
 * fuzz_cuda.c - a random, deterministic CUDA driver program from a seed, for the differential
 * fuzzing of libgpuprio-cuda.so (tests/fuzz/fuzz.sh runs it without gpuprio, under gpuprio with
 * scheduling off and with scheduling at work; the three outputs must be the same), against the
 * fake driver (fake_cuda.c), so only what that driver does: it runs every command at once on the
 * calling thread, so this program checks what the shim adds to each call (its markers in the
 * stream's context, its per-thread and _ptsz paths, its admission) rather than ordering.
 *
 *   fuzz_cuda SEED [--skip I,J,...] [--list]
 *
 * The seed draws 1 to 3 threads, each on the primary context of one of the fake's two devices,
 * with the legacy null stream, the per-thread stream and 2 to 4 streams of its own (blocking or
 * not, with a priority or not), and 16 to 63 operations (FUZZ_CUDA_OPS below). Each stream owns a
 * few words of memory; each thread keeps a model of its words, prints the result of every call
 * it makes and, at the end, its words with "model ok" or "MODEL MISMATCH". Threads print after
 * all of them finished, in order. --list and --skip work as fuzz_prog's (tests/fuzz).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/fuzz_plan.h"
#include "cuda_compat.h"
#include "gpuprio.h"

#define MAX_THREADS 3
#define MAX_STREAMS 6 /* 0: the legacy null stream, 1: the per-thread stream, 2..: created */
#define WORDS 4
#define MAX_OPS 64

/* FUZZ_CUDA_OP(NAME, WEIGHT, "text"): the kinds of operation, how often (of the sum), and what
 * --list calls them. */
#define FUZZ_CUDA_OPS(X)                                                                           \
    X(KERNEL, 10, "kernel")                                                                        \
    X(KERNEL_PTSZ, 3, "kernel through cuGetProcAddress, per-thread default stream")                \
    X(UPLOAD, 4, "copy host to device async")                                                      \
    X(EVENT, 4, "event recorded, queried, synchronized")                                           \
    X(FOREIGN_EVENT, 1, "event of another context recorded")                                       \
    X(NO_CONTEXT, 1, "launch without a current context")                                           \
    X(BAD_ARGS, 1, "launch and copy with bad arguments")                                           \
    X(SYNC, 3, "synchronize")                                                                      \
    X(READ, 3, "read back")                                                                        \
    X(PRIORITY, 2, "change priority")                                                              \
    X(QUERY, 1, "stream flags and context")

enum op_kind {
#define AS_ENUM(name, weight, text) OP_##name,
    FUZZ_CUDA_OPS(AS_ENUM)
#undef AS_ENUM
        OP_COUNT
};

#define AS_TEXT(name, weight, text) text,
static const char *const kind_texts[OP_COUNT] = {FUZZ_CUDA_OPS(AS_TEXT)};
#undef AS_TEXT
/* How often each kind is drawn (fuzz_weighted). */
#define AS_WEIGHT(name, weight, text) weight,
static const unsigned kind_weights[OP_COUNT] = {FUZZ_CUDA_OPS(AS_WEIGHT)};
#undef AS_WEIGHT

enum stream_kind { CREATE, CREATE_NONBLOCKING, WITH_PRIORITY, NKINDS };
static const char *const stream_kind_names[NKINDS] = {
    "cuStreamCreate", "cuStreamCreate(NON_BLOCKING)", "cuStreamCreateWithPriority"};

struct op {
    int thread;
    enum op_kind kind;
    int stream, word, count;
    uint32_t value;
};

struct thread_plan {
    int device, streams;
    enum stream_kind kind[MAX_STREAMS];
    int priority_pick[MAX_STREAMS];
};

static struct op ops[MAX_OPS];
static bool skipped[MAX_OPS]; /* --skip */
static int nops;
static struct thread_plan plans[MAX_THREADS];
static int nthreads;

/* ---- the program from the seed ---- */

static void plan(uint64_t seed)
{
    fuzz_rng_state = seed;
    nthreads = 1 + fuzz_below(MAX_THREADS);
    for (int t = 0; t < nthreads; t++) {
        struct thread_plan *p = &plans[t];
        p->device = fuzz_below(2);
        p->streams = 2 + 2 + fuzz_below(MAX_STREAMS - 3);
        for (int s = 2; s < p->streams; s++) {
            p->kind[s] = (enum stream_kind)fuzz_below(NKINDS);
            p->priority_pick[s] = fuzz_below(3);
        }
    }
    nops = 16 + fuzz_below(MAX_OPS - 16);
    for (int i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        o->thread = fuzz_below(nthreads);
        o->kind = (enum op_kind)fuzz_weighted(kind_weights, OP_COUNT);
        o->stream = fuzz_below(plans[o->thread].streams);
        o->word = fuzz_below(WORDS);
        o->count = 1 + fuzz_below(WORDS - o->word);
        o->value = (uint32_t)fuzz_random();
    }
}

static void describe(FILE *f, int i)
{
    const struct op *o = &ops[i];
    fprintf(f, "%d: thread %d %s, stream %d word %d count %d value %u\n", i, o->thread,
            kind_texts[o->kind], o->stream, o->word, o->count, o->value);
}

/* ---- running it ---- */

static void mad(void **params) /* the kernel: *w = *w * 3 + v */
{
    uint32_t *w = *(uint32_t **)params[0];
    *w = *w * 3u + *(uint32_t *)params[1];
}

static int (*set_stream_priority)(CUstream, int);
static const int gpuprio_priorities[] = {GPUPRIO_PRIORITY_HIGH, GPUPRIO_PRIORITY_LOW,
                                         GPUPRIO_PRIORITY_NORMAL};

struct thread_run {
    int t;
    CUcontext ctx, other; /* its device's primary context, and the other device's */
    CUstream streams[MAX_STREAMS];
    uint32_t words[MAX_STREAMS][WORDS], model[MAX_STREAMS][WORDS];
    char *out;
    size_t out_size;
    FILE *f;
};

static void show(struct thread_run *r, int i, const char *what, CUresult rc)
{
    fprintf(r->f, "%d %s -> %d\n", i, what, (int)rc);
}

/* Launches mad on the op's stream through fn; per_thread: fn is a per-thread entry (_ptsz), for
 * which the null stream is the per-thread stream. */
static void launch(struct thread_run *r, int i, const struct op *o, const char *how,
                   __typeof__(&cuLaunchKernel) fn, bool per_thread)
{
    int modelled = per_thread && o->stream == 0 ? 1 : o->stream;
    uint32_t *w = &r->words[modelled][o->word];
    uint32_t v = o->value;
    void *params[] = {&w, &v};
    CUresult rc =
        fn((CUfunction)(void *)mad, 1, 1, 1, 1, 1, 1, 0, r->streams[o->stream], params, NULL);
    show(r, i, how, rc);
    if (rc == CUDA_SUCCESS)
        r->model[modelled][o->word] = r->model[modelled][o->word] * 3u + v;
}

static void run_op(struct thread_run *r, int i)
{
    const struct op *o = &ops[i];
    CUstream s = r->streams[o->stream];
    CUresult rc;
    switch (o->kind) {
    case OP_KERNEL:
        launch(r, i, o, "cuLaunchKernel", cuLaunchKernel, false);
        break;
    case OP_KERNEL_PTSZ: {
        void *fn = NULL;
        CUdriverProcAddressQueryResult status;
        rc = cuGetProcAddress_v2("cuLaunchKernel", &fn, 12000,
                                 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status);
        show(r, i, "cuGetProcAddress_v2(cuLaunchKernel, per-thread)", rc);
        if (rc == CUDA_SUCCESS && fn)
            launch(r, i, o, "launch through it", (__typeof__(&cuLaunchKernel))fn, true);
        break;
    }
    case OP_UPLOAD: {
        uint32_t src[WORDS];
        for (int k = 0; k < o->count; k++)
            src[k] = o->value + (uint32_t)k;
        rc = cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)&r->words[o->stream][o->word], src,
                                  o->count * sizeof *src, s);
        show(r, i, "cuMemcpyHtoDAsync", rc);
        if (rc == CUDA_SUCCESS) /* the fake copies at once: src may go out of scope */
            memcpy(&r->model[o->stream][o->word], src, o->count * sizeof *src);
        break;
    }
    case OP_EVENT: {
        CUevent e;
        rc = cuEventCreate(&e, o->value % 2 ? CU_EVENT_DISABLE_TIMING : CU_EVENT_DEFAULT);
        show(r, i, "cuEventCreate", rc);
        if (rc != CUDA_SUCCESS)
            break;
        show(r, i, "cuEventQuery before record", cuEventQuery(e));
        show(r, i, "cuEventRecord", cuEventRecord(e, s));
        show(r, i, "cuEventQuery", cuEventQuery(e));
        show(r, i, "cuEventSynchronize", cuEventSynchronize(e));
        show(r, i, "cuEventDestroy", cuEventDestroy_v2(e));
        break;
    }
    case OP_FOREIGN_EVENT: {
        CUevent e;
        CUcontext popped;
        show(r, i, "cuCtxPushCurrent(other device)", cuCtxPushCurrent_v2(r->other));
        rc = cuEventCreate(&e, CU_EVENT_DEFAULT);
        show(r, i, "cuEventCreate", rc);
        show(r, i, "cuCtxPopCurrent", cuCtxPopCurrent_v2(&popped));
        if (rc != CUDA_SUCCESS)
            break;
        /* Created in the other device's context: recording it on this one's stream is refused. */
        show(r, i, "cuEventRecord(on this context's stream)", cuEventRecord(e, s));
        show(r, i, "cuEventDestroy", cuEventDestroy_v2(e));
        break;
    }
    case OP_NO_CONTEXT: {
        CUcontext popped = NULL;
        show(r, i, "cuCtxPopCurrent", cuCtxPopCurrent_v2(&popped));
        fprintf(r->f, "%d popped its context: %s\n", i, popped == r->ctx ? "yes" : "no");
        launch(r, i, o, "cuLaunchKernel without a context", cuLaunchKernel, false);
        show(r, i, "cuCtxPushCurrent", cuCtxPushCurrent_v2(popped));
        break;
    }
    case OP_BAD_ARGS: {
        uint32_t *w = &r->words[o->stream][o->word], v = o->value;
        void *params[] = {&w, &v};
        show(r, i, "cuLaunchKernel(grid 0)",
             cuLaunchKernel((CUfunction)(void *)mad, 0, 1, 1, 1, 1, 1, 0, s, params, NULL));
        show(r, i, "cuLaunchKernel(no function)",
             cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
        show(r, i, "cuMemcpyHtoDAsync(no source)",
             cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)w, NULL, 4, s));
        break;
    }
    case OP_SYNC:
        if (o->value % 2)
            show(r, i, "cuStreamSynchronize", cuStreamSynchronize(s));
        else
            show(r, i, "cuCtxSynchronize", cuCtxSynchronize());
        break;
    case OP_READ:
        show(r, i, "cuStreamSynchronize", cuStreamSynchronize(s));
        fprintf(r->f, "%d words of stream %d:", i, o->stream);
        for (int k = 0; k < WORDS; k++)
            fprintf(r->f, " %u", r->words[o->stream][k]);
        fprintf(r->f, "\n");
        break;
    case OP_PRIORITY:
        if (set_stream_priority && o->stream >= 2)
            set_stream_priority(s, gpuprio_priorities[o->value % 3]);
        break;
    case OP_QUERY: {
        unsigned flags = 0;
        CUcontext ctx = NULL;
        if (o->stream >= 2) { /* the special handles' flags and context are the driver's choice */
            show(r, i, "cuStreamGetFlags", cuStreamGetFlags(s, &flags));
            show(r, i, "cuStreamGetCtx", cuStreamGetCtx(s, &ctx));
            fprintf(r->f, "%d flags %u, own context: %s\n", i, flags, ctx == r->ctx ? "yes" : "no");
        }
        break;
    }
    case OP_COUNT:
        break;
    }
}

static void *run_thread(void *arg)
{
    struct thread_run *r = arg;
    const struct thread_plan *p = &plans[r->t];
    r->f = open_memstream(&r->out, &r->out_size);
    CUdevice dev, other;
    if (!r->f || cuDeviceGet(&dev, p->device) || cuDeviceGet(&other, 1 - p->device) ||
        cuDevicePrimaryCtxRetain(&r->ctx, dev) || cuDevicePrimaryCtxRetain(&r->other, other) ||
        cuCtxSetCurrent(r->ctx)) {
        printf("FATAL: thread %d could not set up its context\n", r->t);
        exit(1);
    }
    int least, greatest;
    show(r, -1, "cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange(&least, &greatest));
    r->streams[0] = NULL;
    r->streams[1] = CU_STREAM_PER_THREAD;
    for (int s = 2; s < p->streams; s++) {
        int picks[] = {greatest, least, (least + greatest) / 2};
        CUresult rc = p->kind[s] == WITH_PRIORITY
                          ? cuStreamCreateWithPriority(&r->streams[s], CU_STREAM_NON_BLOCKING,
                                                       picks[p->priority_pick[s]])
                          : cuStreamCreate(&r->streams[s], p->kind[s] == CREATE_NONBLOCKING
                                                               ? CU_STREAM_NON_BLOCKING
                                                               : CU_STREAM_DEFAULT);
        show(r, -1, stream_kind_names[p->kind[s]], rc);
        if (rc != CUDA_SUCCESS) {
            printf("FATAL: thread %d could not create its streams\n", r->t);
            exit(1);
        }
    }
    for (int i = 0; i < nops; i++)
        if (ops[i].thread == r->t && !skipped[i])
            run_op(r, i);
    show(r, -1, "cuCtxSynchronize", cuCtxSynchronize());
    for (int s = 2; s < p->streams; s++)
        show(r, -1, "cuStreamDestroy", cuStreamDestroy_v2(r->streams[s]));
    bool ok = memcmp(r->words, r->model, sizeof r->words) == 0;
    fprintf(r->f, "words:");
    for (int s = 0; s < p->streams; s++)
        for (int k = 0; k < WORDS; k++)
            fprintf(r->f, " %u", r->words[s][k]);
    fprintf(r->f, "\n%s\n", ok ? "model ok" : "MODEL MISMATCH");
    fclose(r->f);
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t seed;
    bool list;
    if (fuzz_seed("fuzz_cuda", argc, argv, &seed))
        return 2;
    plan(seed);
    if (fuzz_options("fuzz_cuda", argc, argv, nops, skipped, &list))
        return 2;
    if (list) {
        for (int t = 0; t < nthreads; t++) {
            printf("thread %d: device %d", t, plans[t].device);
            for (int s = 2; s < plans[t].streams; s++)
                printf(", stream %d %s", s, stream_kind_names[plans[t].kind[s]]);
            printf("\n");
        }
        for (int i = 0; i < nops; i++)
            if (!skipped[i])
                describe(stdout, i);
        return 0;
    }
    *(void **)&set_stream_priority = dlsym(RTLD_DEFAULT, "gpuprio_stream_set_priority");
    if (cuInit(0) != CUDA_SUCCESS) {
        printf("FATAL: cuInit failed\n");
        return 1;
    }
    static struct thread_run runs[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    for (int t = 0; t < nthreads; t++) {
        runs[t].t = t;
        pthread_create(&th[t], NULL, run_thread, &runs[t]);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < nthreads; t++) {
        printf("--- thread %d\n%s", t, runs[t].out);
        free(runs[t].out);
    }
    return 0;
}
