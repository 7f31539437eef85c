/*
 * fuzz_prog.c - a random, deterministic HIP program from a seed, for differential fuzzing
 * (fuzz.sh runs it without gpuprio, under gpuprio with scheduling off and with scheduling at
 * work, and the three outputs must be the same).
 *
 *   fuzz_prog SEED [--skip I,J,...] [--list]
 *
 * The seed draws 1 to 3 threads, each with the null stream, its per-thread stream and 2 to 4
 * streams of its own (blocking or not, with a priority or not), then a list of operations, each
 * for one thread (operations.def lists the kinds). Threads run their operations in list order, on
 * their own streams and memory, so what each can observe is defined by the API whatever the other
 * threads do: each stream owns a few words of device memory; data moves between a thread's streams
 * only behind events in both directions; host reads come after the stream is synchronized; host
 * functions log in stream order. Each thread keeps a model of its words and, at the end, prints
 * them with "model ok" or "MODEL MISMATCH". Everything a thread prints is printed after every
 * thread finished, thread by thread, so the output is one text whatever the timing.
 *
 * --list prints the operations (what fuzz.sh shows as the reduced program) instead of running
 * them; --skip leaves the given operation indices out (fuzz.sh reduces a failing program by
 * skipping what is not needed to show the failure). Each operation stands alone: a skipped one
 * leaves nothing half done for the others (a wait always comes with its write, a capture with its
 * end).
 *
 * gpuprio's API is used where it is loaded (found with dlsym), to change priorities while work
 * runs: without gpuprio those operations do nothing, and print nothing in any case.
 */
#include "../conformance/conf.h"

#include <dlfcn.h>
#include <stdbool.h>

#include "fuzz_plan.h"

#define MAX_THREADS 3
#define MAX_STREAMS 6 /* 0: null, 1: per-thread, 2..: created */
#define WORDS 4       /* device words each stream owns */
#define MAX_OPS 96

enum op_kind {
#define FUZZ_OP(name, weight, text) OP_##name,
#include "operations.def"
#undef FUZZ_OP
    OP_COUNT
};

static const char *const kind_names[OP_COUNT] = {
#define FUZZ_OP(name, weight, text) text,
#include "operations.def"
#undef FUZZ_OP
};
/* How often each kind is drawn (fuzz_weighted). */
static const unsigned kind_weights[OP_COUNT] = {
#define FUZZ_OP(name, weight, text) weight,
#include "operations.def"
#undef FUZZ_OP
};

/* How a created stream is made. */
enum stream_kind { CREATE, CREATE_NONBLOCKING, WITH_PRIORITY, WITH_PRIORITY_NONBLOCKING, NKINDS };
static const char *const stream_kind_names[NKINDS] = {
    "hipStreamCreate", "hipStreamCreateWithFlags(NonBlocking)", "hipStreamCreateWithPriority",
    "hipStreamCreateWithPriority(NonBlocking)"};

struct op {
    int thread;
    enum op_kind kind;
    int stream, other; /* streams of the thread */
    int word, count;   /* words of the stream's */
    uint32_t value;    /* what it writes, adds, or which sub-case */
    uint64_t ns;       /* a kernel's simulated duration */
    int reps;          /* graph launches, kernels in a capture */
};

struct thread_plan {
    int streams; /* 2 + created */
    enum stream_kind kind[MAX_STREAMS];
    int priority_pick[MAX_STREAMS]; /* 0 greatest, 1 least, 2 middle */
};

static struct op ops[MAX_OPS];
static bool skipped[MAX_OPS]; /* --skip */
static int nops;
static struct thread_plan plans[MAX_THREADS];
static int nthreads;

/* ---- the program from the seed ------------------------------------------------------------- */

static bool blocking(const struct thread_plan *p, int s)
{
    return s < 2 || p->kind[s] == CREATE || p->kind[s] == WITH_PRIORITY;
}

/* A created non-blocking stream of the thread's, or -1. */
static int nonblocking_stream(const struct thread_plan *p)
{
    int found[MAX_STREAMS], n = 0;
    for (int s = 2; s < p->streams; s++)
        if (!blocking(p, s))
            found[n++] = s;
    return n ? found[fuzz_below(n)] : -1;
}

static void generate(uint64_t seed)
{
    fuzz_rng_state = seed;
    nthreads = 1 + fuzz_below(MAX_THREADS);
    for (int t = 0; t < nthreads; t++) {
        struct thread_plan *p = &plans[t];
        p->streams = 2 + 2 + fuzz_below(MAX_STREAMS - 3);
        for (int s = 2; s < p->streams; s++) {
            p->kind[s] = (enum stream_kind)fuzz_below(NKINDS);
            p->priority_pick[s] = fuzz_below(3);
        }
    }
    nops = 24 + fuzz_below(MAX_OPS - 24);
    for (int i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        o->thread = fuzz_below(nthreads);
        const struct thread_plan *p = &plans[o->thread];
        o->kind = (enum op_kind)fuzz_weighted(kind_weights, OP_COUNT);
        o->stream = fuzz_below(p->streams);
        o->other = (o->stream + 1 + fuzz_below(p->streams - 1)) % p->streams;
        o->word = fuzz_below(WORDS);
        o->count = 1 + fuzz_below(WORDS - o->word);
        o->value = (uint32_t)fuzz_random();
        o->ns = (uint64_t)fuzz_below(5) * 20000; /* 0 to 80 us */
        o->reps = 1 + fuzz_below(3);
        if (o->kind == OP_CAPTURE && (o->stream = nonblocking_stream(p)) < 0)
            o->kind = OP_KERNEL, o->stream = fuzz_below(p->streams);
    }
}

/* "I,J,K": marks those operations skipped. False on a bad list. */
static void describe(FILE *f, int i)
{
    const struct op *o = &ops[i];
    fprintf(f, "%d: thread %d %s stream %d", i, o->thread, kind_names[o->kind], o->stream);
    switch (o->kind) {
    case OP_COPY:
    case OP_WAIT_VALUE:
        fprintf(f, " from stream %d", o->other);
        break;
    case OP_CAPTURE:
        fprintf(f, ", %d kernels, %d launches", o->reps, o->reps);
        break;
    default:
        break;
    }
    fprintf(f, " words %d..%d value %#x ns %llu\n", o->word, o->word + o->count - 1, o->value,
            (unsigned long long)o->ns);
}

static void list_program(uint64_t seed)
{
    printf("seed %llu: %d threads\n", (unsigned long long)seed, nthreads);
    for (int t = 0; t < nthreads; t++) {
        printf("thread %d: stream 0 null, stream 1 per-thread", t);
        for (int s = 2; s < plans[t].streams; s++)
            printf(", stream %d %s", s, stream_kind_names[plans[t].kind[s]]);
        printf("\n");
    }
    for (int i = 0; i < nops; i++)
        if (!skipped[i])
            describe(stdout, i);
}

/* ---- running it ---------------------------------------------------------------------------- */

static int (*set_thread_priority)(int);
static int (*set_stream_priority)(hipStream_t, int);

/* Host memory per operation, so that no operation's buffer is reused while a copy may use it. */
static uint32_t *pinned; /* [MAX_OPS][WORDS] */
static uint32_t pageable[MAX_OPS][WORDS];
static uint32_t *flags; /* [MAX_OPS], hipHostMalloc'ed, for wait/write value */
static conf_log host_logs[MAX_THREADS][MAX_STREAMS];
static conf_hlog host_calls[MAX_OPS];

struct thread_run {
    int t;
    hipStream_t streams[MAX_STREAMS];
    uint32_t *dev; /* [MAX_STREAMS][WORDS] */
    uint32_t model[MAX_STREAMS][WORDS];
    char *out;
    size_t out_size;
    FILE *f;
};

static uint32_t *words_of(struct thread_run *r, int s)
{
    return r->dev + s * WORDS;
}

#define SAY(r, ...) fprintf((r)->f, __VA_ARGS__)
#define SHOW_IN(r, i, what, expr) SAY(r, "%d: %s -> %s\n", i, what, conf_err(expr))

/* Prints the stream's words as the host reads them after synchronizing, against the model. */
static void read_back(struct thread_run *r, int i, int s, int how)
{
    uint32_t got[WORDS] = {0};
    uint32_t *dst = how == 0 ? got : how == 1 ? pinned + i * WORDS : pageable[i];
    SHOW_IN(r, i, "hipStreamSynchronize", hipStreamSynchronize(r->streams[s]));
    if (how == 0)
        SHOW_IN(r, i, "hipMemcpy D2H",
                hipMemcpy(dst, words_of(r, s), sizeof got, hipMemcpyDeviceToHost));
    else {
        SHOW_IN(
            r, i, how == 1 ? "hipMemcpyAsync D2H pinned" : "hipMemcpyAsync D2H pageable",
            hipMemcpyAsync(dst, words_of(r, s), sizeof got, hipMemcpyDeviceToHost, r->streams[s]));
        SHOW_IN(r, i, "hipStreamSynchronize", hipStreamSynchronize(r->streams[s]));
    }
    bool same = memcmp(dst, r->model[s], sizeof got) == 0;
    SAY(r, "%d: stream %d words %08x %08x %08x %08x: %s\n", i, s, dst[0], dst[1], dst[2], dst[3],
        same ? "model ok" : "MODEL MISMATCH");
}

static void run_op(struct thread_run *r, int i)
{
    const struct op *o = &ops[i];
    hipStream_t s = r->streams[o->stream], other = r->streams[o->other];
    uint32_t *w = words_of(r, o->stream) + o->word;
    uint32_t *m = r->model[o->stream] + o->word;
    size_t bytes = (size_t)o->count * sizeof(uint32_t);
    switch (o->kind) {
    case OP_KERNEL:
        SHOW_IN(r, i, "hipLaunchKernel", conf_launch_mad(s, w, o->value, o->ns));
        m[0] = m[0] * 3u + o->value;
        break;
    case OP_MEMSET: {
        unsigned char byte = (unsigned char)o->value;
        SHOW_IN(r, i, "hipMemsetAsync", hipMemsetAsync(w, byte, bytes, s));
        for (int k = 0; k < o->count; k++)
            m[k] = byte * 0x01010101u;
        break;
    }
    case OP_MEMSET_SYNC: {
        /* Ordered with the legacy null stream only: synchronize a non-blocking stream first. */
        unsigned char byte = (unsigned char)o->value;
        SHOW_IN(r, i, "hipStreamSynchronize", hipStreamSynchronize(s));
        SHOW_IN(r, i, "hipMemset", hipMemset(w, byte, bytes));
        for (int k = 0; k < o->count; k++)
            m[k] = byte * 0x01010101u;
        break;
    }
    case OP_UPLOAD: {
        bool pin = o->value & 1;
        uint32_t *src = pin ? pinned + i * WORDS : pageable[i];
        for (int k = 0; k < o->count; k++)
            src[k] = m[k] = o->value + (uint32_t)k;
        SHOW_IN(r, i, pin ? "hipMemcpyAsync H2D pinned" : "hipMemcpyAsync H2D pageable",
                hipMemcpyAsync(w, src, bytes, hipMemcpyHostToDevice, s));
        /* The source is this operation's own and is never written again. */
        break;
    }
    case OP_READ:
        read_back(r, i, o->stream, (int)(o->value % 3));
        break;
    case OP_COPY: {
        /* other's words into this stream's, behind an event each way. */
        hipEvent_t there, here;
        MUST(hipEventCreateWithFlags(&there, hipEventDisableTiming));
        MUST(hipEventCreateWithFlags(&here, hipEventDisableTiming));
        const uint32_t *src = words_of(r, o->other) + o->word;
        SHOW_IN(r, i, "hipEventRecord(other)", hipEventRecord(there, other));
        SHOW_IN(r, i, "hipStreamWaitEvent", hipStreamWaitEvent(s, there, 0));
        SHOW_IN(r, i, "hipMemcpyAsync D2D",
                hipMemcpyAsync(w, src, bytes, hipMemcpyDeviceToDevice, s));
        SHOW_IN(r, i, "hipEventRecord(this)", hipEventRecord(here, s));
        SHOW_IN(r, i, "hipStreamWaitEvent(other)", hipStreamWaitEvent(other, here, 0));
        MUST(hipEventDestroy(there));
        MUST(hipEventDestroy(here));
        memcpy(m, r->model[o->other] + o->word, bytes);
        break;
    }
    case OP_HOST_FUNC:
        host_calls[i] = (conf_hlog){&host_logs[r->t][o->stream], i};
        SHOW_IN(r, i, "hipLaunchHostFunc", hipLaunchHostFunc(s, conf_host_log, &host_calls[i]));
        break;
    case OP_TIMING: {
        hipEvent_t a, b;
        float ms = -1;
        MUST(hipEventCreate(&a));
        MUST(hipEventCreate(&b));
        SHOW_IN(r, i, "hipEventRecord(a)", hipEventRecord(a, s));
        SHOW_IN(r, i, "hipLaunchKernel", conf_launch_mad(s, w, o->value, o->ns));
        SHOW_IN(r, i, "hipEventRecord(b)", hipEventRecord(b, s));
        SHOW_IN(r, i, "hipEventSynchronize(b)", hipEventSynchronize(b));
        SHOW_IN(r, i, "hipEventQuery(a)", hipEventQuery(a));
        SHOW_IN(r, i, "hipEventElapsedTime", hipEventElapsedTime(&ms, a, b));
        SAY(r, "%d: elapsed covers the kernel: %s\n", i,
            conf_yes((double)ms * 1e6 >= (double)o->ns * 0.999));
        MUST(hipEventDestroy(a));
        MUST(hipEventDestroy(b));
        m[0] = m[0] * 3u + o->value;
        break;
    }
    case OP_UNRECORDED: {
        hipEvent_t e;
        float ms = -1;
        MUST(hipEventCreate(&e));
        SHOW_IN(r, i, "hipEventQuery(never recorded)", hipEventQuery(e));
        SHOW_IN(r, i, "hipEventElapsedTime(never recorded)", hipEventElapsedTime(&ms, e, e));
        SHOW_IN(r, i, "hipStreamWaitEvent(never recorded)", hipStreamWaitEvent(s, e, 0));
        SHOW_IN(r, i, "hipEventSynchronize(never recorded)", hipEventSynchronize(e));
        MUST(hipEventDestroy(e));
        break;
    }
    case OP_WAIT_VALUE:
        /* other writes this operation's flag; this stream waits for it, then runs a kernel. */
        SHOW_IN(r, i, "hipStreamWriteValue32(other)",
                hipStreamWriteValue32(other, &flags[i], 1, 0));
        SHOW_IN(r, i, "hipStreamWaitValue32",
                hipStreamWaitValue32(s, &flags[i], 1, hipStreamWaitValueGte, 0xffffffffu));
        SHOW_IN(r, i, "hipLaunchKernel", conf_launch_mad(s, w, o->value, o->ns));
        m[0] = m[0] * 3u + o->value;
        break;
    case OP_CAPTURE: {
        hipGraph_t g = NULL;
        hipGraphExec_t ge = NULL;
        SHOW_IN(r, i, "hipStreamBeginCapture(ThreadLocal)",
                hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
        for (int k = 0; k < o->reps; k++)
            SHOW_IN(r, i, "hipLaunchKernel(captured)", conf_launch_mad(s, w, o->value + k, o->ns));
        SHOW_IN(r, i, "hipStreamEndCapture", hipStreamEndCapture(s, &g));
        SHOW_IN(r, i, "hipGraphInstantiate", hipGraphInstantiate(&ge, g, NULL, NULL, 0));
        for (int n = 0; n < o->reps; n++) {
            SHOW_IN(r, i, "hipGraphLaunch", hipGraphLaunch(ge, s));
            for (int k = 0; k < o->reps; k++)
                m[0] = m[0] * 3u + o->value + (uint32_t)k;
        }
        SHOW_IN(r, i, "hipGraphExecDestroy", hipGraphExecDestroy(ge));
        SHOW_IN(r, i, "hipGraphDestroy", hipGraphDestroy(g));
        break;
    }
    case OP_FREE: {
        void *p = NULL;
        SHOW_IN(r, i, "hipMalloc", hipMalloc(&p, 256));
        SHOW_IN(r, i, "hipMemsetAsync(temporary)", hipMemsetAsync(p, 0, 256, s));
        SHOW_IN(r, i, "hipFree", hipFree(p));
        break;
    }
    case OP_ERROR: {
        uint32_t host = 0;
        switch (o->value % 4) {
        case 0:
            SHOW_IN(r, i, "hipEventQuery(NULL)", hipEventQuery(NULL));
            break;
        case 1:
            SHOW_IN(r, i, "hipMemcpy(bad kind)",
                    hipMemcpy(&host, words_of(r, o->stream), sizeof host, (hipMemcpyKind)77));
            break;
        case 2:
            SHOW_IN(r, i, "hipStreamGetPriority(NULL)", hipStreamGetPriority(s, NULL));
            break;
        default:
            SHOW_IN(r, i, "hipSetDevice(99)", hipSetDevice(99));
            break;
        }
        SHOW_IN(r, i, "hipPeekAtLastError", hipPeekAtLastError());
        SHOW_IN(r, i, "hipGetLastError", hipGetLastError());
        SHOW_IN(r, i, "hipGetLastError", hipGetLastError());
        break;
    }
    case OP_PRIORITY: {
        int p = (int)(o->value % 41) - 20; /* gpuprio's scale: -20..20 */
        if (o->value & 0x100 && set_stream_priority && o->stream >= 2)
            set_stream_priority(s, p);
        else if (set_thread_priority)
            set_thread_priority(p);
        break;
    }
    case OP_SYNC:
        if (o->value & 1) {
            SHOW_IN(r, i, "hipDeviceSynchronize", hipDeviceSynchronize());
        } else {
            SHOW_IN(r, i, "hipStreamSynchronize", hipStreamSynchronize(s));
            /* The legacy null stream is the device's: other threads may have put work on it. */
            if (o->stream != 0)
                SHOW_IN(r, i, "hipStreamQuery", hipStreamQuery(s));
        }
        break;
    case OP_COUNT:
        break;
    }
}

static void *thread_main(void *arg)
{
    struct thread_run *r = arg;
    const struct thread_plan *p = &plans[r->t];
    r->f = open_memstream(&r->out, &r->out_size);
    if (!r->f)
        return NULL;
    int least = 0, greatest = 0;
    MUST(hipSetDevice(0));
    MUST(hipDeviceGetStreamPriorityRange(&least, &greatest));
    r->streams[0] = NULL;
    r->streams[1] = hipStreamPerThread;
    for (int s = 2; s < p->streams; s++) {
        int pick = p->priority_pick[s];
        int priority = pick == 0 ? greatest : pick == 1 ? least : (least + greatest) / 2;
        hipError_t e = hipErrorUnknown;
        switch (p->kind[s]) {
        case CREATE:
            e = hipStreamCreate(&r->streams[s]);
            break;
        case CREATE_NONBLOCKING:
            e = hipStreamCreateWithFlags(&r->streams[s], hipStreamNonBlocking);
            break;
        case WITH_PRIORITY:
            e = hipStreamCreateWithPriority(&r->streams[s], hipStreamDefault, priority);
            break;
        default:
            e = hipStreamCreateWithPriority(&r->streams[s], hipStreamNonBlocking, priority);
            break;
        }
        SAY(r, "create stream %d (%s) -> %s\n", s, stream_kind_names[p->kind[s]], conf_err(e));
    }
    void *dev = NULL;
    MUST(hipMalloc(&dev, MAX_STREAMS * WORDS * sizeof(uint32_t)));
    r->dev = dev;
    MUST(hipMemset(dev, 0, MAX_STREAMS * WORDS * sizeof(uint32_t)));
    memset(r->model, 0, sizeof r->model);

    for (int i = 0; i < nops; i++)
        if (ops[i].thread == r->t && !skipped[i])
            run_op(r, i);

    for (int s = 0; s < p->streams; s++)
        read_back(r, -1, s, 0);
    for (int s = 0; s < p->streams; s++) {
        conf_log *l = &host_logs[r->t][s];
        SAY(r, "stream %d host functions:", s);
        for (int k = 0; k < conf_log_count(l) && k < CONF_LOG_MAX; k++)
            SAY(r, " %d", atomic_load(&l->v[k]));
        SAY(r, "\n");
    }
    for (int s = 2; s < p->streams; s++)
        SAY(r, "destroy stream %d -> %s\n", s, conf_err(hipStreamDestroy(r->streams[s])));
    MUST(hipFree(dev));
    fclose(r->f);
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t seed;
    bool list;
    if (fuzz_seed("fuzz_prog", argc, argv, &seed))
        return 2;
    generate(seed);
    if (fuzz_options("fuzz_prog", argc, argv, nops, skipped, &list))
        return 2;
    if (list) {
        list_program(seed);
        return 0;
    }

    conf_init();
    *(void **)&set_thread_priority = dlsym(RTLD_DEFAULT, "gpuprio_thread_set_priority");
    *(void **)&set_stream_priority = dlsym(RTLD_DEFAULT, "gpuprio_stream_set_priority");
    MUST(hipHostMalloc((void **)&pinned, MAX_OPS * WORDS * sizeof(uint32_t), 0));
    MUST(hipHostMalloc((void **)&flags, MAX_OPS * sizeof(uint32_t), 0));
    memset(flags, 0, MAX_OPS * sizeof(uint32_t));

    printf("seed %llu: %d threads, %d operations\n", (unsigned long long)seed, nthreads, nops);
    static struct thread_run runs[MAX_THREADS];
    pthread_t threads[MAX_THREADS];
    for (int t = 0; t < nthreads; t++) {
        runs[t].t = t;
        if (pthread_create(&threads[t], NULL, thread_main, &runs[t]) != 0) {
            printf("FATAL: pthread_create\n");
            return 1;
        }
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < nthreads; t++) {
        printf("== thread %d\n%s", t, runs[t].out ? runs[t].out : "(no output)\n");
        free(runs[t].out);
    }
    MUST(hipHostFree(pinned));
    MUST(hipHostFree(flags));
    return 0;
}
