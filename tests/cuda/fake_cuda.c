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
struct CUstream_st {
    unsigned magic;
    CUcontext ctx;
    unsigned generation;
    unsigned flags;
    int priority;
    bool capturing;
};
struct CUevent_st {
    unsigned magic;
    CUcontext ctx;
    unsigned generation;
    unsigned flags;
    uint64_t at; /* the device clock when it was last recorded (fake_cuda_advance_ns) */
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
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    NEED_CONTEXT();
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = object_new(sizeof *s);
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
                              false};
    *phStream = s;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    NEED_CONTEXT();
    if (special(hStream) || hStream->magic != STREAM_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!lives(hStream->ctx, hStream->generation))
        return stale("stream", hStream);
    hStream->magic = 0;
    object_free(hStream);
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
    return stream_ctx(hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    return cuStreamSynchronize(hStream);
}

typedef void (*fake_kernel)(void **);

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
    *e = (struct CUevent_st){EVENT_MAGIC, current(), atomic_load(&current()->generation), Flags, 0};
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

/* Stream capture, as far as the shim follows it: a stream captures between begin and end (the
 * graph is not simulated: end gives none). */
EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    NEED_CONTEXT();
    if (special(hStream) || !stream_ctx(hStream) || hStream->capturing ||
        mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    hStream->capturing = true;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    NEED_CONTEXT();
    if (special(hStream) || !stream_ctx(hStream) || !hStream->capturing || !phGraph)
        return CUDA_ERROR_ILLEGAL_STATE;
    hStream->capturing = false;
    *phGraph = NULL;
    return CUDA_SUCCESS;
}

/* Graphs are not simulated: instantiation hands out a token, and an upload only checks its
 * stream, which is all the shim's accounting needs. */
EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    NEED_CONTEXT();
    if (!phGraphExec || !hGraph || !instantiateParams)
        return CUDA_ERROR_INVALID_VALUE;
    if ((instantiateParams->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) &&
        !stream_ctx(instantiateParams->hUploadStream))
        return CUDA_ERROR_INVALID_HANDLE;
    *phGraphExec = (CUgraphExec)(void *)hGraph;
    instantiateParams->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    return CUDA_SUCCESS;
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
    return event_ok(hEvent, &err) ? CUDA_SUCCESS : err;
}

EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
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
    X(cuEventElapsedTime_v2)                                                                       \
    X(cuStreamBeginCapture_v2)                                                                     \
    X(cuStreamEndCapture)                                                                          \
    X(cuEventQuery)                                                                                \
    X(cuThreadExchangeStreamCaptureMode)                                                           \
    X(cuEventSynchronize)                                                                          \
    X(cuEventDestroy_v2)                                                                           \
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
