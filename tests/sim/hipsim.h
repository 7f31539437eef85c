/*
 * hipsim.h - the simulated HIP device's own API, for test programs.
 *
 * The simulator (libamdhip64.so.6 built from tests/sim) implements the HIP runtime API on host
 * threads. Programs use the ordinary HIP API for everything an application does; this header adds
 * only what a real GPU gets from the compiler or from hardware counters:
 *   - kernels: a kernel is a host function registered by name with the sizes of its arguments
 *     (so launches can copy arguments, as the real runtime does). The handle returned is what
 *     `hipLaunchKernel` and friends take as `function_address`; `hipModuleGetFunction` finds the
 *     same kernel by name in any module loaded with `hipModuleLoadData`. A handle that was not
 *     registered in *this* runtime instance fails with hipErrorInvalidDeviceFunction, exactly the
 *     symptom of launching through a second copy of the runtime.
 *   - the kernel's simulated duration: the kernel function returns it in nanoseconds, as it would
 *     take on as many compute slots as its blocks could fill; the device holds the slots it got
 *     for that long, longer on fewer (the work itself runs first). docs/simulator.md has the
 *     dispatcher's rules (queue priorities, CU masks).
 *   - a trace of executed kernels with start and end timestamps (CLOCK_MONOTONIC, so timestamps
 *     of different processes on one machine compare).
 *
 * Configuration (environment, read once at first use):
 *   HIPSIM_DEVICES=N        number of devices (1..16, default 1)
 *   HIPSIM_HW_QUEUES=N      hardware queues per stream priority per device, which streams of
 *                           that priority share round-robin (1..64, default 4)
 *   HIPSIM_COMPUTE_SLOTS=N  compute slots (CUs) per device: a kernel takes as many as its blocks
 *                           and its stream's CU mask allow (1..64, default 1: one kernel at once)
 *   HIPSIM_SHARED=NAME      share the compute slots of each device with every process that sets the
 *                           same NAME, without '/' (a segment /dev/shm/hipsim-UID-NAME-DEV), so
 *                           processes contend for one simulated device
 *   HIPSIM_TRACE=PATH       append one line per executed kernel to PATH:
 *                           "pid device stream_id hwq name tag start_ns end_ns submit_ns waited_ns"
 *   HIPSIM_FAULT=NAME       break one documented semantic on purpose (docs/simulator.md), used
 *                           to show that the conformance suite detects it
 * For the tests of gpuprio's gates in graphs (docs/simulator.md, "Capture and graphs"):
 *   HIPSIM_GRAPH_SAY=1      a graph's wait that holds says so on stderr: "hipsim: graph wait
 *                           holding at T ms after K of M kernel nodes", "... opened at T ms ...",
 *                           "hipsim: graph wait held N ms after K of M kernel nodes" (T: the
 *                           wall clock, CLOCK_REALTIME; K of M: the launch's kernel nodes before
 *                           the wait, and all of them)
 *   HIPSIM_GRAPH_CLONE_FAILS=1   hipGraphClone fails (hipErrorOutOfMemory)
 *   HIPSIM_GRAPH_MEMOP_FAILS=1   hipGraphAddBatchMemOpNode fails (hipErrorNotSupported)
 *   HIPSIM_GATED_LAUNCH_FAILS=1  launching or uploading an executable graph with a node that
 *                           hipGraphAddBatchMemOpNode made fails (hipErrorOutOfMemory)
 *   HIPSIM_STREAM_ID=0      hipStreamGetId returns hipErrorNotSupported, as HIP 6.4 has none
 *   HIPSIM_STREAM_REUSE=1   a new stream takes the memory, so the handle, of a destroyed one whose
 *                           work is done, the latest first
 */
#ifndef HIPSIM_H
#define HIPSIM_H

#include <stddef.h>
#include <stdint.h>

#include "hip_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HIPSIM_MAX_ARGS 16

/* What a kernel sees when it runs. */
typedef struct hipsimLaunch {
    dim3 grid;
    dim3 block;
    size_t shared_mem_bytes;
    void **args;            /* one pointer per declared argument, to a private copy */
    const void *arg_buffer; /* set instead of args for launches through HIP_LAUNCH_PARAM_* extra */
    size_t arg_buffer_size;
    int device;
    uint64_t stream_id; /* hipsimStreamId() of the stream it runs on */
    uint64_t tag;       /* the kernel may set it; it appears in the trace */
} hipsimLaunch;

/* Runs the kernel's work and returns its simulated duration in nanoseconds. */
typedef uint64_t (*hipsimKernelFn)(hipsimLaunch *launch);

/*
 * Registers a kernel. arg_sizes lists the size of each argument (nargs <= HIPSIM_MAX_ARGS).
 * Registering the same name again returns the first handle. Returns NULL on bad arguments.
 */
const void *hipsimRegisterKernel(const char *name, hipsimKernelFn fn, int nargs,
                                 const size_t *arg_sizes);

/* Calls fn(arg) once, on the launching thread, when the next kernel launch reaches the runtime
 * and before the runtime takes it: what fn has another thread do (begin a capture, say) happens
 * between gpuprio's admission of that launch and the launch itself. */
void hipsimBeforeNextLaunch(void (*fn)(void *arg), void *arg);

/* Calls fn(arg) once, on the calling thread, when the next call that ROCm/clr deems unsafe during
 * a stream capture (hipMalloc, hipHostRegister...: docs/simulator.md) reaches the runtime, before
 * the runtime checks the thread's capture mode: what fn has another thread do (begin a capture)
 * happens while a library's own thread is about to make that call. */
void hipsimBeforeUnsafeCall(void (*fn)(void *arg), void *arg);

/* A stable id for a stream handle as seen from the calling thread (0 on a bad handle). */
uint64_t hipsimStreamId(hipStream_t stream);

/* The hardware queue a stream is mapped to (-1 on a bad handle). */
int hipsimStreamHwQueue(hipStream_t stream);

typedef struct hipsimTraceEntry {
    char name[32];
    int device;
    int hw_queue;
    uint64_t stream_id;
    uint64_t tag;
    uint64_t start_ns; /* CLOCK_MONOTONIC */
    uint64_t end_ns;
    uint64_t submit_ns; /* when the runtime queued the launch */
    uint64_t waited_ns; /* when the last value wait before it on its hardware queue began the
                           read that let it through (0: none): its gate (gpuprio's gates are
                           such waits) passed between then and its start */
} hipsimTraceEntry;

/* Starts (or restarts, clearing it) the in-process kernel trace; holds up to capacity entries. */
int hipsimTraceStart(size_t capacity);

/* Copies up to max entries in completion order; returns how many were recorded in total. */
size_t hipsimTraceGet(hipsimTraceEntry *out, size_t max);

/* CLOCK_MONOTONIC in nanoseconds, the clock of the trace. */
uint64_t hipsimNowNs(void);

/* How much later than their simulated durations this process's kernels ended, in total (ns):
 * the host woke the threads that run them late (a busy or virtualised host), so the device ran
 * slower than it says. Benchmarks on the simulator use it to tell such stalls from contention. */
uint64_t hipsimLateNs(void);

/* Counts that lateness in *counter from now on (NULL: in the process's own counter again), for
 * example in memory that the processes sharing a device map, so that each sees the others'.
 * hipsimLateNs reads the counter in use; it is added to atomically. */
void hipsimCountLatenessIn(uint64_t *counter);

/* Events recorded in this process so far (hipEventRecord and its variants, successful ones):
 * gpuprio's completion markers among them. */
uint64_t hipsimEventRecords(void);

/* Uses of something hipDeviceReset destroyed (a stream, an event, registered host memory): each
 * is also reported on stderr ("hipsim: error: ... used after hipDeviceReset destroyed it"). On a
 * real GPU such a use touches freed memory. */
uint64_t hipsimStaleUses(void);

/* Value waits put on streams in this process so far (hipStreamWaitValue32/64, successful ones):
 * gpuprio's Level-2 gates among them. */
uint64_t hipsimStreamWaits(void);

/* Calls of the graph entry point name (hipGraphClone...) so far in the process; NULL: of every
 * hipGraph* entry point. Tests compare them with and without gpuprio. */
uint64_t hipsimGraphCalls(const char *name);

/* Executable graphs instantiated and not yet destroyed. */
int hipsimGraphExecsAlive(void);

/* Waits of graphs (batch memory operation nodes) holding now, and that held and opened so far. */
int hipsimGraphWaitsHolding(void);
uint64_t hipsimGraphWaitsHeld(void);

#ifdef __cplusplus
}
#endif

#endif /* HIPSIM_H */
