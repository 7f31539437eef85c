/*
 * fake_cuda.c - a stand-in CUDA driver for CI, which has no GPU: built as libcuda.so.1 (soname
 * and all) in a private directory, so that programs link and run against it as against the
 * real driver, with and without libgpuprio-cuda.so preloaded.
 *
 * It implements only what tests/cuda's programs use, with the driver's rules that matter to
 * the shim: calls fail before cuInit and without a current context; every context has its own
 * streams and events, an event is recorded only on a stream of its own context
 * (CUDA_ERROR_INVALID_HANDLE otherwise), and the context stack is per thread.
 *
 * Contexts die as the driver's do: cuDevicePrimaryCtxReset, the last cuDevicePrimaryCtxRelease and
 * cuCtxDestroy destroy a context with its streams, events and host registrations. A device's
 * primary context keeps its handle across a reset (retained again, it is the same pointer, as on
 * the real driver, so a pool keyed by the handle would hand out dead events). Using a dead stream,
 * event or registration is what crashes a real driver: here it fails with
 * CUDA_ERROR_CONTEXT_IS_DESTROYED and prints "fake_cuda: error: ... used after its context was
 * destroyed" on stderr, which tests look for (fake_cuda_stale_uses counts them). Dead objects are
 * never freed, so that their addresses are not handed out again. Every command runs
 * at once on the calling thread: a "kernel" is a host function void f(void **kernelParams)
 * passed as the CUfunction, a copy is a memcpy on host memory. cuGetProcAddress_v2 hands out the
 * library's own exported functions, picking the _v2 and _ptsz/_ptds variants like the driver.
 *
 * Device identity, device attributes, NVIDIA's Multi-Process Service (MPS) and the stream memory
 * operations of gpuprio's gates are opt-in, by environment (below, "Device facts"): without any
 * FAKE_CUDA_* variable a device has no PCI bus id, so gpuprio uses no board, exactly as when the
 * fake had none of these functions, and every older test sees what it always saw.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_compat.h"
#include "sim_pinning.h"

#define EXPORT __attribute__((visibility("default")))
#define DEVICES 2
#define STACK_MAX 8
#define STREAM_MAGIC 0x57e4u
#define EVENT_MAGIC 0xe7e4u

#define CTX_MAGIC 0xc7e4u

/* A context: alive between its creation (or a primary context's first retain after a reset) and
 * its destruction; generation counts its lives, and what it made carries the one it was made in. */
struct CUctx_st {
    unsigned magic;
    int device;
    _Atomic bool alive;
    _Atomic unsigned generation;
    int refs; /* a primary context's retains (under life_mu) */
};
/* What a stream has run of its graph launches, which run on threads of their own ("Graphs"
 * below): kept apart from the stream, never freed, so that an event recorded on a stream since
 * destroyed can still be asked about. Under async_mu. */
struct progress {
    uint64_t launched, done;
    /* What its next graph launch waits for besides (cuStreamWaitEvent): streams' progress. */
    struct {
        struct progress *on;
        uint64_t until;
    } after[4];
    size_t afters;
};
struct CUstream_st {
    unsigned magic;
    CUcontext ctx;
    unsigned generation;
    unsigned flags;
    int priority;
    bool capturing;
    struct progress *progress;
    CUgraph capture;  /* what it captures into, while it captures */
    CUgraphNode leaf; /* the capture's last node, or NULL */
    cuuint64_t capture_id;
    unsigned long long id; /* cuStreamGetId: never another stream's, even at the same address */
};
struct CUevent_st {
    unsigned magic;
    CUcontext ctx;
    unsigned generation;
    unsigned flags;
    uint64_t at; /* the device clock when it was last recorded (fake_cuda_advance_ns) */
    struct progress *progress; /* the stream's when it was recorded, and how far it had to get */
    uint64_t until;
};

static struct CUctx_st contexts[DEVICES] = {{CTX_MAGIC, 0, false, 0, 0},
                                            {CTX_MAGIC, 1, false, 0, 0}};
static pthread_mutex_t life_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool initialized;
static _Thread_local CUcontext stack[STACK_MAX];
static _Thread_local int depth;
static atomic_int stale_uses;

EXPORT int fake_cuda_stale_uses(void);
EXPORT int fake_cuda_stale_uses(void)
{
    return atomic_load(&stale_uses);
}

/* Something made in a context that has died since was used. */
static CUresult stale(const char *what, const void *handle)
{
    atomic_fetch_add(&stale_uses, 1);
    fprintf(stderr, "fake_cuda: error: %s %p used after its context was destroyed\n", what, handle);
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

/* Whether what was made in ctx's life `generation` is still alive. */
static bool lives(CUcontext ctx, unsigned generation)
{
    return atomic_load(&ctx->alive) && atomic_load(&ctx->generation) == generation;
}

static CUcontext current(void)
{
    return depth ? stack[depth - 1] : NULL;
}

/* The usual preamble: initialized, and a live context current. */
#define NEED_CONTEXT()                                                                             \
    do {                                                                                           \
        if (!atomic_load(&initialized))                                                            \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
        if (!current())                                                                            \
            return CUDA_ERROR_INVALID_CONTEXT;                                                     \
        if (!atomic_load(&current()->alive))                                                       \
            return CUDA_ERROR_CONTEXT_IS_DESTROYED;                                                \
    } while (0)

static int special(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

/* The stream's context; NULL for a handle that is not a live stream (a dead one is reported). */
static CUcontext stream_ctx(CUstream s)
{
    if (special(s))
        return current();
    if (s->magic != STREAM_MAGIC)
        return NULL;
    if (!lives(s->ctx, s->generation)) {
        stale("stream", s);
        return NULL;
    }
    return s->ctx;
}

/* A live event (a dead one is reported, and answers with the error in *err). */
static bool event_ok(CUevent e, CUresult *err)
{
    *err = CUDA_ERROR_INVALID_HANDLE;
    if (!e || e->magic != EVENT_MAGIC)
        return false;
    if (!lives(e->ctx, e->generation)) {
        *err = stale("event", e);
        return false;
    }
    return true;
}

/* Every context, stream and event made and not destroyed by name, dead ones too: they are kept
 * until the process ends (reachable from here, so leak checkers do not count them). */
static void **objects;
static size_t nobjects, objects_cap;

static void *object_new(size_t size)
{
    void *p = malloc(size);
    if (!p)
        return NULL;
    pthread_mutex_lock(&life_mu);
    if (nobjects == objects_cap) {
        size_t cap = objects_cap ? 2 * objects_cap : 64;
        void **grown = realloc(objects, cap * sizeof *grown);
        if (grown) {
            objects = grown;
            objects_cap = cap;
        }
    }
    if (nobjects < objects_cap)
        objects[nobjects++] = p;
    pthread_mutex_unlock(&life_mu);
    return p;
}

static void object_free(void *p)
{
    pthread_mutex_lock(&life_mu);
    for (size_t i = 0; i < nobjects; i++)
        if (objects[i] == p) {
            objects[i] = objects[--nobjects];
            break;
        }
    pthread_mutex_unlock(&life_mu);
    free(p);
}

static void registrations_die(CUcontext ctx);

/* ---- graph launches in flight (see "Graphs") ---- */
static pthread_mutex_t async_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t async_cv = PTHREAD_COND_INITIALIZER;
static uint64_t async_pending; /* launches of all streams not done */

/* Whether what p was told to wait for (cuStreamWaitEvent) is done (async_mu held). */
static bool afters_done(const struct progress *p)
{
    for (size_t i = 0; i < p->afters; i++)
        if (p->after[i].on->done < p->after[i].until)
            return false;
    return true;
}

/* Waits until the stream's graph launches are done: every other command runs at once on the
 * calling thread, so it first waits for what the stream was given before it. */
static void drain(CUstream s)
{
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || !s->progress)
        return;
    pthread_mutex_lock(&async_mu);
    while (s->progress->done < s->progress->launched || !afters_done(s->progress))
        pthread_cond_wait(&async_cv, &async_mu);
    pthread_mutex_unlock(&async_mu);
}

static void drain_all(void)
{
    pthread_mutex_lock(&async_mu);
    while (async_pending)
        pthread_cond_wait(&async_cv, &async_mu);
    pthread_mutex_unlock(&async_mu);
}

/* ctx dies with everything made in it (life_mu held). */
static void destroy_locked(CUcontext ctx)
{
    if (!atomic_load(&ctx->alive))
        return;
    atomic_store(&ctx->alive, false);
    atomic_fetch_add(&ctx->generation, 1);
    ctx->refs = 0;
    registrations_die(ctx);
}

static void read_start_environment(void);
static pthread_once_t start_once = PTHREAD_ONCE_INIT;

EXPORT CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&start_once, read_start_environment);
    atomic_store(&initialized, true);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    *count = DEVICES;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

/* ---- contexts' lives ---- */

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&life_mu);
    atomic_store(&contexts[dev].alive, true);
    contexts[dev].refs++;
    pthread_mutex_unlock(&life_mu);
    *pctx = &contexts[dev];
    return CUDA_SUCCESS;
}

/* The last release destroys the primary context. */
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&life_mu);
    if (!atomic_load(&contexts[dev].alive) || contexts[dev].refs == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--contexts[dev].refs == 0)
        destroy_locked(&contexts[dev]);
    pthread_mutex_unlock(&life_mu);
    return r;
}

/* Destroys the primary context whatever its retains; a later retain makes it anew, with the same
 * handle. */
EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&life_mu);
    destroy_locked(&contexts[dev]);
    pthread_mutex_unlock(&life_mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    *active = atomic_load(&contexts[dev].alive);
    return CUDA_SUCCESS;
}

/* A new context, current to the calling thread (pushed). */
EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                               CUdevice dev)
{
    (void)flags;
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!pctx || params || depth == STACK_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c = object_new(sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct CUctx_st){CTX_MAGIC, dev, true, 0, 0};
    stack[depth++] = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

/* Destroys a created context (popped if it is the calling thread's current one). */
EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx || ctx->magic != CTX_MAGIC || !atomic_load(&ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx >= &contexts[0] && ctx < &contexts[DEVICES])
        return CUDA_ERROR_INVALID_CONTEXT; /* primary contexts are reset or released, not destroyed
                                            */
    pthread_mutex_lock(&life_mu);
    destroy_locked(ctx);
    pthread_mutex_unlock(&life_mu);
    if (current() == ctx)
        depth--;
    return CUDA_SUCCESS;
}

/*
 * ---- Device facts (opt-in): what gpuprio asks to find a device's board, its gates and MPS ----
 *
 *   FAKE_CUDA_BUS_ID=ID     device N's PCI bus id is "ID:NN", so processes share a board; it also
 *                           makes 64-bit stream memory operations available (gates, Level 2).
 *                           Unset: cuDeviceGetPCIBusId fails (no identity: no board).
 *   FAKE_CUDA_MPS=0|1       the process is (1) or is not (0) an MPS client. Unset: the MPS
 *                           attribute is unknown, as to a driver older than it.
 *   FAKE_CUDA_CC_MAJOR=N    compute capability major (default 9: Hopper).
 *   FAKE_CUDA_SMS=N         multiprocessors per device (default 132: an H100 SXM).
 *   FAKE_CUDA_GREATEST=N    a context's greatest stream priority, -100..0 (default -5: an H100's
 *                           range is 0 to -5); 0: the device has no stream priorities.
 *
 * What a real H100 with driver 580 does, and the fake copies: the MPS attribute and SM-count
 * execution-affinity support are 1 under MPS and 0 without; an MPS client's SM limit comes from
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as the environment had it when cuInit ran (set later, it has
 * no effect), and without MPS the variable is ignored.
 */

/* CU_DEVICE_ATTRIBUTE_MPS_ENABLED, by number: older headers do not name it. */
#define ATTRIBUTE_MPS_ENABLED 133

/* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE at the first cuInit, 1..100; 0: none. */
static int start_sm_percent;

/* A variable as an int in [min, max], or def when unset or not such a number. */
static int env_int(const char *name, int min, int max, int def)
{
    const char *text = getenv(name);
    char *end;
    long v = text && *text ? strtol(text, &end, 10) : 0;
    return text && *text && !*end && v >= min && v <= max ? (int)v : def;
}

static void read_start_environment(void)
{
    start_sm_percent = env_int("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", 1, 100, 0);
}

/* FAKE_CUDA_MPS: 1 or 0; -1 when unset. */
static int mps_mode(void)
{
    const char *v = getenv("FAKE_CUDA_MPS");
    return v ? strcmp(v, "1") == 0 : -1;
}

/* The SMs the process may use: under MPS with a share (read at cuInit), the share of them,
 * rounded down to whole pairs as an H100 with driver 580 does (75% of 132: 98; 50%: 66). The
 * driver then reports that count as the device's in its attributes too. */
static int sm_count(void)
{
    int sms = env_int("FAKE_CUDA_SMS", 1, 100000, 132);
    if (mps_mode() == 1 && start_sm_percent)
        sms = (sms * start_sm_percent / 100) & ~1;
    return sms;
}

#define NEED_DEVICE(dev)                                                                           \
    do {                                                                                           \
        if (!atomic_load(&initialized))                                                            \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
        if ((dev) < 0 || (dev) >= DEVICES)                                                         \
            return CUDA_ERROR_INVALID_DEVICE;                                                      \
    } while (0)

EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    const char *id = getenv("FAKE_CUDA_BUS_ID");
    /* Not CUDA_ERROR_NOT_FOUND or the like: any failure means "no identity" to gpuprio. */
    if (!id)
        return CUDA_ERROR_NOT_SUPPORTED;
    NEED_DEVICE(dev);
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    int n = snprintf(pciBusId, (size_t)len, "%s:%02d", id, (int)dev);
    return n >= 0 && n < len ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    NEED_DEVICE(dev);
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    switch ((int)attrib) {
    case ATTRIBUTE_MPS_ENABLED:
        if (mps_mode() < 0)
            return CUDA_ERROR_INVALID_VALUE;
        *pi = mps_mode();
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *pi = env_int("FAKE_CUDA_CC_MAJOR", 1, 100, 9);
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *pi = sm_count();
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
        /* Tied to the bus id so that gates (which need a board) come with the board only. */
        *pi = getenv("FAKE_CUDA_BUS_ID") != NULL;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult cuDeviceGetExecAffinitySupport(int *pi, CUexecAffinityType type, CUdevice dev)
{
    NEED_DEVICE(dev);
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    *pi = mps_mode() == 1 && type == CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetExecAffinity(CUexecAffinityParam *pExecAffinity, CUexecAffinityType type)
{
    NEED_CONTEXT();
    if (!pExecAffinity || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
        return CUDA_ERROR_INVALID_VALUE;
    pExecAffinity->type = type;
    pExecAffinity->param.smCount.val = (unsigned)sm_count();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx) {
        if (depth)
            depth--;
        return CUDA_SUCCESS;
    }
    if (!depth)
        depth = 1;
    stack[depth - 1] = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    *pctx = current();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx || depth == STACK_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    stack[depth++] = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    NEED_CONTEXT();
    CUcontext c = stack[--depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    NEED_CONTEXT();
    *device = current()->device;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    NEED_CONTEXT();
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = env_int("FAKE_CUDA_GREATEST", -100, 0, -5);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    NEED_CONTEXT();
    drain_all();
    return CUDA_SUCCESS;
}

/* FAKE_CUDA_STREAM_REUSE=1: a destroyed stream's memory is kept for the next stream created, so
 * that the new stream has the destroyed one's handle (as a driver's freed memory may be handed out
 * again), with an id of its own. Under life_mu. */
static struct CUstream_st **reusable;
static size_t nreusable, reusable_cap;
static _Atomic unsigned long long stream_ids = 16; /* below: the special handles' */

static bool reuse_streams(void)
{
    const char *v = getenv("FAKE_CUDA_STREAM_REUSE");
    return v && strcmp(v, "1") == 0;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size);

/* A destroyed stream's memory, kept (true) for the next creation, or not (false). */
static bool keep_for_reuse(struct CUstream_st *s)
{
    bool kept = false;
    pthread_mutex_lock(&life_mu);
    if (nreusable < reusable_cap ||
        grow((void **)&reusable, &reusable_cap, nreusable + 1, sizeof *reusable)) {
        reusable[nreusable++] = s;
        kept = true;
    }
    pthread_mutex_unlock(&life_mu);
    return kept;
}

static struct CUstream_st *stream_memory(void)
{
    struct CUstream_st *s = NULL;
    pthread_mutex_lock(&life_mu);
    if (nreusable)
        s = reusable[--nreusable];
    pthread_mutex_unlock(&life_mu);
    return s ? s : object_new(sizeof *s);
}

EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    NEED_CONTEXT();
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = stream_memory();
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* Clamped to the range, as the driver does. */
    *s = (struct CUstream_st){STREAM_MAGIC,
                              current(),
                              atomic_load(&current()->generation),
                              flags,
                              priority > 0    ? 0
                              : priority < -5 ? -5
                                              : priority,
                              false,
                              object_new(sizeof(struct progress)),
                              NULL,
                              NULL,
                              0,
                              atomic_fetch_add(&stream_ids, 1)};
    if (!s->progress) {
        object_free(s);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *s->progress = (struct progress){0};
    *phStream = s;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

/* FAKE_CUDA_STREAM_DESTROY_RETURNS=1: cuStreamDestroy returns at once, as the driver's does, and
 * the stream's graph launches in flight run on (their progress is never freed); else it waits for
 * them, as the tests before it expect. */
static bool destroy_returns_at_once(void)
{
    const char *v = getenv("FAKE_CUDA_STREAM_DESTROY_RETURNS");
    return v && strcmp(v, "1") == 0;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    NEED_CONTEXT();
    if (special(hStream) || hStream->magic != STREAM_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!lives(hStream->ctx, hStream->generation))
        return stale("stream", hStream);
    if (!destroy_returns_at_once())
        drain(hStream);
    hStream->magic = 0;
    if (!reuse_streams() || !keep_for_reuse(hStream))
        object_free(hStream);
    return CUDA_SUCCESS;
}

/* The legacy stream is 1 and the per-thread stream 2 (one id for every thread's: gpuprio tells
 * those apart by thread). */
EXPORT CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    NEED_CONTEXT();
    if (!streamId || !stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    *streamId = special(hStream) ? (hStream == CU_STREAM_PER_THREAD ? 2 : 1) : hStream->id;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    NEED_CONTEXT();
    CUcontext c = stream_ctx(hStream);
    if (!c)
        return CUDA_ERROR_INVALID_HANDLE;
    *pctx = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
    NEED_CONTEXT();
    if (!stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    *priority = special(hStream) ? 0 : hStream->priority;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    NEED_CONTEXT();
    if (!stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    *flags = special(hStream) ? 0 : hStream->flags;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
    NEED_CONTEXT();
    if (!stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    drain(hStream);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    return cuStreamSynchronize(hStream);
}

typedef void (*fake_kernel)(void **);
/* A kernel node after the capture's last one ("Graphs" below). */
static CUresult capture_kernel(CUstream s, CUfunction f, void **params);

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                               unsigned int gridDimZ, unsigned int blockDimX,
                               unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                               void **extra)
{
    NEED_CONTEXT();
    (void)sharedMemBytes;
    (void)extra;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY || !blockDimZ)
        return CUDA_ERROR_INVALID_VALUE;
    if (!special(hStream) && hStream->capturing)
        return capture_kernel(hStream, f, kernelParams);
    drain(hStream);
    ((fake_kernel)(void *)f)(kernelParams);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                    unsigned int gridDimZ, unsigned int blockDimX,
                                    unsigned int blockDimY, unsigned int blockDimZ,
                                    unsigned int sharedMemBytes, CUstream hStream,
                                    void **kernelParams, void **extra)
{
    return cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                          sharedMemBytes, hStream == NULL ? CU_STREAM_PER_THREAD : hStream,
                          kernelParams, extra);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                     CUstream hStream)
{
    NEED_CONTEXT();
    if (!stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!dstDevice || !srcHost)
        return CUDA_ERROR_INVALID_VALUE;
    drain(hStream);
    memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
    return CUDA_SUCCESS;
}

/*
 * Host memory is device memory here: a registered range's device address is its host address.
 * Registrations are remembered with the context that made them (portable ones serve every
 * context) and die with it; a range registered again overlapping a live one is refused as the
 * driver refuses it, and one that died is remembered as dead, so that a stream wait on it is
 * reported.
 */
#define REGISTRATIONS_MAX 256
static struct registration {
    uintptr_t base;
    size_t size;
    CUcontext ctx;
    bool alive;
} registrations[REGISTRATIONS_MAX];
static int nregistrations;

/* The registration containing [p, p + size), live ones first; NULL: none (life_mu held). */
static struct registration *registration_of(uintptr_t p, size_t size)
{
    struct registration *dead = NULL;
    for (int i = 0; i < nregistrations; i++) {
        struct registration *r = &registrations[i];
        if (p < r->base + r->size && r->base < p + size) {
            if (r->alive)
                return r;
            dead = r;
        }
    }
    return dead;
}

static void registrations_die(CUcontext ctx)
{
    for (int i = 0; i < nregistrations; i++)
        if (registrations[i].ctx == ctx)
            registrations[i].alive = false;
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    NEED_CONTEXT();
    const unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                           CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || !bytesize || (Flags & ~known))
        return CUDA_ERROR_INVALID_VALUE;
    /* A shared mapping of a file outside tmpfs and hugetlbfs: the driver cannot pin its pages
     * (Linux refuses long-term pinning of them) and fails as when memory runs out. */
    if (sim_unpinnable_file_mapping(p, bytesize))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&life_mu);
    struct registration *old = registration_of((uintptr_t)p, bytesize);
    if (old && old->alive)
        r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (nregistrations == REGISTRATIONS_MAX)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else
        registrations[nregistrations++] =
            (struct registration){(uintptr_t)p, bytesize, current(), true};
    pthread_mutex_unlock(&life_mu);
    return r;
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    NEED_CONTEXT();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    pthread_mutex_lock(&life_mu);
    for (int i = 0; i < nregistrations; i++)
        if (registrations[i].alive && registrations[i].base == (uintptr_t)p) {
            registrations[i] = registrations[--nregistrations];
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&life_mu);
    return r;
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    NEED_CONTEXT();
    if (!pdptr || !p || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* How many stream waits were queued, and how many of them would have held their stream when
 * queued: tests read them with fake_cuda_gate_waits and fake_cuda_gate_would_wait. */
static atomic_int gate_waits, gate_would_wait;

EXPORT int fake_cuda_gate_waits(void);
EXPORT int fake_cuda_gate_waits(void)
{
    return atomic_load(&gate_waits);
}

EXPORT int fake_cuda_gate_would_wait(void);
EXPORT int fake_cuda_gate_would_wait(void)
{
    return atomic_load(&gate_would_wait);
}

/*
 * Commands run at once on the calling thread, so a wait that blocked would never be released by
 * the stream's later work: it is counted and passes. The word is read atomically, since other
 * processes write gpuprio's gate words in shared memory meanwhile.
 */
EXPORT CUresult cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                       unsigned int flags)
{
    NEED_CONTEXT();
    if (!stream_ctx(stream))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!addr || (addr & 7))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&life_mu);
    struct registration *reg = registration_of((uintptr_t)addr, 8);
    bool registered = reg && reg->alive, died = reg && !reg->alive;
    pthread_mutex_unlock(&life_mu);
    if (died)
        stale("registered host memory at", (void *)(uintptr_t)addr);
    if (!registered)
        return CUDA_ERROR_INVALID_VALUE;
    cuuint64_t word = atomic_load((_Atomic cuuint64_t *)(uintptr_t)addr);
    bool passes;
    switch (flags & ~(unsigned)CU_STREAM_WAIT_VALUE_FLUSH) {
    case CU_STREAM_WAIT_VALUE_GEQ: /* in the wrap-around sense, as the driver compares */
        passes = (int64_t)(word - value) >= 0;
        break;
    case CU_STREAM_WAIT_VALUE_EQ:
        passes = word == value;
        break;
    case CU_STREAM_WAIT_VALUE_AND:
        passes = (word & value) != 0;
        break;
    case CU_STREAM_WAIT_VALUE_NOR:
        passes = ~(word | value) != 0;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    atomic_fetch_add(&gate_waits, 1);
    if (!passes)
        atomic_fetch_add(&gate_would_wait, 1);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    NEED_CONTEXT();
    struct CUevent_st *e = object_new(sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *e = (struct CUevent_st){EVENT_MAGIC, current(), atomic_load(&current()->generation), Flags, 0,
                             NULL,        0};
    *phEvent = e;
    return CUDA_SUCCESS;
}

/* The device's clock: it stands still but for what a program's commands say they took
 * (fake_cublaslt.c's GEMMs), so that event timings are exact. */
static _Atomic uint64_t device_clock_ns;

EXPORT void fake_cuda_advance_ns(uint64_t ns);
EXPORT void fake_cuda_advance_ns(uint64_t ns)
{
    atomic_fetch_add(&device_clock_ns, ns);
}

EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    NEED_CONTEXT();
    CUresult err;
    if (!event_ok(hEvent, &err))
        return err;
    CUcontext c = stream_ctx(hStream);
    if (!c || hEvent->ctx != c)
        return CUDA_ERROR_INVALID_HANDLE;
    hEvent->at = atomic_load(&device_clock_ns);
    pthread_mutex_lock(&async_mu);
    hEvent->progress = special(hStream) ? NULL : hStream->progress;
    hEvent->until = hEvent->progress ? hEvent->progress->launched : 0;
    pthread_mutex_unlock(&async_mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    NEED_CONTEXT();
    CUresult err;
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    if (!event_ok(hStart, &err) || !event_ok(hEnd, &err))
        return err;
    if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING)
        return CUDA_ERROR_INVALID_HANDLE;
    *pMilliseconds = (float)((double)(hEnd->at - hStart->at) / 1e6);
    return CUDA_SUCCESS;
}

/* The stream's next graph launch (or, before one, its next other command) waits for what the event
 * stands behind; on a special stream, whose commands run at once, the caller waits. A capturing
 * stream refuses an event recorded outside its capture (the driver's isolation rule: here every
 * event is). */
EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    NEED_CONTEXT();
    CUresult err;
    if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!event_ok(hEvent, &err))
        return err;
    if (!stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!special(hStream) && hStream->capturing) {
        fprintf(stderr, "fake_cuda: error: a capturing stream waits on an outside event\n");
        return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    }
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&async_mu);
    struct progress *on = hEvent->progress;
    uint64_t until = hEvent->until;
    if (!on || on->done >= until) {
        /* nothing to wait for */
    } else if (special(hStream)) {
        while (on->done < until)
            pthread_cond_wait(&async_cv, &async_mu);
    } else if (hStream->progress->afters == 4) {
        fprintf(stderr, "fake_cuda: error: more than 4 event waits before a launch\n");
        r = CUDA_ERROR_NOT_SUPPORTED;
    } else {
        size_t i = hStream->progress->afters++;
        hStream->progress->after[i].on = on;
        hStream->progress->after[i].until = until;
    }
    pthread_mutex_unlock(&async_mu);
    return r;
}

EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return cuStreamWaitEvent(hStream, hEvent, Flags);
}

EXPORT CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    NEED_CONTEXT();
    if (!captureStatus || !stream_ctx(hStream))
        return CUDA_ERROR_INVALID_VALUE;
    *captureStatus = !special(hStream) && hStream->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                                             : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

/* Stream capture: a stream captures between begin and end, into a graph that end hands out
 * (its kernel launches only: "Graphs" below). */
static CUgraph graph_new(void);

EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    static cuuint64_t captures;
    NEED_CONTEXT();
    if (special(hStream) || !stream_ctx(hStream) || hStream->capturing ||
        mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    hStream->capture = graph_new();
    if (!hStream->capture)
        return CUDA_ERROR_OUT_OF_MEMORY;
    hStream->leaf = NULL;
    hStream->capture_id = ++captures;
    hStream->capturing = true;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    NEED_CONTEXT();
    if (special(hStream) || !stream_ctx(hStream) || !hStream->capturing || !phGraph)
        return CUDA_ERROR_ILLEGAL_STATE;
    hStream->capturing = false;
    *phGraph = hStream->capture;
    hStream->capture = NULL;
    hStream->leaf = NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *status,
                                          cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                          const CUgraphEdgeData **edges, size_t *numDeps)
{
    NEED_CONTEXT();
    if (!status || !stream_ctx(hStream))
        return CUDA_ERROR_INVALID_VALUE;
    bool on = !special(hStream) && hStream->capturing;
    *status = on ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (id)
        *id = on ? hStream->capture_id : 0;
    if (graph)
        *graph = on ? hStream->capture : NULL;
    if (deps)
        *deps = on && hStream->leaf ? &hStream->leaf : NULL;
    if (edges)
        *edges = NULL; /* no edge data: default edges */
    if (numDeps)
        *numDeps = on && hStream->leaf ? 1 : 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *status,
                                          cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                          size_t *numDeps)
{
    return cuStreamGetCaptureInfo_v3(hStream, status, id, graph, deps, NULL, numDeps);
}

/*
 * ---- Graphs ----
 *
 * Built with the driver's functions (kernel, empty, batch memory operation, memory allocation and
 * free, child graph and conditional nodes; edges), cloned, and instantiated into a snapshot of the
 * nodes in an order that respects the edges. A launch on a created stream runs on a thread of its
 * own, after the stream's earlier launches and after the executable graph's earlier launches on any
 * stream (the driver orders those too), so that the launching thread goes on as with a real
 * device (the stream's other commands, its synchronization, and events recorded on it wait for it);
 * on a special stream it runs at once; into a capturing stream it does not run (the driver puts
 * it into the capture). A stream captures into a graph of its own between
 * cuStreamBeginCapture and cuStreamEndCapture, which hands it out: a kernel launched into it
 * becomes a kernel node after the last one (cuStreamGetCaptureInfo_v3 and _v2 give that one as
 * the capture's dependency); other commands run at once. Kernel nodes call their host function
 * with their parameter array (the application's pointer, as a stand-in for the driver's copy); a
 * wait node (one CU_STREAM_MEM_OP_WAIT_VALUE_64, CU_STREAM_WAIT_VALUE_GEQ) really waits until the
 * word passes, and one that held says so on stderr ("fake_cuda: graph wait held N ms after K of M
 * kernel nodes"; "holding at T ms" when it starts to hold and "opened at T ms" when it opens, T
 * the wall clock); the other node types do nothing. An executable graph destroyed while launches of
 * it run lives until they are done, as the driver's; one launched after its destruction is
 * reported.
 *
 * FAKE_CUDA_GRAPH_CLONE_FAILS and FAKE_CUDA_GRAPH_MEMOP_FAILS make cuGraphClone and
 * cuGraphAddBatchMemOpNode fail; FAKE_CUDA_GATED_LAUNCH_FAILS makes the launch and upload of an
 * executable graph with a batch memory operation node (only gpuprio's gated copies have one in
 * the tests) fail with CUDA_ERROR_OUT_OF_MEMORY. A graph handle that is not one of these
 * (tests/cuda/cuda_shim_test.c passes a pointer to any memory) instantiates as before: a token
 * whose launch checks the stream only. Tests read fake_cuda_graph_calls (every call of a graph
 * function), fake_cuda_graph_execs_alive, fake_cuda_graph_waits_held,
 * fake_cuda_graph_waits_holding (now), and fake_cuda_graph_last_run: the kernel nodes of the last
 * launch that ran, in the order they ran, each with its function and whether a wait node is among
 * its dependencies (so which kernel each wait node precedes). cuGraphNodeFindInClone finds a
 * node's copy in a graph cloned from its own.
 */
#define GRAPH_MAGIC 0x6a4fu
#define NODE_MAGIC 0x40deu
#define EXEC_MAGIC 0xe8ecu

struct CUgraphNode_st {
    unsigned magic;
    CUgraph graph;
    CUgraphNode origin; /* in a clone, the node it copies */
    CUgraphNodeType type;
    CUfunction func;
    void **params;
    CUdeviceptr addr; /* a wait node's word and value */
    uint64_t value;
    CUgraph child;
    bool device_updatable; /* CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE (a clone's too) */
};
struct edge {
    CUgraphNode from, to;
};
struct CUgraph_st {
    unsigned magic;
    CUgraphNode *nodes;
    size_t n, cap;
    struct edge *edges;
    size_t ne, ecap;
};
struct exec_node {
    CUgraphNode origin; /* the node of the instantiated graph: what set-params name */
    CUgraphNodeType type;
    CUfunction func;
    void **params;
    CUdeviceptr addr;
    uint64_t value;
    bool enabled;
    CUgraphExec child;
    bool after_wait; /* a wait node is among its dependencies */
};
struct CUgraphExec_st {
    unsigned magic;
    CUcontext ctx;
    bool destroyed, token;
    struct exec_node *nodes;
    size_t n;
    struct progress order; /* its launches, which run one after the other whatever their stream */
};

static atomic_int graph_calls, execs_alive, waits_held, waits_holding;
#define GRAPH_CALL() atomic_fetch_add(&graph_calls, 1)

EXPORT int fake_cuda_graph_calls(void);
EXPORT int fake_cuda_graph_calls(void)
{
    return atomic_load(&graph_calls);
}
EXPORT int fake_cuda_graph_execs_alive(void);
EXPORT int fake_cuda_graph_execs_alive(void)
{
    return atomic_load(&execs_alive);
}
EXPORT int fake_cuda_graph_waits_holding(void);
EXPORT int fake_cuda_graph_waits_holding(void)
{
    return atomic_load(&waits_holding);
}
EXPORT int fake_cuda_graph_waits_held(void);
EXPORT int fake_cuda_graph_waits_held(void)
{
    return atomic_load(&waits_held);
}

static bool graph_ok(CUgraph g)
{
    return g && g->magic == GRAPH_MAGIC;
}

static bool node_ok(CUgraphNode n)
{
    return n && n->magic == NODE_MAGIC;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? 2 * *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static CUresult add_edge(CUgraph g, CUgraphNode from, CUgraphNode to)
{
    for (size_t i = 0; i < g->ne; i++)
        if (g->edges[i].from == from && g->edges[i].to == to)
            return CUDA_ERROR_INVALID_VALUE;
    if (!grow((void **)&g->edges, &g->ecap, g->ne + 1, sizeof *g->edges))
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->edges[g->ne++] = (struct edge){from, to};
    return CUDA_SUCCESS;
}

/* A new node of g with its dependencies (all of g). */
static CUresult add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                         const struct CUgraphNode_st *tmpl)
{
    if (!out || !graph_ok(g) || (ndeps && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < ndeps; i++)
        if (!node_ok(deps[i]) || deps[i]->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphNode_st *n = object_new(sizeof *n);
    if (!n || !grow((void **)&g->nodes, &g->cap, g->n + 1, sizeof *g->nodes))
        return CUDA_ERROR_OUT_OF_MEMORY;
    *n = *tmpl;
    n->magic = NODE_MAGIC;
    n->graph = g;
    g->nodes[g->n++] = n;
    for (size_t i = 0; i < ndeps; i++)
        add_edge(g, deps[i], n);
    *out = n;
    return CUDA_SUCCESS;
}

static CUgraph graph_new(void)
{
    struct CUgraph_st *g = object_new(sizeof *g);
    if (g)
        *g = (struct CUgraph_st){GRAPH_MAGIC, NULL, 0, 0, NULL, 0, 0};
    return g;
}

EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraph g = graph_new();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = g;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
    GRAPH_CALL();
    if (!graph_ok(hGraph))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < hGraph->n; i++) {
        hGraph->nodes[i]->magic = 0;
        object_free(hGraph->nodes[i]);
    }
    free(hGraph->nodes);
    free(hGraph->edges);
    hGraph->magic = 0;
    object_free(hGraph);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    if (!nodeParams || !nodeParams->func)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphNode_st t = {.type = CU_GRAPH_NODE_TYPE_KERNEL,
                               .func = nodeParams->func,
                               .params = nodeParams->kernelParams};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &t);
}

static CUresult capture_kernel(CUstream s, CUfunction f, void **params)
{
    struct CUgraphNode_st t = {.type = CU_GRAPH_NODE_TYPE_KERNEL, .func = f, .params = params};
    CUgraphNode n;
    CUresult r = add_node(&n, s->capture, s->leaf ? &s->leaf : NULL, s->leaf ? 1 : 0, &t);
    if (r == CUDA_SUCCESS)
        s->leaf = n;
    return r;
}

EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                    const CUgraphNode *dependencies, size_t numDependencies)
{
    GRAPH_CALL();
    struct CUgraphNode_st t = {.type = CU_GRAPH_NODE_TYPE_EMPTY};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &t);
}

/* Only what gates use: one 64-bit wait, GEQ, on registered memory. */
static CUresult wait_of(const CUDA_BATCH_MEM_OP_NODE_PARAMS *p, struct CUgraphNode_st *t)
{
    if (!p || p->count != 1 || !p->paramArray ||
        p->paramArray[0].operation != CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
        (p->paramArray[0].waitValue.flags & ~(unsigned)CU_STREAM_WAIT_VALUE_FLUSH) !=
            CU_STREAM_WAIT_VALUE_GEQ)
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr addr = p->paramArray[0].waitValue.address;
    if (!addr || (addr & 7))
        return CUDA_ERROR_INVALID_VALUE;
    t->type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    t->addr = addr;
    t->value = p->paramArray[0].waitValue.value64;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddBatchMemOpNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                         const CUgraphNode *dependencies, size_t numDependencies,
                                         const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    if (getenv("FAKE_CUDA_GRAPH_MEMOP_FAILS"))
        return CUDA_ERROR_NOT_SUPPORTED;
    struct CUgraphNode_st t = {0};
    CUresult r = wait_of(nodeParams, &t);
    return r ? r : add_node(phGraphNode, hGraph, dependencies, numDependencies, &t);
}

EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies,
                                       CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphNode_st t = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &t);
}

EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      CUdeviceptr dptr)
{
    GRAPH_CALL();
    (void)dptr;
    struct CUgraphNode_st t = {.type = CU_GRAPH_NODE_TYPE_MEM_FREE};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &t);
}

EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                         const CUgraphNode *dependencies, size_t numDependencies,
                                         CUgraph childGraph)
{
    GRAPH_CALL();
    if (!graph_ok(childGraph))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphNode_st t = {.type = CU_GRAPH_NODE_TYPE_GRAPH, .child = childGraph};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &t);
}

/* Only conditional nodes, which run nothing here. */
EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies,
                                  const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                  CUgraphNodeParams *nodeParams)
{
    GRAPH_CALL();
    if (dependencyData || !nodeParams || nodeParams->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct CUgraphNode_st t = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &t);
}

/* Of a kernel node's attributes, only whether it is device-updatable (CUDA 12.4): set to 1 once
 * (its handle for device-side updates is then the node itself), never back to 0. */
EXPORT CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                              const CUkernelNodeAttrValue *value)
{
    GRAPH_CALL();
    if (!node_ok(hNode) || hNode->type != CU_GRAPH_NODE_TYPE_KERNEL || !value)
        return CUDA_ERROR_INVALID_VALUE;
    if (attr != CU_KERNEL_NODE_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
        return CUDA_ERROR_NOT_SUPPORTED;
    int to = value->deviceUpdatableKernelNode.deviceUpdatable;
    if ((to != 0 && to != 1) || (hNode->device_updatable && !to))
        return CUDA_ERROR_INVALID_VALUE;
    hNode->device_updatable = to;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                              CUkernelNodeAttrValue *value)
{
    GRAPH_CALL();
    if (!node_ok(hNode) || hNode->type != CU_GRAPH_NODE_TYPE_KERNEL || !value)
        return CUDA_ERROR_INVALID_VALUE;
    if (attr != CU_KERNEL_NODE_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
        return CUDA_ERROR_NOT_SUPPORTED;
    value->deviceUpdatableKernelNode.deviceUpdatable = hNode->device_updatable;
    value->deviceUpdatableKernelNode.devNode =
        hNode->device_updatable ? (CUgraphDeviceNode)(void *)hNode : NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    GRAPH_CALL();
    if (!node_ok(hNode) || !type)
        return CUDA_ERROR_INVALID_VALUE;
    *type = hNode->type;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    GRAPH_CALL();
    if (!graph_ok(hGraph) || !numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    if (nodes)
        for (size_t i = 0; i < *numNodes && i < hGraph->n; i++)
            nodes[i] = hGraph->nodes[i];
    *numNodes = hGraph->n;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                                size_t *numEdges)
{
    GRAPH_CALL();
    if (!graph_ok(hGraph) || !numEdges || (!from) != (!to))
        return CUDA_ERROR_INVALID_VALUE;
    if (from)
        for (size_t i = 0; i < *numEdges && i < hGraph->ne; i++) {
            from[i] = hGraph->edges[i].from;
            to[i] = hGraph->edges[i].to;
        }
    *numEdges = hGraph->ne;
    return CUDA_SUCCESS;
}

static bool in_graph(CUgraph g, const CUgraphNode *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!node_ok(nodes[i]) || nodes[i]->graph != g)
            return false;
    return true;
}

EXPORT CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from,
                                       const CUgraphNode *to, size_t numDependencies)
{
    GRAPH_CALL();
    if (!graph_ok(hGraph) || !from || !to || !in_graph(hGraph, from, numDependencies) ||
        !in_graph(hGraph, to, numDependencies))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numDependencies; i++) {
        CUresult r = add_edge(hGraph, from[i], to[i]);
        if (r)
            return r;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from,
                                          const CUgraphNode *to, size_t numDependencies)
{
    GRAPH_CALL();
    if (!graph_ok(hGraph) || !from || !to)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numDependencies; i++) {
        size_t j = 0;
        while (j < hGraph->ne &&
               !(hGraph->edges[j].from == from[i] && hGraph->edges[j].to == to[i]))
            j++;
        if (j == hGraph->ne)
            return CUDA_ERROR_INVALID_VALUE;
        hGraph->edges[j] = hGraph->edges[--hGraph->ne];
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    GRAPH_CALL();
    if (!phGraphClone || !graph_ok(originalGraph))
        return CUDA_ERROR_INVALID_VALUE;
    if (getenv("FAKE_CUDA_GRAPH_CLONE_FAILS"))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUgraph g;
    CUresult r = cuGraphCreate(&g, 0);
    if (r)
        return r;
    CUgraphNode *map = calloc(originalGraph->n ? originalGraph->n : 1, sizeof *map);
    if (!map)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < originalGraph->n && !r; i++)
        if ((r = add_node(&map[i], g, NULL, 0, originalGraph->nodes[i])) == CUDA_SUCCESS)
            map[i]->origin = originalGraph->nodes[i];
    for (size_t e = 0; e < originalGraph->ne && !r; e++) {
        size_t f = 0, t = 0;
        while (originalGraph->nodes[f] != originalGraph->edges[e].from)
            f++;
        while (originalGraph->nodes[t] != originalGraph->edges[e].to)
            t++;
        r = add_edge(g, map[f], map[t]);
    }
    free(map);
    if (r) {
        cuGraphDestroy(g);
        return r;
    }
    *phGraphClone = g;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode,
                                       CUgraph hClonedGraph)
{
    GRAPH_CALL();
    if (!phNode || !node_ok(hOriginalNode) || !graph_ok(hClonedGraph))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < hClonedGraph->n; i++)
        if (hClonedGraph->nodes[i]->origin == hOriginalNode) {
            *phNode = hClonedGraph->nodes[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

/* Whether a wait node of g is among n's dependencies. */
static bool after_wait(CUgraph g, CUgraphNode n)
{
    for (size_t e = 0; e < g->ne; e++)
        if (g->edges[e].to == n && g->edges[e].from->type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)
            return true;
    return false;
}

/* An executable snapshot of g, its nodes ordered by its edges. */
static CUresult snapshot(CUgraph g, CUgraphExec *out)
{
    struct CUgraphExec_st *x = object_new(sizeof *x);
    size_t *pending = calloc(g->n + 1, sizeof *pending), *queue = calloc(g->n + 1, sizeof *queue);
    if (!x || !pending || !queue) {
        free(pending);
        free(queue);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *x = (struct CUgraphExec_st){EXEC_MAGIC, current(), false, false, NULL, 0, {0}};
    x->nodes = calloc(g->n + 1, sizeof *x->nodes);
    for (size_t e = 0; e < g->ne; e++)
        for (size_t j = 0; j < g->n; j++)
            if (g->nodes[j] == g->edges[e].to)
                pending[j]++;
    size_t head = 0, tail = 0;
    for (size_t j = 0; j < g->n; j++)
        if (!pending[j])
            queue[tail++] = j;
    CUresult r = CUDA_SUCCESS;
    while (head < tail && x->nodes) {
        CUgraphNode n = g->nodes[queue[head++]];
        x->nodes[x->n++] = (struct exec_node){n,        n->type, n->func, n->params,       n->addr,
                                              n->value, true,    NULL,    after_wait(g, n)};
        if (n->type == CU_GRAPH_NODE_TYPE_GRAPH && !r)
            r = snapshot(n->child, &x->nodes[x->n - 1].child);
        for (size_t e = 0; e < g->ne; e++)
            if (g->edges[e].from == n)
                for (size_t j = 0; j < g->n; j++)
                    if (g->nodes[j] == g->edges[e].to && --pending[j] == 0)
                        queue[tail++] = j;
    }
    free(pending);
    free(queue);
    if (!x->nodes)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (x->n != g->n || r)
        return r ? r : CUDA_ERROR_INVALID_VALUE; /* a cycle */
    atomic_fetch_add(&execs_alive, 1);
    *out = x;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                            unsigned long long flags)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    const unsigned long long known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                                     CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    if (!phGraphExec || !graph_ok(hGraph) || (flags & ~known))
        return CUDA_ERROR_INVALID_VALUE;
    return snapshot(hGraph, phGraphExec);
}

EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    if (!phGraphExec || !hGraph || !instantiateParams)
        return CUDA_ERROR_INVALID_VALUE;
    if ((instantiateParams->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) &&
        !stream_ctx(instantiateParams->hUploadStream))
        return CUDA_ERROR_INVALID_HANDLE;
    if (graph_ok(hGraph)) {
        CUresult r = cuGraphInstantiateWithFlags(
            phGraphExec, hGraph,
            instantiateParams->flags & ~(cuuint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
        instantiateParams->result_out =
            r ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
        return r;
    }
    struct CUgraphExec_st *x = object_new(sizeof *x); /* a token (see above) */
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *x = (struct CUgraphExec_st){EXEC_MAGIC, current(), false, true, NULL, 0, {0}};
    *phGraphExec = x;
    instantiateParams->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    return CUDA_SUCCESS;
}

static bool exec_ok(CUgraphExec x)
{
    if (!x || x->magic != EXEC_MAGIC)
        return false;
    if (x->destroyed) {
        atomic_fetch_add(&stale_uses, 1);
        fprintf(stderr, "fake_cuda: error: executable graph %p used after it was destroyed\n",
                (void *)x);
        return false;
    }
    return true;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    GRAPH_CALL();
    if (!exec_ok(hGraphExec))
        return CUDA_ERROR_INVALID_VALUE;
    hGraphExec->destroyed = true; /* its memory is kept: launches in flight go on */
    if (!hGraphExec->token)
        atomic_fetch_sub(&execs_alive, 1);
    return CUDA_SUCCESS;
}

static struct exec_node *exec_node_of(CUgraphExec x, CUgraphNode n)
{
    for (size_t i = 0; x->nodes && i < x->n; i++)
        if (x->nodes[i].origin == n)
            return &x->nodes[i];
    return NULL;
}

EXPORT CUresult cuGraphExecBatchMemOpNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    GRAPH_CALL();
    if (!exec_ok(hGraphExec))
        return CUDA_ERROR_INVALID_VALUE;
    struct exec_node *n = exec_node_of(hGraphExec, hNode);
    struct CUgraphNode_st t = {0};
    if (!n || n->type != CU_GRAPH_NODE_TYPE_BATCH_MEM_OP || wait_of(nodeParams, &t))
        return CUDA_ERROR_INVALID_VALUE;
    n->addr = t.addr;
    n->value = t.value;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    GRAPH_CALL();
    if (!exec_ok(hGraphExec) || !nodeParams || !nodeParams->func)
        return CUDA_ERROR_INVALID_VALUE;
    struct exec_node *n = exec_node_of(hGraphExec, hNode);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    n->func = nodeParams->func;
    n->params = nodeParams->kernelParams;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                      unsigned int isEnabled)
{
    GRAPH_CALL();
    if (!exec_ok(hGraphExec))
        return CUDA_ERROR_INVALID_VALUE;
    struct exec_node *n = exec_node_of(hGraphExec, hNode);
    if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    n->enabled = isEnabled != 0;
    return CUDA_SUCCESS;
}

/* The kernel nodes' parameters of hGraph, where its nodes match the executable graph's in number
 * and type, in the order instantiation put them. */
EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                     CUgraphExecUpdateResultInfo *resultInfo)
{
    GRAPH_CALL();
    if (!exec_ok(hGraphExec) || !graph_ok(hGraph) || !resultInfo)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphExec fresh;
    CUresult r = snapshot(hGraph, &fresh);
    if (r)
        return r;
    atomic_fetch_sub(&execs_alive, 1);
    fresh->destroyed = true;
    bool same = fresh->n == hGraphExec->n;
    for (size_t i = 0; same && i < fresh->n; i++)
        same = fresh->nodes[i].type == hGraphExec->nodes[i].type;
    resultInfo->result = same ? CU_GRAPH_EXEC_UPDATE_SUCCESS : CU_GRAPH_EXEC_UPDATE_ERROR;
    if (!same)
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    for (size_t i = 0; i < fresh->n; i++)
        if (fresh->nodes[i].type == CU_GRAPH_NODE_TYPE_KERNEL) {
            hGraphExec->nodes[i].func = fresh->nodes[i].func;
            hGraphExec->nodes[i].params = fresh->nodes[i].params;
        }
    return CUDA_SUCCESS;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static size_t kernels_of(const struct exec_node *nodes, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += nodes[i].type == CU_GRAPH_NODE_TYPE_KERNEL;
    return k;
}

/* When a wait node starts holding and when it opens, in CLOCK_REALTIME ms (the shell's `date
 * +%s%3N`), for tests that time it against what they do to other processes
 * (tests/graphs/graph_chaos.sh). */
static void say_wait(const char *what, size_t kernels_done, size_t kernels)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "fake_cuda: graph wait %s at %lld ms after %zu of %zu kernel nodes\n", what,
            (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, kernels_done, kernels);
}

/* A wait node: until the word passes (GEQ, wrap-around), polled every millisecond. */
static void run_wait(const struct exec_node *n, size_t kernels_done, size_t kernels)
{
    pthread_mutex_lock(&life_mu);
    struct registration *reg = registration_of((uintptr_t)n->addr, 8);
    bool registered = reg && reg->alive;
    pthread_mutex_unlock(&life_mu);
    if (!registered) {
        atomic_fetch_add(&stale_uses, 1);
        fprintf(stderr, "fake_cuda: error: a graph waits on unregistered memory at %p\n",
                (void *)(uintptr_t)n->addr);
        return;
    }
    long held = 0;
    while ((int64_t)(atomic_load((_Atomic uint64_t *)(uintptr_t)n->addr) - n->value) < 0) {
        if (held == 60000) {
            fprintf(stderr, "fake_cuda: error: a graph wait held for a minute\n");
            break;
        }
        if (held == 0) {
            atomic_fetch_add(&waits_holding, 1);
            say_wait("holding", kernels_done, kernels);
        }
        sleep_ms(1);
        held++;
    }
    if (held) {
        say_wait("opened", kernels_done, kernels);
        atomic_fetch_sub(&waits_holding, 1);
        atomic_fetch_add(&waits_held, 1);
        fprintf(stderr, "fake_cuda: graph wait held %ld ms after %zu of %zu kernel nodes\n", held,
                kernels_done, kernels);
    }
}

/* The nodes of a launch: a copy of its executable graph's taken when it was launched, since a
 * change to an executable graph affects only its later launches. */
static void run_nodes(const struct exec_node *nodes, size_t count)
{
    size_t kernels = kernels_of(nodes, count), done = 0;
    for (size_t i = 0; i < count; i++) {
        const struct exec_node *n = &nodes[i];
        switch (n->type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
            if (n->enabled)
                ((fake_kernel)(void *)n->func)(n->params);
            done++;
            break;
        case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
            run_wait(n, done, kernels);
            break;
        case CU_GRAPH_NODE_TYPE_GRAPH:
            run_nodes(n->child->nodes, n->child->n);
            break;
        default:
            break;
        }
    }
}

/* The kernel nodes of the last launch that ran (fake_cuda_graph_last_run). */
#define TRACE_MAX 4096
static pthread_mutex_t trace_mu = PTHREAD_MUTEX_INITIALIZER;
static CUfunction trace_func[TRACE_MAX];
static bool trace_after_wait[TRACE_MAX];
static int trace_n;

EXPORT int fake_cuda_graph_last_run(CUfunction *funcs, int *after_wait, int max);
EXPORT int fake_cuda_graph_last_run(CUfunction *funcs, int *after_wait, int max)
{
    pthread_mutex_lock(&trace_mu);
    int n = trace_n < max ? trace_n : max;
    for (int i = 0; i < n; i++) {
        funcs[i] = trace_func[i];
        after_wait[i] = trace_after_wait[i];
    }
    pthread_mutex_unlock(&trace_mu);
    return n;
}

/* A launch's nodes, then its kernel nodes as the last launch's. */
static void run_launch(const struct exec_node *nodes, size_t count)
{
    run_nodes(nodes, count);
    pthread_mutex_lock(&trace_mu);
    trace_n = 0;
    for (size_t i = 0; i < count && trace_n < TRACE_MAX; i++)
        if (nodes[i].type == CU_GRAPH_NODE_TYPE_KERNEL) {
            trace_func[trace_n] = nodes[i].func;
            trace_after_wait[trace_n++] = nodes[i].after_wait;
        }
    pthread_mutex_unlock(&trace_mu);
}

struct run {
    CUgraphExec x;
    struct progress *progress, after; /* after: only its afters (cuStreamWaitEvent) */
    uint64_t seq, order; /* its place on its stream, and among its executable graph's launches */
    struct exec_node *nodes; /* as they were at the launch */
};

static void *run_async(void *arg)
{
    struct run *r = arg;
    pthread_mutex_lock(&async_mu);
    while (r->progress->done + 1 < r->seq || r->x->order.done + 1 < r->order ||
           !afters_done(&r->after))
        pthread_cond_wait(&async_cv, &async_mu);
    pthread_mutex_unlock(&async_mu);
    run_launch(r->nodes, r->x->n);
    pthread_mutex_lock(&async_mu);
    r->progress->done = r->seq;
    r->x->order.done = r->order;
    async_pending--;
    pthread_cond_broadcast(&async_cv);
    pthread_mutex_unlock(&async_mu);
    free(r->nodes);
    free(r);
    return NULL;
}

/* FAKE_CUDA_GATED_LAUNCH_FAILS: whether x has a batch memory operation node. */
static bool gated_launch_fails(CUgraphExec x)
{
    if (!getenv("FAKE_CUDA_GATED_LAUNCH_FAILS"))
        return false;
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)
            return true;
    return false;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    if (!exec_ok(hGraphExec))
        return CUDA_ERROR_INVALID_VALUE;
    if (gated_launch_fails(hGraphExec))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!stream_ctx(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    if (hGraphExec->token || (!special(hStream) && hStream->capturing))
        return CUDA_SUCCESS; /* into a capture: recorded there, not run */
    if (special(hStream)) {
        pthread_mutex_lock(&async_mu);
        while (hGraphExec->order.done < hGraphExec->order.launched)
            pthread_cond_wait(&async_cv, &async_mu);
        pthread_mutex_unlock(&async_mu);
        run_launch(hGraphExec->nodes, hGraphExec->n);
        return CUDA_SUCCESS;
    }
    struct run *r = malloc(sizeof *r);
    struct exec_node *nodes = malloc((hGraphExec->n + 1) * sizeof *nodes);
    if (!r || !nodes) {
        free(r);
        free(nodes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(nodes, hGraphExec->nodes, hGraphExec->n * sizeof *nodes);
    pthread_mutex_lock(&async_mu);
    *r = (struct run){hGraphExec,
                      hStream->progress,
                      *hStream->progress,
                      ++hStream->progress->launched,
                      ++hGraphExec->order.launched,
                      nodes};
    hStream->progress->afters = 0; /* later launches of the stream follow this one */
    async_pending++;
    pthread_mutex_unlock(&async_mu);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, run_async, r) != 0) {
        pthread_attr_destroy(&attr);
        pthread_mutex_lock(&async_mu);
        hStream->progress->launched--;
        hStream->progress->afters = r->after.afters;
        memcpy(hStream->progress->after, r->after.after, sizeof r->after.after);
        hGraphExec->order.launched--;
        async_pending--;
        pthread_mutex_unlock(&async_mu);
        free(r);
        free(nodes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_attr_destroy(&attr);
    return CUDA_SUCCESS;
}

/* Nothing to upload: a check of its arguments. */
EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    GRAPH_CALL();
    NEED_CONTEXT();
    if (!exec_ok(hGraphExec))
        return CUDA_ERROR_INVALID_VALUE;
    if (gated_launch_fails(hGraphExec))
        return CUDA_ERROR_OUT_OF_MEMORY;
    return stream_ctx(hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Each thread's stream capture mode (cuThreadExchangeStreamCaptureMode), and how many event
 * queries were made in relaxed mode and in another: tests read the counts with
 * fake_cuda_event_queries. In global mode (every thread's default) the real driver prohibits
 * "potentially unsafe" calls while any thread captures in global mode, and a prohibited call
 * invalidates the capture; queries of a shim's own thread must therefore be in relaxed mode. */
static _Thread_local CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static atomic_int queries_relaxed, queries_other;

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = capture_mode;
    capture_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

EXPORT void fake_cuda_event_queries(int *relaxed, int *other);
EXPORT void fake_cuda_event_queries(int *relaxed, int *other)
{
    *relaxed = atomic_load(&queries_relaxed);
    *other = atomic_load(&queries_other);
}

/* Documented without a context requirement: the watcher queries from a thread without one. */
EXPORT CUresult cuEventQuery(CUevent hEvent)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    atomic_fetch_add(
        capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED ? &queries_relaxed : &queries_other, 1);
    CUresult err;
    if (!event_ok(hEvent, &err))
        return err;
    pthread_mutex_lock(&async_mu);
    bool done = !hEvent->progress || hEvent->progress->done >= hEvent->until;
    pthread_mutex_unlock(&async_mu);
    return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    CUresult err;
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!event_ok(hEvent, &err))
        return err;
    pthread_mutex_lock(&async_mu);
    while (hEvent->progress && hEvent->progress->done < hEvent->until)
        pthread_cond_wait(&async_cv, &async_mu);
    pthread_mutex_unlock(&async_mu);
    return cuEventQuery(hEvent);
}

EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
    if (!atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult err;
    if (!event_ok(hEvent, &err))
        return err;
    hEvent->magic = 0;
    object_free(hEvent);
    return CUDA_SUCCESS;
}

/* ---- cuGetProcAddress: from a table of this library's own functions, never from dlsym ---- */

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus);

/*
 * The table holds hidden aliases: a plain `(void *)cuLaunchKernel` in a shared object goes
 * through the GOT, so under LD_PRELOAD it would be the shim's wrapper already, and the shim's
 * swapping of the driver's own pointers would go untested. (The library's calls to its own
 * exports, such as cuStreamCreate's to cuStreamCreateWithPriority, stay interposable on
 * purpose: they exercise the shim's re-entrancy guard.)
 */
#define FAKE_PROCS(X)                                                                              \
    X(cuInit)                                                                                      \
    X(cuDriverGetVersion)                                                                          \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuDevicePrimaryCtxRelease_v2)                                                                \
    X(cuDevicePrimaryCtxReset_v2)                                                                  \
    X(cuDevicePrimaryCtxGetState)                                                                  \
    X(cuCtxCreate_v4)                                                                              \
    X(cuCtxDestroy_v2)                                                                             \
    X(cuDeviceGetPCIBusId)                                                                         \
    X(cuDeviceGetAttribute)                                                                        \
    X(cuDeviceGetExecAffinitySupport)                                                              \
    X(cuCtxGetExecAffinity)                                                                        \
    X(cuCtxSetCurrent)                                                                             \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxPushCurrent_v2)                                                                         \
    X(cuCtxPopCurrent_v2)                                                                          \
    X(cuCtxGetDevice)                                                                              \
    X(cuCtxGetStreamPriorityRange)                                                                 \
    X(cuCtxSynchronize)                                                                            \
    X(cuStreamCreate)                                                                              \
    X(cuStreamCreateWithPriority)                                                                  \
    X(cuStreamDestroy_v2)                                                                          \
    X(cuStreamGetCtx)                                                                              \
    X(cuStreamGetPriority)                                                                         \
    X(cuStreamGetFlags)                                                                            \
    X(cuStreamSynchronize)                                                                         \
    X(cuStreamSynchronize_ptsz)                                                                    \
    X(cuLaunchKernel)                                                                              \
    X(cuLaunchKernel_ptsz)                                                                         \
    X(cuMemcpyHtoDAsync_v2)                                                                        \
    X(cuMemHostRegister_v2)                                                                        \
    X(cuMemHostUnregister)                                                                         \
    X(cuMemHostGetDevicePointer_v2)                                                                \
    X(cuStreamWaitValue64_v2)                                                                      \
    X(cuEventCreate)                                                                               \
    X(cuEventRecord)                                                                               \
    X(cuStreamWaitEvent)                                                                           \
    X(cuStreamIsCapturing)                                                                         \
    X(cuGraphUpload)                                                                               \
    X(cuEventElapsedTime_v2)                                                                       \
    X(cuStreamBeginCapture_v2)                                                                     \
    X(cuStreamEndCapture)                                                                          \
    X(cuEventQuery)                                                                                \
    X(cuThreadExchangeStreamCaptureMode)                                                           \
    X(cuEventSynchronize)                                                                          \
    X(cuEventDestroy_v2)                                                                           \
    X(cuGraphCreate)                                                                               \
    X(cuGraphAddKernelNode_v2)                                                                     \
    X(cuGraphInstantiateWithFlags)                                                                 \
    X(cuGraphLaunch)                                                                               \
    X(cuGraphExecDestroy)                                                                          \
    X(cuGetProcAddress_v2)

#define LOCAL_ALIAS(name)                                                                          \
    extern __typeof__(name) local_##name __attribute__((alias(#name), visibility("hidden")));
FAKE_PROCS(LOCAL_ALIAS)
#undef LOCAL_ALIAS

#define TABLE_ENTRY(name) {#name, (void *)local_##name},
static const struct {
    const char *name;
    void *fn;
} table[] = {FAKE_PROCS(TABLE_ENTRY)};
#undef TABLE_ENTRY

static void *own(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].fn;
    return NULL;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    static const char *const pt_suffixes[] = {"_v2_ptsz", "_ptsz", "_v2_ptds", "_ptds"};
    static const char *const suffixes[] = {"_v2", ""};
    char name[256];
    void *fn = NULL;
    if (!symbol || !pfn || strlen(symbol) > 200)
        return CUDA_ERROR_INVALID_VALUE;
    if (cudaVersion < 2000)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
        for (size_t i = 0; !fn && i < sizeof pt_suffixes / sizeof pt_suffixes[0]; i++) {
            strcpy(name, symbol);
            strcat(name, pt_suffixes[i]);
            fn = own(name);
        }
    for (size_t i = 0; !fn && i < sizeof suffixes / sizeof suffixes[0]; i++) {
        strcpy(name, symbol);
        strcat(name, suffixes[i]);
        fn = own(name);
    }
    *pfn = fn;
    if (symbolStatus)
        *symbolStatus = fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
