/*
 * sim_launch.c - kernels: registration, modules, and every launch entry point.
 *
 * All entry points funnel into launch(), which validates like ROCm (an address not registered in
 * this runtime instance: hipErrorInvalidDeviceFunction; a zero dimension:
 * hipErrorInvalidConfiguration), copies the arguments, and submits a kernel command. The legacy
 * sequence (hipConfigureCall, hipSetupArgument, hipLaunchByPtr) keeps a per-thread stack of
 * configurations in front of it. A kernel
 * runs on a compute slot (sim_slots.c) and holds it for its simulated duration.
 */
#include "sim_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIM_MAX_KERNELS 256

struct sim_kernel {
    char name[64];
    hipsimKernelFn fn;
    int nargs;
    size_t size[HIPSIM_MAX_ARGS];
    size_t offset[HIPSIM_MAX_ARGS];
    size_t total;
};

static struct sim_kernel kernels[SIM_MAX_KERNELS];
static int nkernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;

const void *hipsimRegisterKernel(const char *name, hipsimKernelFn fn, int nargs,
                                 const size_t *arg_sizes)
{
    if (!name || !fn || nargs < 0 || nargs > HIPSIM_MAX_ARGS || (nargs && !arg_sizes) ||
        strlen(name) >= sizeof kernels[0].name)
        return NULL;
    const struct sim_kernel *found = NULL;
    pthread_mutex_lock(&kernels_lock);
    for (int i = 0; i < nkernels && !found; i++)
        if (strcmp(kernels[i].name, name) == 0)
            found = &kernels[i];
    if (!found && nkernels < SIM_MAX_KERNELS) {
        struct sim_kernel *k = &kernels[nkernels];
        strcpy(k->name, name);
        k->fn = fn;
        k->nargs = nargs;
        for (int i = 0; i < nargs; i++) {
            size_t align = arg_sizes[i] >= 8 ? 8 : arg_sizes[i] ? arg_sizes[i] : 1;
            k->total = (k->total + align - 1) / align * align;
            k->size[i] = arg_sizes[i];
            k->offset[i] = k->total;
            k->total += arg_sizes[i];
        }
        found = k;
        nkernels++; /* published last: lookups read nkernels under the lock */
    }
    pthread_mutex_unlock(&kernels_lock);
    return found;
}

static const struct sim_kernel *kernel_lookup(const void *handle)
{
    const struct sim_kernel *k = handle;
    pthread_mutex_lock(&kernels_lock);
    bool ok = k >= kernels && k < kernels + nkernels &&
              (uintptr_t)((const char *)k - (const char *)kernels) % sizeof *k == 0;
    pthread_mutex_unlock(&kernels_lock);
    return ok ? k : NULL;
}

static const struct sim_kernel *kernel_by_name(const char *name)
{
    const struct sim_kernel *found = NULL;
    pthread_mutex_lock(&kernels_lock);
    for (int i = 0; i < nkernels && !found; i++)
        if (strcmp(kernels[i].name, name) == 0)
            found = &kernels[i];
    pthread_mutex_unlock(&kernels_lock);
    return found;
}

/* ---- modules: any image loads; functions are the registered kernels, found by name ---- */

struct ihipModule_t {
    int unused;
};

hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    sim_init();
    if (!module || !image)
        return sim_ret(hipErrorInvalidValue);
    struct ihipModule_t *m = calloc(1, sizeof *m);
    if (!m)
        return sim_ret(hipErrorOutOfMemory);
    sim_lock();
    int rc = sim_handle_add(m, SIM_H_MODULE);
    sim_unlock();
    if (rc < 0) {
        free(m);
        return sim_ret(hipErrorOutOfMemory);
    }
    *module = m;
    return sim_ret(hipSuccess);
}

hipError_t hipModuleUnload(hipModule_t module)
{
    sim_init();
    sim_lock();
    bool ok = sim_handle_valid(module, SIM_H_MODULE);
    if (ok)
        sim_handle_remove(module);
    sim_unlock();
    if (!ok)
        return sim_ret(hipErrorInvalidHandle);
    free(module);
    return sim_ret(hipSuccess);
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname)
{
    sim_init();
    if (!function || !kname)
        return sim_ret(hipErrorInvalidValue);
    sim_lock();
    bool ok = sim_handle_valid(module, SIM_H_MODULE);
    sim_unlock();
    if (!ok)
        return sim_ret(hipErrorInvalidHandle);
    const struct sim_kernel *k = kernel_by_name(kname);
    if (!k)
        return sim_ret(hipErrorNotFound);
    *function = (hipFunction_t)(uintptr_t)k;
    return sim_ret(hipSuccess);
}

/* ---- launching ---- */

struct launch_args {
    const void *function;
    dim3 grid, block;
    size_t shared_mem;
    hipStream_t stream;
    bool spt;
    void **args;  /* one pointer per argument */
    void **extra; /* HIP_LAUNCH_PARAM_* list */
    hipEvent_t start, stop;
};

static atomic_uint launch_count; /* SIM_FAULT_DROP_LAUNCH */

static hipError_t copy_args(struct sim_cmd *c, const struct sim_kernel *k, void **args,
                            void **extra)
{
    if (extra) {
        const void *buf = NULL;
        size_t size = 0;
        for (void **p = extra; *p != HIP_LAUNCH_PARAM_END; p += 2) {
            if (*p == HIP_LAUNCH_PARAM_BUFFER_POINTER)
                buf = p[1];
            else if (*p == HIP_LAUNCH_PARAM_BUFFER_SIZE)
                size = *(const size_t *)p[1];
            else
                return hipErrorInvalidValue;
        }
        if (!buf && size)
            return hipErrorInvalidValue;
        c->u.kernel.packed = true;
        c->u.kernel.arglen = size;
        if (size) {
            c->u.kernel.argbuf = malloc(size);
            if (!c->u.kernel.argbuf)
                return hipErrorOutOfMemory;
            memcpy(c->u.kernel.argbuf, buf, size);
        }
        return hipSuccess;
    }
    if (k->nargs && !args)
        return hipErrorInvalidValue;
    c->u.kernel.arglen = k->total;
    if (k->total) {
        c->u.kernel.argbuf = malloc(k->total);
        if (!c->u.kernel.argbuf)
            return hipErrorOutOfMemory;
    }
    for (int i = 0; i < k->nargs; i++)
        memcpy(c->u.kernel.argbuf + k->offset[i], args[i], k->size[i]);
    return hipSuccess;
}

/* hipsimBeforeNextLaunch's hook, taken by the first launch after it is set. */
static struct before_launch {
    void (*fn)(void *);
    void *arg;
} * _Atomic before_next_launch;

void hipsimBeforeNextLaunch(void (*fn)(void *), void *arg)
{
    static struct before_launch hook;
    hook = (struct before_launch){fn, arg};
    atomic_store(&before_next_launch, fn ? &hook : NULL);
}

hipError_t sim_kernel_cmd(const void *function, dim3 grid, dim3 block, size_t shared_mem,
                          void **args, void **extra, struct sim_cmd **out)
{
    *out = NULL;
    const struct sim_kernel *k = kernel_lookup(function);
    if (!k)
        return hipErrorInvalidDeviceFunction;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return hipErrorInvalidConfiguration;
    struct sim_cmd *c = sim_cmd_new(SIM_CMD_KERNEL);
    if (!c)
        return hipErrorOutOfMemory;
    c->u.kernel.kernel = k;
    c->u.kernel.grid = grid;
    c->u.kernel.block = block;
    c->u.kernel.shared_mem = shared_mem;
    hipError_t err = copy_args(c, k, args, extra);
    if (err != hipSuccess) {
        sim_cmd_unref(c);
        return err;
    }
    *out = c;
    return hipSuccess;
}

static hipError_t launch(const struct launch_args *a)
{
    struct before_launch *hook = atomic_exchange(&before_next_launch, NULL);
    if (hook)
        hook->fn(hook->arg);
    sim_init();
    struct sim_cmd *c;
    hipError_t err =
        sim_kernel_cmd(a->function, a->grid, a->block, a->shared_mem, a->args, a->extra, &c);
    if (err != hipSuccess)
        return sim_ret(err);
    if (sim.cfg.fault == SIM_FAULT_DROP_LAUNCH && atomic_fetch_add(&launch_count, 1) % 97 == 96) {
        sim_cmd_unref(c);
        return sim_ret(hipSuccess);
    }

    sim_lock();
    struct ihipStream_t *s;
    err = sim_stream_resolve(a->stream, a->spt, &s);
    if (err == hipSuccess && ((a->start && !sim_handle_valid(a->start, SIM_H_EVENT)) ||
                              (a->stop && !sim_handle_valid(a->stop, SIM_H_EVENT))))
        err = hipErrorInvalidHandle;
    if (err == hipSuccess && a->start)
        err = sim_event_record(a->start, s);
    if (err == hipSuccess) {
        err = sim_submit(s, c);
        c = NULL;
    }
    if (err == hipSuccess && a->stop)
        err = sim_event_record(a->stop, s);
    sim_unlock();
    sim_cmd_unref(c);
    return sim_ret(err);
}

static dim3 dim(uint32_t x, uint32_t y, uint32_t z)
{
    dim3 d = {x, y, z};
    return d;
}

hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
                           void **args, size_t sharedMemBytes, hipStream_t stream)
{
    return launch(&(struct launch_args){.function = function_address,
                                        .grid = numBlocks,
                                        .block = dimBlocks,
                                        .args = args,
                                        .shared_mem = sharedMemBytes,
                                        .stream = stream});
}

hipError_t hipLaunchKernel_spt(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
                               void **args, size_t sharedMemBytes, hipStream_t stream)
{
    return launch(&(struct launch_args){.function = function_address,
                                        .grid = numBlocks,
                                        .block = dimBlocks,
                                        .args = args,
                                        .shared_mem = sharedMemBytes,
                                        .stream = stream,
                                        .spt = true});
}

hipError_t hipExtLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
                              void **args, size_t sharedMemBytes, hipStream_t stream,
                              hipEvent_t startEvent, hipEvent_t stopEvent, int flags)
{
    SIM_UNUSED(flags);
    return launch(&(struct launch_args){.function = function_address,
                                        .grid = numBlocks,
                                        .block = dimBlocks,
                                        .args = args,
                                        .shared_mem = sharedMemBytes,
                                        .stream = stream,
                                        .start = startEvent,
                                        .stop = stopEvent});
}

hipError_t hipLaunchCooperativeKernel(const void *f, dim3 gridDim, dim3 blockDimX,
                                      void **kernelParams, unsigned int sharedMemBytes,
                                      hipStream_t stream)
{
    return launch(&(struct launch_args){.function = f,
                                        .grid = gridDim,
                                        .block = blockDimX,
                                        .args = kernelParams,
                                        .shared_mem = sharedMemBytes,
                                        .stream = stream});
}

hipError_t hipLaunchCooperativeKernel_spt(const void *f, dim3 gridDim, dim3 blockDim,
                                          void **kernelParams, uint32_t sharedMemBytes,
                                          hipStream_t hStream)
{
    return launch(&(struct launch_args){.function = f,
                                        .grid = gridDim,
                                        .block = blockDim,
                                        .args = kernelParams,
                                        .shared_mem = sharedMemBytes,
                                        .stream = hStream,
                                        .spt = true});
}

hipError_t hipLaunchKernelExC(const hipLaunchConfig_t *config, const void *fPtr, void **args)
{
    if (!config) {
        sim_init();
        return sim_ret(hipErrorInvalidValue);
    }
    return launch(&(struct launch_args){.function = fPtr,
                                        .grid = config->gridDim,
                                        .block = config->blockDim,
                                        .args = args,
                                        .shared_mem = config->dynamicSmemBytes,
                                        .stream = config->stream});
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX,
                                 unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, hipStream_t stream,
                                 void **kernelParams, void **extra)
{
    return launch(&(struct launch_args){.function = f,
                                        .grid = dim(gridDimX, gridDimY, gridDimZ),
                                        .block = dim(blockDimX, blockDimY, blockDimZ),
                                        .shared_mem = sharedMemBytes,
                                        .stream = stream,
                                        .args = kernelParams,
                                        .extra = extra});
}

/* Global work sizes are in work items; the grid is global / local in each dimension. */
static hipError_t ext_module_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                    uint32_t lx, uint32_t ly, uint32_t lz, size_t shared_mem,
                                    hipStream_t stream, void **params, void **extra,
                                    hipEvent_t start, hipEvent_t stop)
{
    if (!lx || !ly || !lz) {
        sim_init();
        return sim_ret(hipErrorInvalidConfiguration);
    }
    return launch(&(struct launch_args){.function = f,
                                        .grid = dim(gx / lx, gy / ly, gz / lz),
                                        .block = dim(lx, ly, lz),
                                        .shared_mem = shared_mem,
                                        .stream = stream,
                                        .args = params,
                                        .extra = extra,
                                        .start = start,
                                        .stop = stop});
}

hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
                                    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
                                    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes,
                                    hipStream_t hStream, void **kernelParams, void **extra,
                                    hipEvent_t startEvent, hipEvent_t stopEvent, uint32_t flags)
{
    SIM_UNUSED(flags);
    return ext_module_launch(f, globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ, localWorkSizeX,
                             localWorkSizeY, localWorkSizeZ, sharedMemBytes, hStream, kernelParams,
                             extra, startEvent, stopEvent);
}

hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
                                    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
                                    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes,
                                    hipStream_t hStream, void **kernelParams, void **extra,
                                    hipEvent_t startEvent, hipEvent_t stopEvent)
{
    return ext_module_launch(f, globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ, localWorkSizeX,
                             localWorkSizeY, localWorkSizeZ, sharedMemBytes, hStream, kernelParams,
                             extra, startEvent, stopEvent);
}

/* The C++ names of hip_ext.h, which ROCm exports beside the C ones. */
hipError_t sim_ext_module_launch_kernel_cxx(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                            uint32_t, uint32_t, size_t, hipStream_t, void **,
                                            void **, hipEvent_t, hipEvent_t,
                                            uint32_t) __asm__(HIP_EXT_MODULE_LAUNCH_KERNEL_CXX);
hipError_t sim_ext_module_launch_kernel_cxx(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                            uint32_t lx, uint32_t ly, uint32_t lz,
                                            size_t shared_mem, hipStream_t stream, void **params,
                                            void **extra, hipEvent_t start, hipEvent_t stop,
                                            uint32_t flags)
{
    SIM_UNUSED(flags);
    return ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared_mem, stream, params, extra, start,
                             stop);
}

hipError_t sim_hcc_module_launch_kernel_cxx(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                            uint32_t, uint32_t, size_t, hipStream_t, void **,
                                            void **, hipEvent_t,
                                            hipEvent_t) __asm__(HIP_HCC_MODULE_LAUNCH_KERNEL_CXX);
hipError_t sim_hcc_module_launch_kernel_cxx(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                            uint32_t lx, uint32_t ly, uint32_t lz,
                                            size_t shared_mem, hipStream_t stream, void **params,
                                            void **extra, hipEvent_t start, hipEvent_t stop)
{
    return ext_module_launch(f, gx, gy, gz, lx, ly, lz, shared_mem, stream, params, extra, start,
                             stop);
}

/* ROCm 5's hipLaunchKernelGGL back end (C++ name, returns nothing; errors go to the last error). */
void sim_launch_kernel_ggl_impl(uintptr_t, const dim3 *, const dim3 *, uint32_t, hipStream_t,
                                void **) __asm__(HIP_LAUNCH_KERNEL_GGL_IMPL_CXX);
void sim_launch_kernel_ggl_impl(uintptr_t function, const dim3 *grid, const dim3 *block,
                                uint32_t shared_mem, hipStream_t stream, void **args)
{
    launch(&(struct launch_args){.function = (const void *)function,
                                 .grid = *grid,
                                 .block = *block,
                                 .args = args,
                                 .shared_mem = shared_mem,
                                 .stream = stream});
}

/*
 * ---- the legacy launch sequence: hipConfigureCall, hipSetupArgument, hipLaunchByPtr ----
 *
 * As in ROCm/clr (hip_platform.cpp), each thread has a stack of launch configurations:
 * hipConfigureCall pushes one (it validates nothing, not even the stream), hipSetupArgument
 * copies an argument into the latest one at its offset, and hipLaunchByPtr pops the latest one
 * before anything else, so a launch that then fails has consumed it too, and launches the
 * kernel with the arguments as one buffer (HIP_LAUNCH_PARAM_BUFFER_POINTER). ROCm pops an empty
 * stack (undefined behaviour); the simulator returns hipErrorMissingConfiguration there, the
 * error HIP defines for a launch that was not configured. ROCm's stack and argument buffers grow
 * until memory runs out; the simulator's hold SIM_CONFIG_DEPTH configurations (one more:
 * hipErrorOutOfMemory, nothing pushed) of SIM_CONFIG_ARG_BYTES bytes each (hipErrorInvalidValue).
 */
#define SIM_CONFIG_DEPTH 8
#define SIM_CONFIG_ARG_BYTES 256

struct sim_configuration {
    dim3 grid, block;
    size_t shared_mem;
    hipStream_t stream;
    size_t arglen;
    unsigned char args[SIM_CONFIG_ARG_BYTES];
};

static _Thread_local struct sim_configuration configurations[SIM_CONFIG_DEPTH];
static _Thread_local int nconfigurations;

hipError_t hipConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem, hipStream_t stream)
{
    sim_init();
    if (nconfigurations == SIM_CONFIG_DEPTH)
        return sim_ret(hipErrorOutOfMemory);
    struct sim_configuration *c = &configurations[nconfigurations++];
    c->grid = gridDim;
    c->block = blockDim;
    c->shared_mem = sharedMem;
    c->stream = stream;
    c->arglen = 0;
    return sim_ret(hipSuccess);
}

hipError_t hipSetupArgument(const void *arg, size_t size, size_t offset)
{
    sim_init();
    if (!nconfigurations)
        return sim_ret(hipErrorMissingConfiguration);
    if ((size && !arg) || offset > SIM_CONFIG_ARG_BYTES || size > SIM_CONFIG_ARG_BYTES - offset)
        return sim_ret(hipErrorInvalidValue);
    struct sim_configuration *c = &configurations[nconfigurations - 1];
    if (size)
        memcpy(c->args + offset, arg, size);
    if (c->arglen < offset + size)
        c->arglen = offset + size; /* gaps stay as they were, like ROCm's resized vector */
    return sim_ret(hipSuccess);
}

hipError_t hipLaunchByPtr(const void *func)
{
    sim_init();
    if (!nconfigurations)
        return sim_ret(hipErrorMissingConfiguration);
    struct sim_configuration c = configurations[--nconfigurations];
    if (!kernel_lookup(func))
        return sim_ret(hipErrorInvalidDeviceFunction);
    /* ROCm checks the configuration itself here, with its own error. */
    if (!c.grid.x || !c.grid.y || !c.grid.z || !c.block.x || !c.block.y || !c.block.z)
        return sim_ret(hipErrorInvalidValue);
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, c.args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                     &c.arglen, HIP_LAUNCH_PARAM_END};
    return launch(&(struct launch_args){.function = func,
                                        .grid = c.grid,
                                        .block = c.block,
                                        .shared_mem = c.shared_mem,
                                        .stream = c.stream,
                                        .extra = extra});
}

/* ---- execution on the simulated device ---- */

static void sleep_until(uint64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
                          .tv_nsec = (long)(deadline_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        continue;
}

/* hipsimLateNs: the process's own counter, or the one hipsimCountLatenessIn named. */
static uint64_t own_lateness;
static uint64_t *_Atomic lateness = &own_lateness;

uint64_t hipsimLateNs(void)
{
    return __atomic_load_n(atomic_load(&lateness), __ATOMIC_RELAXED);
}

void hipsimCountLatenessIn(uint64_t *counter)
{
    atomic_store(&lateness, counter ? counter : &own_lateness);
}

void sim_kernel_run(struct sim_cmd *c)
{
    const struct sim_kernel *k = c->u.kernel.kernel;
    struct sim_slots *slots = sim.dev[c->stream->device].slots;
    void *args[HIPSIM_MAX_ARGS];
    hipsimLaunch l = {
        .grid = c->u.kernel.grid,
        .block = c->u.kernel.block,
        .shared_mem_bytes = c->u.kernel.shared_mem,
        .args = args,
        .device = c->stream->device,
        .stream_id = c->stream->id,
    };
    if (c->u.kernel.packed) {
        l.args = NULL;
        l.arg_buffer = c->u.kernel.argbuf;
        l.arg_buffer_size = c->u.kernel.arglen;
    } else {
        for (int i = 0; i < k->nargs; i++)
            args[i] = c->u.kernel.argbuf + k->offset[i];
    }

    /* The kernel's blocks fill the slots its stream may use, one each, as a kernel's work
     * groups spread over the CUs of its queue's mask. Its duration is the kernel function's on
     * as many slots as it could fill on the whole device; on fewer it takes proportionally
     * longer (work groups in waves, as a fluid). */
    uint64_t blocks = (uint64_t)l.grid.x * l.grid.y * l.grid.z;
    uint64_t mask = sim_stream_slots(c->stream);
    unsigned nslots = sim_slots_count(slots), usable = (unsigned)__builtin_popcountll(mask);
    unsigned full = blocks < nslots ? (unsigned)blocks : nslots;
    struct sim_slot_request req = {
        .priority =
            sim.cfg.fault == SIM_FAULT_PRIORITY_IGNORED ? 0 : sim_hw_queue_priority(c->hw_queue),
        .mask = mask,
        .width = blocks < usable ? (unsigned)blocks : usable,
    };
    uint64_t held;
    uint64_t ticket = sim_slots_acquire(slots, &req, &held);
    c->start_ns = sim_now_ns();
    uint64_t duration = k->fn(&l) * full / (unsigned)__builtin_popcountll(held);
    sleep_until(c->start_ns + duration);
    c->end_ns = sim_now_ns();
    if (c->end_ns > c->start_ns + duration)
        __atomic_fetch_add(atomic_load(&lateness), c->end_ns - c->start_ns - duration,
                           __ATOMIC_RELAXED);
    sim_slots_release(slots, ticket, held);
    sim_trace_record(c, k->name, l.tag);
}
