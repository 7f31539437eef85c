/*
 * graph_gates.c - a HIP program that replays a graph of many short kernels on the simulated
 * device (tests/sim: a launch queues the graph's nodes on its stream, and the value waits of
 * batch memory operation nodes really wait), for tests/graphs/graph_gates.sh and graph_chaos.sh
 * (hip): what it prints must not change under gpuprio, whatever gpuprio does to its graph launches
 * (docs/design.md, "Gates inside graphs"). The HIP counterpart of tests/cuda/graph_gates.c, with
 * HIP's differences: nothing orders launches of one executable graph on two streams but the streams
 * (clr), so where it launches on two streams the program orders them itself with an event, as a
 * HIP application must; and HIP has no conditional nor device-updatable nodes.
 *
 *   graph_gates CASE   builds a chain of KERNELS kernel nodes (each acc = acc * 31 + i, of 3 ms on
 *                      the device), instantiates it (hipGraphInstantiate; GRAPH_INSTANTIATE=flags:
 *                      hipGraphInstantiateWithFlags, AutoFreeOnLaunch; =params:
 *                      hipGraphInstantiateWithParams, Upload on the first stream), launches it once
 *                      and waits (so that its time is learned), then LAUNCHES more times on the
 *                      same stream, and prints acc after each launch, how many kernels ran, and how
 *                      many executable graphs are alive at the end. CASE:
 *     gated            as above; with GRAPH_GO=FIFO (a neighbour), kernel 2 of the first of those
 *                      launches waits until the host releases it, and the host, once that launch
 *                      returned, sends a line through FIFO (the high-priority neighbour's cue to
 *                      burst) and releases it once the neighbour said through GRAPH_ACK that it
 *                      bursts: the neighbour's first launch, which closed this program's gates,
 *                      then waits behind that kernel, so the rest of the launch runs while the gate
 *                      is closed however late the host woke either process (waits bounded: 20 s,
 *                      then it goes on, and a test that needs a wait node to hold fails)
 *     ungated          as gated, the neighbour exits after its burst: before its second launch the
 *                      program waits until GRAPH_ACK's writer is gone (the neighbour exited), and
 *                      300 ms more
 *     other_device     as gated, printing the thread's errors as errors_kept does, launches 2 to 4
 *                      on a stream of device 1 (HIPSIM_DEVICES=2), whereas the graph was
 *                      instantiated on device 0 (an event of device 0 cannot be recorded there)
 *     errors_kept      as ungated, printing after each launch hipExtGetLastError and
 *                      hipGetLastError (in that order), with an error left pending (hipDeviceGet of
 *                      a device that does not exist) before launches 1, 2 and 4
 *     mem_nodes, child, device_launch
 *                      the graph also has a memory allocation node, or a child graph of two
 *                      kernels, or is instantiated for device launch
 *                      (hipGraphInstantiateWithParams, hipGraphInstantiateFlagDeviceLaunch)
 *     changed          after the second launch, hipGraphExecKernelNodeSetParams gives kernel 5
 *                      another argument
 *     update           after the second launch, hipGraphExecUpdate from a graph whose kernel 7 has
 *                      another argument
 *     disabled         after the second launch, hipGraphNodeSetEnabled turns kernel 9 off
 *     app_memop        the graph ends with a batch memory operation node of the application's
 *                      own (a 64-bit write to a host word, printed after each launch); after the
 *                      second launch hipGraphExecBatchMemOpNodeSetParams gives it another value
 *                      (both calls looked up with hipGetProcAddress, so that the program also
 *                      links against the no-memop simulator, libamdhip64.so.5)
 *     destroy          the last launch is destroyed (hipGraphExecDestroy) at once, while it runs
 *     capture          the first launch after the learning one is made while another stream
 *                      captures
 *     changed_other    the first launch after the learning one on the first stream, not waited
 *                      for (an event recorded behind it), then kernel 5 changed and launched on the
 *                      other stream, which first waits for that event
 *     changed_held     as changed_other, and kernel 2 of that first launch waits until the host
 *                      releases it, which it does only once the launch on the other stream
 *                      returned: a library that blocks the host on the first launch there
 *                      deadlocks (kernel 2 gives up after 5 s, and the program says so)
 *     changed_capture  as changed_other, the graph first launched into a capture of the other
 *                      stream (which runs nothing) before it is changed
 *     changed_upload   as changed_other, the changed graph uploaded on the first stream before
 *                      its launch on the other
 *     switch_other     the first launch after the learning one on the first stream while the
 *                      other stream captures, not waited for (an event behind it); the rest on
 *                      the other stream, the first of them after a wait for that event
 *     legacy_changed   changed_other with the legacy null stream, named hipStreamLegacy, as the
 *                      first stream (the program records its own event there as 0: clr takes an
 *                      event recorded on hipStreamLegacy for a stream object when a stream waits
 *                      on it, which the simulator reports)
 *     branches         as gated, the graph two chains side by side (kernel i after kernel
 *                      i - 2, which clr runs on two streams, the second on one of the device the
 *                      graph was instantiated on), printing each chain's hash (the order across
 *                      them is free) and how many kernels ran on each device;
 *                      with GRAPH_DEVICE=1 (and the neighbour there too) the whole program runs on
 *                      device 1, where gpuprio must instantiate its gated copy too
 *     capture_build    as gated, and a thread of the program begins a global-mode capture of a
 *                      third stream during the first launch after the learning one, at the first
 *                      call in it that a capture forbids (hipsimBeforeUnsafeCall: under gpuprio,
 *                      its registration of host memory on its own thread as it builds the gated
 *                      copy; without gpuprio none, and the capture begins after the launch), then
 *                      puts a kernel into it and ends it, printing the results: gpuprio's thread,
 *                      in relaxed mode, must not invalidate it
 *   With GRAPH_PRINT_CALLS=all it also prints how many graph calls the simulator counted
 *   (hipsimGraphCalls: the option off, gpuprio must add none), or with a list of entry point
 *   names, each one's count. On stderr: how many graph waits held, and how many
 *   hipGraphExecBatchMemOpNodeSetParams calls the process made (gpuprio's retargets of its wait
 *   nodes among them).
 *
 *   graph_gates spt    learned through hipGraphLaunch_spt(exec, 0) on the main thread's
 *                      per-thread stream; a thread launches it there through _spt (its own
 *                      per-thread stream: another stream), then through hipStreamPerThread; then
 *                      the main thread three times more, the last through _spt with
 *                      hipStreamLegacy, each launch waited for; then into a capture of that
 *                      stream the same way, printing the captured graph's node count
 *   graph_gates reused_first, reused_changed: a stream destroyed and another created at its
 *                      address (see reused_case)
 *   graph_gates high FIFO [exit|hold]: the neighbour (see high); replay, thread_exit and
 *                      stream_gone are graph_chaos.sh's (see chaos_case)
 *
 * What the CUDA program says and does alike, the neighbour's side of the FIFOs among it, is
 * tests/graphs/graph_prog.c. A failed call prints FATAL and exits 1.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuprio.h"
#include "graph_prog.h"
#include "hipsim.h"

/* Newer than the 5.2.3 headers: the prototypes and types as upstream declares them. */
#include "../../src/shim/hip/hip_compat_shim.h"

#define MUST(call)                                                                                 \
    do {                                                                                           \
        hipError_t must_r = (call);                                                                \
        if (must_r != hipSuccess) {                                                                \
            printf("FATAL: %s -> %s\n", #call, hipGetErrorName(must_r));                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Read by main only after a synchronization: the kernels run on the simulator's threads. With
 * branches, each chain has its hash (the order across them is not the graph's to keep). */
static unsigned long long acc, chain_acc[2];
static bool branches;
static unsigned ran;
static unsigned ran_on[2]; /* kernels that ran on device 0 and on device 1 */
/* Kernel 2 (index 3) waits until the host clears hold (a kernel polling host memory), for at
 * most hold_ms; held says it started waiting, stuck that it gave up (the host never got there). */
static atomic_bool hold, held, stuck;
static atomic_int hold_ms;
static const void *step_kernel;

/* acc = acc * 31 + index, then the device is busy for us microseconds. */
static uint64_t step(hipsimLaunch *l)
{
    unsigned i = *(unsigned *)l->args[0];
    long us = *(long *)l->args[1];
    for (int ms = 0; i == 3 && atomic_load(&hold); ms++) {
        atomic_store(&held, true);
        if (ms >= atomic_load(&hold_ms)) {
            atomic_store(&stuck, true);
            break;
        }
        sleep_us(1000);
    }
    if (branches)
        chain_acc[i % 2] = chain_acc[i % 2] * 31 + i;
    else
        acc = acc * 31 + i;
    ran++;
    if (l->device == 0 || l->device == 1)
        ran_on[l->device]++;
    return (uint64_t)us * 1000u;
}

static void hold_kernel(int ms)
{
    atomic_store(&hold_ms, ms);
    atomic_store(&held, false);
    atomic_store(&hold, true);
}

static hipKernelNodeParams kernel(void **p)
{
    hipKernelNodeParams k = {.blockDim = {1, 1, 1},
                             .func = (void *)(uintptr_t)step_kernel,
                             .gridDim = {1, 1, 1},
                             .kernelParams = p};
    return k;
}

static hipError_t launch_step(hipStream_t s, void **p)
{
    dim3 one = {1, 1, 1};
    return hipLaunchKernel(step_kernel, one, one, p, 0, s);
}

/* A kernel that changes nothing this program prints. */
static const void *idle_kernel;

static uint64_t idle_step(hipsimLaunch *l)
{
    (void)l;
    return 1000;
}

/* Under gpuprio (its API found), until it puts a gate on s (a value wait before a kernel of
 * idle_kernel's; at most 10 s, a hang guard): the neighbour on the board is then known to this
 * process, and so a graph launched next on s is held by gates, whatever the load delayed. */
static void until_gated(hipStream_t s)
{
    dim3 one = {1, 1, 1};
    if (!dlsym(RTLD_DEFAULT, "gpuprio_stream_stats"))
        return;
    for (int tries = 0; tries < 1000; tries++) {
        uint64_t waits = hipsimStreamWaits();
        MUST(hipLaunchKernel(idle_kernel, one, one, NULL, 0, s));
        MUST(hipStreamSynchronize(s));
        if (hipsimStreamWaits() > waits)
            return;
        sleep_us(10000);
    }
}

/* branches: the graph is two chains side by side (kernel i after kernel i - 2), which clr runs
 * on two streams, the second on a stream of the device the graph was instantiated on. */

/* The chain of kernels; node[i] is kernel i. */
static hipGraph_t chain(hipGraphNode_t *node, int swap_at, void **swapped)
{
    hipGraph_t g;
    int step = branches ? 2 : 1;
    MUST(hipGraphCreate(&g, 0));
    for (int i = 0; i < KERNELS; i++) {
        hipKernelNodeParams k = kernel(i == swap_at ? swapped : params[i]);
        bool after = i >= step;
        MUST(hipGraphAddKernelNode(&node[i], g, after ? &node[i - step] : NULL, after ? 1 : 0, &k));
    }
    return g;
}

/* GRAPH_DEVICE=N: the program, and its neighbour, on device N (HIPSIM_DEVICES above N). */
static void use_device(void)
{
    const char *d = getenv("GRAPH_DEVICE");
    if (d)
        MUST(hipSetDevice(atoi(d)));
}

/* As an application instantiates it: GRAPH_INSTANTIATE picks the form; flags (device launch)
 * need hipGraphInstantiateWithParams, the only form that takes them (clr). */
static hipGraphExec_t instantiate(hipGraph_t g, unsigned long long flags, hipStream_t upload_on)
{
    const char *how = getenv("GRAPH_INSTANTIATE");
    hipGraphExec_t exec;
    if (flags || (how && strcmp(how, "params") == 0)) {
        hipGraphInstantiateParams p = {.flags = flags ? flags : hipGraphInstantiateFlagUpload,
                                       .uploadStream = upload_on};
        MUST(hipGraphInstantiateWithParams(&exec, g, &p));
    } else if (how && strcmp(how, "flags") == 0) {
        MUST(hipGraphInstantiateWithFlags(&exec, g, hipGraphInstantiateFlagAutoFreeOnLaunch));
    } else {
        MUST(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
    }
    return exec;
}

/* Launched once on s and waited for, so that its GPU time is learned. Under gpuprio, its drain
 * returns once the watcher counted the launch complete, which it does after learning its time. */
static void learn(hipGraphExec_t exec, hipStream_t s, bool spt)
{
    MUST(spt ? hipGraphLaunch_spt(exec, 0) : hipGraphLaunch(exec, s));
    MUST(hipStreamSynchronize(s));
    drain(s);
}

static void print_launch(int n)
{
    if (branches)
        printf("launch %d: chains %016llx %016llx, %u kernels\n", n, chain_acc[0], chain_acc[1],
               ran);
    else
        printf("launch %d: acc %016llx, %u kernels\n", n, acc, ran);
}

/* ---- the neighbour, and what passes between it and this program ---- */

/* The neighbour's side of GRAPH_ACK: "bursting" once its first burst launch returned (its queue
 * active, so this program's gates closed), where this program listens (nobody reading: ENXIO, and
 * nothing said). The FIFO is left open: its end of file, at the neighbour's exit, is how this
 * program learns that the neighbour is gone. */
static void ack(void)
{
    static bool said;
    const char *path = getenv("GRAPH_ACK");
    if (said || !path)
        return;
    said = true;
    int fd = open(path, O_WRONLY | O_NONBLOCK);
    if (fd >= 0 && write(fd, "bursting\n", 9) != 9)
        fprintf(stderr, "graph_gates: cannot write to %s\n", path);
}

/* This program's side: opened before the cue (without waiting for a writer), so that the
 * neighbour's open finds a reader. */
static int ack_fd = -1;
static bool acked;

static void ack_listen(void)
{
    const char *path = getenv("GRAPH_ACK");
    if (path && ack_fd < 0)
        ack_fd = open(path, O_RDONLY | O_NONBLOCK);
}

/* Waits until the neighbour said it bursts, or with gone until it is gone too (its end of the
 * FIFO closed), at most 20 s each: a bound that turns a hang into a failure elsewhere (no wait
 * node held, the neighbour not gone), never into a timed assertion. */
static void ack_wait(bool gone)
{
    if (ack_fd < 0)
        return;
    for (int ms = 0; ms < 20000; ms++) {
        char text[64];
        ssize_t n = read(ack_fd, text, sizeof text);
        if (n > 0)
            acked = true;
        if (acked && !gone)
            return;
        if (acked && n == 0) { /* no writer left: the neighbour exited */
            close(ack_fd);
            ack_fd = -1;
            return;
        }
        if (n <= 0)
            sleep_us(1000);
    }
    fprintf(stderr, "graph_gates: no word from the neighbour within 20 s (%s)\n",
            gone ? "gone" : "bursting");
}

/* Cueing the neighbour (GRAPH_GO) after a launch: kernel 2 of that launch is held (hold_for_cue,
 * before it) until the neighbour bursts and, under gpuprio, this program's queue is suspended
 * (cue_and_release), so that the launch runs on while the neighbour has closed this program's
 * gates, however late the host woke either process. */
static void hold_for_cue(void)
{
    if (getenv("GRAPH_GO"))
        hold_kernel(30000); /* released after ack_wait's bound at the latest */
}

/* Under gpuprio (its API found), the stats of s's queue: 0 and *out, or -1. */
static int queue_stats(hipStream_t s, struct gpuprio_queue_stats *out)
{
    int (*stats)(void *, struct gpuprio_queue_stats *) =
        (int (*)(void *, struct gpuprio_queue_stats *))dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    return stats && stats(s, out) == 0 ? 0 : -1;
}

/* The neighbour is cued once the launch reached kernel 2 (at most 10 s, a hang guard): a gate
 * gpuprio put on s before the launch has then passed, and cannot hold the whole launch once the
 * burst closes it, however late the simulator's threads ran on a loaded machine. Kernel 2 is
 * released once the neighbour bursts and, under gpuprio, its scheduler suspended the queue of s
 * since the cue (its count of suspensions grew; at most 10 s): then its gates were closed, and the
 * launch's next wait node holds. */
static void cue_and_release(hipStream_t s)
{
    for (int ms = 0; ms < 10000 && !atomic_load(&held); ms++)
        sleep_us(1000);
    struct gpuprio_queue_stats before, now;
    bool known = queue_stats(s, &before) == 0;
    ack_listen();
    cue(getenv("GRAPH_GO"));
    ack_wait(false);
    for (int ms = 0; known && ms < 10000; ms++) {
        if (queue_stats(s, &now) != 0 || now.suspensions > before.suspensions)
            break;
        sleep_us(1000);
    }
    atomic_store(&hold, false);
}

/* The neighbour's stream and its kernels' arguments (index 0, 2 ms). */
static hipStream_t high_s;
static unsigned high_i;
static long high_us = 2000;
static void *high_p[2] = {&high_i, &high_us};

/* Five kernels of the neighbour's, waited for; once they are launched the first time, it says
 * through GRAPH_ACK that it bursts. */
static void high_five(void)
{
    for (int j = 0; j < 5; j++)
        MUST(launch_step(high_s, high_p));
    ack();
    MUST(hipStreamSynchronize(high_s));
}

/* The neighbour's burst without hold: kernels of 2 ms back to back until the low program says
 * through GRAPH_STOP that a wait node of the launch it cued the burst after held, or that the
 * launch ended (tell_stop; at most 20 s, a hang guard), so that the burst covers that launch's
 * next wait node however late either process runs; 100 kernels where GRAPH_STOP is unset. */
static void burst_until_stopped(void)
{
    const char *path = getenv("GRAPH_STOP");
    int fd = path ? open(path, O_RDONLY | O_NONBLOCK) : -1;
    char line[16];
    for (int k = 0; fd >= 0 ? k < 10000 && read(fd, line, sizeof line) <= 0 : k < 100; k += 5)
        high_five();
    if (fd >= 0)
        close(fd);
}

/* The low program's side: the neighbour may stop bursting (nobody reading: the neighbour is not
 * bursting, and nothing is said). */
static void tell_stop(void)
{
    const char *path = getenv("GRAPH_STOP");
    int fd = path ? open(path, O_WRONLY | O_NONBLOCK) : -1;
    if (fd >= 0) {
        if (write(fd, "stop\n", 5) != 5)
            fprintf(stderr, "graph_gates: cannot write to %s\n", path);
        close(fd);
    }
}

/* After cue_and_release on s: once a wait node holds (or held), or the launch on s ended
 * without one holding, at most 10 s, the neighbour is told to stop. */
static void stop_once_held(hipStream_t s)
{
    for (int ms = 0; ms < 10000 && !hipsimGraphWaitsHolding() && !hipsimGraphWaitsHeld() &&
                     hipStreamQuery(s) == hipErrorNotReady;
         ms++)
        sleep_us(1000);
    tell_stop();
}

/* graph_gates high FIFO [exit|hold]: joins at high priority (a kernel on a stream of its own),
 * then is the neighbour (graph_prog.h) with burst_until_stopped; it says through GRAPH_ACK that it
 * bursts (high_five). */
static void high(const char *fifo, enum high_mode mode)
{
    use_device();
    MUST(hipStreamCreate(&high_s));
    MUST(launch_step(high_s, high_p));
    MUST(hipStreamSynchronize(high_s));
    if (neighbour(fifo, mode, high_five, burst_until_stopped))
        MUST(hipStreamDestroy(high_s));
}

/* ---- graph_chaos.sh's cases: neighbours that die, stop and exit around gated graphs ---- */

static hipGraphExec_t chaos_exec;
static hipStream_t chaos_stream;
/* Recorded behind the first thread's launches, which the second thread's stream waits for: HIP
 * orders launches of one executable graph on two streams by nothing else. */
static hipEvent_t chaos_done;

/* chaos_case's and reused_case's set-up: a stream in *s (and one in *other unless NULL), and the
 * chain (in *g, node[i] kernel i) instantiated. */
static hipGraphExec_t chain_exec(hipStream_t *s, hipStream_t *other, hipGraphNode_t *node,
                                 hipGraph_t *g)
{
    MUST(hipStreamCreate(s));
    if (other)
        MUST(hipStreamCreate(other));
    chain_params();
    *g = chain(node, -1, NULL);
    return instantiate(*g, 0, *s);
}

/* The first thread's launches are made (none held on the host: the neighbour is idle); then,
 * with a neighbour (GRAPH_GO), it is cued (kernel 2 of the first launch held until it bursts:
 * hold_for_cue), and the thread waits until a wait node holds them (at most 10 s), so that it
 * goes on with its launches held on the device, and says so on stderr; then it records chaos_done
 * behind them. */
static void launch_then_cue(hipStream_t s)
{
    if (getenv("GRAPH_GO"))
        until_gated(s);
    hold_for_cue();
    for (int n = 0; n < FIRST_THREAD_LAUNCHES; n++)
        MUST(hipGraphLaunch(chaos_exec, s));
    if (getenv("GRAPH_GO")) {
        cue_and_release(s);
        wait_until_holding(hipsimGraphWaitsHolding);
        tell_stop();
    }
    MUST(hipEventRecord(chaos_done, s));
}

/* thread_exit's first thread: launches on the main thread's stream, not waited for. */
static void *launch_and_exit(void *arg)
{
    (void)arg;
    launch_then_cue(chaos_stream);
    return NULL;
}

/* stream_gone's first thread: learns on a stream of its own, launches more on it and destroys
 * it, not waiting for them. */
static void *launch_destroy_and_exit(void *arg)
{
    hipStream_t own;
    (void)arg;
    MUST(hipStreamCreate(&own));
    learn(chaos_exec, own, false);
    launch_then_cue(own);
    MUST(hipStreamDestroy(own));
    return NULL;
}

/* The second thread: three launches on a stream of its own, after the first thread's, each waited
 * for. */
static void *launch_after(void *arg)
{
    hipStream_t own;
    (void)arg;
    MUST(hipStreamCreate(&own));
    MUST(hipStreamWaitEvent(own, chaos_done, 0));
    for (int n = 0; n < 3; n++) {
        MUST(hipGraphLaunch(chaos_exec, own));
        MUST(hipStreamSynchronize(own));
        printf("second thread, launch %d: acc %016llx, %u kernels\n", n, acc, ran);
    }
    MUST(hipStreamDestroy(own));
    return NULL;
}

/*
 * replay        the chain learned, then CHAOS_LAUNCHES launches on one stream, each waited for
 *               and printed (on stderr, when each launch call was made and returned); GRAPH_GO is
 *               cued after the first, whose kernel 2 is held until the neighbour bursts
 *               (hold_for_cue; graph_chaos.sh kills or stops the neighbour, or this program,
 *               meanwhile);
 * thread_exit   learned on the main thread's stream; a thread launches it there 4 times, cues
 *               GRAPH_GO, and once a wait node holds them records an event behind them and exits
 *               without waiting; then another thread launches it on a stream of its own, which
 *               first waits for that event;
 * stream_gone   as thread_exit, but the first thread learns and launches on a stream of its own,
 *               which it destroys with the launches in flight.
 */
static int chaos_case(const char *what)
{
    bool thread_exit = strcmp(what, "thread_exit") == 0;
    bool stream_gone = strcmp(what, "stream_gone") == 0;
    hipGraphNode_t node[KERNELS];
    hipGraph_t g;
    MUST(hipEventCreateWithFlags(&chaos_done, hipEventDisableTiming));
    chaos_exec = chain_exec(&chaos_stream, NULL, node, &g);
    if (!stream_gone) {
        learn(chaos_exec, chaos_stream, false);
        printf("learned: acc %016llx, %u kernels\n", acc, ran);
    }
    if (thread_exit || stream_gone) {
        if (!run_thread(thread_exit ? launch_and_exit : launch_destroy_and_exit, NULL) ||
            !run_thread(launch_after, NULL))
            return 1;
    } else {
        for (int n = 1; n <= CHAOS_LAUNCHES; n++) {
            if (n == 1 && getenv("GRAPH_GO"))
                until_gated(chaos_stream);
            if (n == 1)
                hold_for_cue();
            say_launch(n, "called");
            MUST(hipGraphLaunch(chaos_exec, chaos_stream));
            say_launch(n, "returned");
            if (n == 1 && getenv("GRAPH_GO"))
                cue_and_release(chaos_stream);
            MUST(hipStreamSynchronize(chaos_stream));
            printf("launch %d: acc %016llx, %u kernels\n", n, acc, ran);
        }
    }
    MUST(hipGraphExecDestroy(chaos_exec));
    MUST(hipGraphDestroy(g));
    printf("executable graphs alive: %d\n", hipsimGraphExecsAlive());
    fprintf(stderr, "graph_gates: %llu graph waits held\n",
            (unsigned long long)hipsimGraphWaitsHeld());
    MUST(hipStreamDestroy(chaos_stream));
    MUST(hipEventDestroy(chaos_done));
    return 0;
}

/*
 * reused_first    learned on a stream s; launched on s while another stream captures (left
 *                 whole: the application's own executable graph runs) and not waited for; s
 *                 destroyed at once, the device synchronized (the simulator, as an allocator,
 *                 hands a destroyed stream's memory out again only once its work is done:
 *                 HIPSIM_STREAM_REUSE=1) and a stream created at its address (with an id of its
 *                 own, unless HIPSIM_STREAM_ID=0: HIP 6.4 has no hipStreamGetId), on which it is
 *                 launched 3 times, each waited for and printed
 * reused_changed  learned on s, launched on s (under gpuprio, its gated copy) and not waited for;
 *                 s destroyed and a stream created at its address as above; kernel 5 changed,
 *                 then launched there 3 times, as above
 */
static int reused_case(bool changed)
{
    hipStream_t s, again, other;
    hipGraphNode_t node[KERNELS];
    hipGraph_t g;
    hipGraphExec_t exec = chain_exec(&s, &other, node, &g);
    learn(exec, s, false);
    printf("learned: acc %016llx, %u kernels\n", acc, ran);
    if (!changed)
        MUST(hipStreamBeginCapture(other, hipStreamCaptureModeRelaxed));
    MUST(hipGraphLaunch(exec, s));
    if (!changed) {
        hipGraph_t captured;
        MUST(hipStreamEndCapture(other, &captured));
        MUST(hipGraphDestroy(captured));
    }
    MUST(hipStreamDestroy(s));
    MUST(hipDeviceSynchronize());
    MUST(hipStreamCreate(&again));
    if (again != s) {
        printf("FATAL: the simulator did not create the stream at the destroyed one's address\n");
        return 1;
    }
    if (changed) {
        hipKernelNodeParams k = kernel(other_params);
        MUST(hipGraphExecKernelNodeSetParams(exec, node[5], &k));
    }
    for (int n = 2; n <= LAUNCHES; n++) {
        MUST(hipGraphLaunch(exec, again));
        MUST(hipStreamSynchronize(again));
        print_launch(n);
    }
    MUST(hipGraphExecDestroy(exec));
    MUST(hipGraphDestroy(g));
    printf("executable graphs alive: %d\n", hipsimGraphExecsAlive());
    fprintf(stderr, "graph_gates: %llu graph waits held\n",
            (unsigned long long)hipsimGraphWaitsHeld());
    MUST(hipStreamDestroy(again));
    MUST(hipStreamDestroy(other));
    return 0;
}

/* ---- spt: the per-thread stream, named 0 in the _spt form and hipStreamPerThread ---- */

static hipGraphExec_t spt_exec;

/* Another thread's per-thread stream: through _spt (0), then through hipStreamPerThread. */
static void *spt_thread(void *arg)
{
    (void)arg;
    MUST(hipGraphLaunch_spt(spt_exec, 0));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    print_launch(1);
    MUST(hipGraphLaunch(spt_exec, hipStreamPerThread));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    print_launch(2);
    return NULL;
}

static int spt_case(void)
{
    hipGraphNode_t node[KERNELS];
    chain_params();
    hipGraph_t g = chain(node, -1, NULL);
    spt_exec = instantiate(g, 0, hipStreamPerThread);
    learn(spt_exec, hipStreamPerThread, true);
    print_launch(0);
    if (!run_thread(spt_thread, NULL))
        return 1;
    MUST(hipGraphLaunch_spt(spt_exec, 0));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    print_launch(3);
    MUST(hipGraphLaunch(spt_exec, hipStreamPerThread));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    print_launch(4);
    /* hipStreamLegacy in the _spt form: the same per-thread stream (clr's
     * PER_THREAD_DEFAULT_STREAM). */
    MUST(hipGraphLaunch_spt(spt_exec, hipStreamLegacy));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    print_launch(5);
    /* Into a capture of that stream, begun and launched the same way and ended through
     * hipStreamPerThread: the application's own graph is what the capture takes (gpuprio must
     * ask the per-thread stream whether it captures, not the legacy one). */
    MUST(hipStreamBeginCapture_spt(hipStreamLegacy, hipStreamCaptureModeGlobal));
    MUST(hipGraphLaunch_spt(spt_exec, hipStreamLegacy));
    hipGraph_t captured;
    size_t nodes = 0;
    MUST(hipStreamEndCapture(hipStreamPerThread, &captured));
    MUST(hipGraphGetNodes(captured, NULL, &nodes));
    MUST(hipGraphDestroy(captured));
    printf("captured: %zu nodes\n", nodes);
    MUST(hipGraphExecDestroy(spt_exec));
    MUST(hipGraphDestroy(g));
    printf("executable graphs alive: %d\n", hipsimGraphExecsAlive());
    fprintf(stderr, "graph_gates: %llu graph waits held\n",
            (unsigned long long)hipsimGraphWaitsHeld());
    return 0;
}

/* ---- capture_build: another thread of the application captures while gpuprio builds ---- */

/* The capturing thread: on request 1 it begins a global-mode capture of its stream, on request 2
 * it puts a kernel into it and ends it, saying each result. Global mode is the default, and the
 * one the calls the runtime deems unsafe during a capture break from any thread (clr); the
 * capture is begun on a thread of its own, which alone may end it. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int asked, done;
    hipStream_t stream;
    hipError_t began, ended;
    size_t nodes;
} capturer = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL, hipSuccess, hipSuccess, 0};

static void capturer_until(int *what, int value)
{
    while (*what < value)
        pthread_cond_wait(&capturer.cv, &capturer.mu);
}

static void capturer_step(int done)
{
    capturer.done = done;
    pthread_cond_broadcast(&capturer.cv);
    if (done < 2)
        capturer_until(&capturer.asked, done + 1);
}

static void *capturer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&capturer.mu);
    capturer_until(&capturer.asked, 1);
    capturer.began = hipStreamBeginCapture(capturer.stream, hipStreamCaptureModeGlobal);
    capturer_step(1);
    hipGraph_t captured = NULL;
    if (capturer.began == hipSuccess) {
        (void)launch_step(capturer.stream, other_params);
        capturer.ended = hipStreamEndCapture(capturer.stream, &captured);
    }
    if (captured) {
        MUST(hipGraphGetNodes(captured, NULL, &capturer.nodes));
        MUST(hipGraphDestroy(captured));
    }
    capturer_step(2);
    pthread_mutex_unlock(&capturer.mu);
    return NULL;
}

/* Asks the capturing thread for step `step` (1: begin, 2: end) and waits until it took it. */
static void capturer_ask(int step)
{
    pthread_mutex_lock(&capturer.mu);
    if (capturer.asked < step) {
        capturer.asked = step;
        pthread_cond_broadcast(&capturer.cv);
    }
    capturer_until(&capturer.done, step);
    pthread_mutex_unlock(&capturer.mu);
}

/* hipsimBeforeUnsafeCall's hook: the capture begins while a thread, gpuprio's under it, is about
 * to register host memory (the open word, when gpuprio builds the gated copy). */
static bool began_in_unsafe_call;

static void begin_capture_now(void *arg)
{
    (void)arg;
    began_in_unsafe_call = true;
    capturer_ask(1);
}

static void capturer_start(hipStream_t stream)
{
    pthread_t t;
    capturer.stream = stream;
    if (pthread_create(&t, NULL, capturer_main, NULL) != 0 || pthread_detach(t) != 0) {
        printf("FATAL: cannot start the capturing thread\n");
        exit(1);
    }
}

/* After the launch the capture began in (or, without gpuprio, after it): puts a kernel into it
 * and ends it, printing what the application sees. Under gpuprio the capture must have begun
 * inside the launch, else the case tests nothing. */
static void capturer_finish(void)
{
    capturer_ask(1);
    capturer_ask(2);
    printf("capture of the other stream (global mode): begin %s, end %s, %zu nodes\n",
           hipGetErrorName(capturer.began), hipGetErrorName(capturer.ended), capturer.nodes);
    if (dlsym(RTLD_DEFAULT, "gpuprio_stream_stats") && !began_in_unsafe_call)
        printf("FATAL: no call of gpuprio's during the launch was one a capture forbids\n");
}

/* ---- what the main cases share ---- */

/* hipGraphAddBatchMemOpNode and hipGraphExecBatchMemOpNodeSetParams (HIP 6.4), looked up. */
typedef hipError_t (*add_memop_t)(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t,
                                  const hipBatchMemOpNodeParams *);
typedef hipError_t (*exec_set_memop_t)(hipGraphExec_t, hipGraphNode_t,
                                       const hipBatchMemOpNodeParams *);

static void *memop_fn(const char *name)
{
    void *fn = NULL;
    hipDriverProcAddressQueryResult found;
    MUST(hipGetProcAddress(name, &fn, 60400000, 0, &found));
    return fn;
}

/* The context a batch memory operation node needs (HIP 7.2 refuses NULL): deprecated, but the
 * only way to name one. */
static hipCtx_t current_ctx(void)
{
    hipCtx_t ctx = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    MUST(hipCtxGetCurrent(&ctx));
#pragma GCC diagnostic pop
    return ctx;
}

/* app_memop's writes: the node keeps the array by pointer, so they live as long as the process. */
static hipStreamBatchMemOpParams writes[2];

static hipBatchMemOpNodeParams write_params(int which, uint64_t *word, uint64_t value)
{
    memset(&writes[which], 0, sizeof writes[which]);
    writes[which].writeValue.operation = hipStreamMemOpWriteValue64;
    writes[which].writeValue.address = (hipDeviceptr_t)word;
    writes[which].writeValue.value64 = value;
    hipBatchMemOpNodeParams p = {
        .ctx = current_ctx(), .count = 1, .paramArray = &writes[which], .flags = 0};
    return p;
}

/* errors_kept: an error left pending, sticky, by a call gpuprio does not intercept. */
static void leave_error(void)
{
    hipDevice_t d;
    hipError_t e = hipDeviceGet(&d, 1000);
    printf("hipDeviceGet(1000) -> %s, left pending\n", hipGetErrorName(e));
}

/* errors_kept: the launch's result and the thread's error state after it, as the application
 * reads them (the last call's error first, since hipGetLastError clears it too). */
static void print_errors(int n, hipError_t r)
{
    hipError_t last_call = hipExtGetLastError();
    hipError_t last = hipGetLastError();
    printf("launch %d -> %s; hipExtGetLastError %s; hipGetLastError %s\n", n, hipGetErrorName(r),
           hipGetErrorName(last_call), hipGetErrorName(last));
}

/* GRAPH_PRINT_CALLS: "all", or entry point names separated by spaces. */
static void print_calls(void)
{
    const char *what = getenv("GRAPH_PRINT_CALLS");
    if (!what)
        return;
    if (strcmp(what, "all") == 0) {
        printf("graph calls: %llu\n", (unsigned long long)hipsimGraphCalls(NULL));
        return;
    }
    char names[512];
    snprintf(names, sizeof names, "%s", what);
    char *save = NULL;
    for (char *name = strtok_r(names, " ", &save); name; name = strtok_r(NULL, " ", &save))
        printf("graph calls of %s: %llu\n", name, (unsigned long long)hipsimGraphCalls(name));
}

static bool is(const char *what, const char *name)
{
    return strcmp(what, name) == 0;
}

int main(int argc, char **argv)
{
    size_t sizes[2] = {sizeof(unsigned), sizeof(long)};
    step_kernel = hipsimRegisterKernel("step", step, 2, sizes);
    idle_kernel = hipsimRegisterKernel("idle", idle_step, 0, NULL);
    enum high_mode mode;
    if (high_args(argc, argv, &mode)) {
        high(argv[2], mode);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: graph_gates CASE | graph_gates high FIFO [exit|hold]\n");
        return 2;
    }
    const char *what = argv[1];
    if (is(what, "replay") || is(what, "thread_exit") || is(what, "stream_gone"))
        return chaos_case(what);
    if (is(what, "reused_first") || is(what, "reused_changed"))
        return reused_case(is(what, "reused_changed"));
    if (is(what, "spt"))
        return spt_case();
    bool changed_held = is(what, "changed_held");
    bool changed_capture = is(what, "changed_capture");
    bool changed_upload = is(what, "changed_upload");
    /* legacy_changed: changed_other on the legacy null stream, named hipStreamLegacy. */
    bool legacy = is(what, "legacy_changed");
    bool changed_other =
        is(what, "changed_other") || changed_held || changed_capture || changed_upload || legacy;
    bool capture_build = is(what, "capture_build");
    branches = is(what, "branches");
    use_device();
    bool switch_other = is(what, "switch_other");
    bool errors = is(what, "errors_kept");
    bool other_device = is(what, "other_device");
    bool show_errors = errors || other_device;
    bool ungated = is(what, "ungated") || errors;
    bool cued = is(what, "gated") || ungated || other_device || capture_build || branches;
    bool app_memop = is(what, "app_memop");
    hipStream_t s = hipStreamLegacy, other;
    hipEvent_t ran_on_s;
    if (!legacy)
        MUST(hipStreamCreate(&s));
    MUST(hipStreamCreate(&other));
    /* Where the program records ran_on_s: the legacy stream as 0, since clr takes an event
     * recorded on hipStreamLegacy for a stream object at hipStreamWaitEvent (docs/simulator.md). */
    hipStream_t record_on = legacy ? NULL : s;
    hipStream_t captured_other = NULL; /* capture_build: the capturing thread's stream */
    if (capture_build) {
        MUST(hipStreamCreate(&captured_other));
        capturer_start(captured_other);
    }
    MUST(hipEventCreateWithFlags(&ran_on_s, hipEventDisableTiming));
    hipStream_t far = NULL; /* other_device: a stream of device 1 */
    if (other_device) {
        MUST(hipSetDevice(1));
        MUST(hipStreamCreate(&far));
        MUST(hipSetDevice(0));
    }
    chain_params();
    hipGraphNode_t node[KERNELS], extra;
    hipGraph_t g = chain(node, -1, NULL), child = NULL;
    unsigned long long flags = 0;
    uint64_t *word = NULL;
    exec_set_memop_t exec_memop_set = NULL;
    if (is(what, "mem_nodes")) {
        hipMemAllocNodeParams alloc;
        memset(&alloc, 0, sizeof alloc);
        alloc.poolProps.allocType = hipMemAllocationTypePinned;
        alloc.poolProps.location.type = hipMemLocationTypeDevice;
        alloc.poolProps.location.id = 0;
        alloc.bytesize = 64;
        MUST(hipGraphAddMemAllocNode(&extra, g, &node[KERNELS - 1], 1, &alloc));
    } else if (is(what, "child")) {
        hipGraphNode_t inner[2];
        MUST(hipGraphCreate(&child, 0));
        hipKernelNodeParams k = kernel(other_params);
        MUST(hipGraphAddKernelNode(&inner[0], child, NULL, 0, &k));
        MUST(hipGraphAddKernelNode(&inner[1], child, &inner[0], 1, &k));
        MUST(hipGraphAddChildGraphNode(&extra, g, &node[KERNELS - 1], 1, child));
    } else if (is(what, "device_launch")) {
        flags = hipGraphInstantiateFlagDeviceLaunch;
    } else if (app_memop) {
        add_memop_t add = (add_memop_t)memop_fn("hipGraphAddBatchMemOpNode");
        exec_memop_set = (exec_set_memop_t)memop_fn("hipGraphExecBatchMemOpNodeSetParams");
        MUST(hipHostMalloc((void **)&word, sizeof *word, 0));
        *word = 0;
        hipBatchMemOpNodeParams p = write_params(0, word, 0x1111);
        MUST(add(&extra, g, &node[KERNELS - 1], 1, &p));
    } else if (!cued && !is(what, "changed") && !changed_other && !switch_other &&
               !is(what, "update") && !is(what, "disabled") && !is(what, "destroy") &&
               !is(what, "capture")) {
        fprintf(stderr, "graph_gates: unknown case %s\n", what);
        return 2;
    }
    hipGraphExec_t exec = instantiate(g, flags, s);

    hipError_t r = hipGraphLaunch(exec, s);
    if (show_errors)
        print_errors(0, r);
    MUST(r);
    MUST(hipStreamSynchronize(s));
    print_launch(0);
    if (app_memop)
        printf("word: %llx\n", (unsigned long long)*word);
    drain(s);

    const char *go = getenv("GRAPH_GO");
    for (int n = 1; n <= LAUNCHES; n++) {
        /* Launches on the other stream, and ones not waited for before the next (nor printed). */
        hipStream_t on = (switch_other && n > 1) || (changed_other && n == 2) ? other
                         : other_device && n > 1                              ? far
                                                                              : s;
        bool running_on = (switch_other || changed_other) && n == 1;
        if (n == 2 && changed_capture) { /* into a capture of the other stream: not run */
            hipGraph_t captured;
            MUST(hipStreamBeginCapture(other, hipStreamCaptureModeRelaxed));
            MUST(hipGraphLaunch(exec, other));
            MUST(hipStreamEndCapture(other, &captured));
            MUST(hipGraphDestroy(captured));
        }
        if (n == 2 && (is(what, "changed") || changed_other)) {
            hipKernelNodeParams k = kernel(other_params);
            MUST(hipGraphExecKernelNodeSetParams(exec, node[5], &k));
        } else if (n == 2 && is(what, "update")) {
            hipGraphNode_t fresh[KERNELS], error_node;
            hipGraph_t g2 = chain(fresh, 7, other_params2);
            hipGraphExecUpdateResult result;
            MUST(hipGraphExecUpdate(exec, g2, &error_node, &result));
            MUST(hipGraphDestroy(g2));
        } else if (n == 2 && is(what, "disabled")) {
            MUST(hipGraphNodeSetEnabled(exec, node[9], 0));
        } else if (n == 2 && app_memop) {
            hipBatchMemOpNodeParams p = write_params(1, word, 0x2222);
            MUST(exec_memop_set(exec, extra, &p));
        }
        bool capturing = n == 1 && (is(what, "capture") || switch_other);
        if (capturing)
            MUST(hipStreamBeginCapture(other, hipStreamCaptureModeRelaxed));
        if (changed_held && n == 1)
            hold_kernel(5000);
        if (cued && go && n == 1)
            until_gated(on);
        if (cued && n == 1)
            hold_for_cue();
        if (changed_upload && n == 2)
            MUST(hipGraphUpload(exec, s));
        /* HIP orders launches of one executable graph on two streams by the streams alone. */
        if (on == other && n == 2)
            MUST(hipStreamWaitEvent(other, ran_on_s, 0));
        if (errors && (n == 1 || n == 2 || n == 4))
            leave_error();
        if (capture_build && n == 1)
            hipsimBeforeUnsafeCall(begin_capture_now, NULL);
        r = hipGraphLaunch(exec, on);
        if (capture_build && n == 1) {
            hipsimBeforeUnsafeCall(NULL, NULL);
            capturer_finish();
        }
        if (show_errors)
            print_errors(n, r);
        MUST(r);
        if (changed_held && n == 2) /* released only once the launch behind it returned */
            atomic_store(&hold, false);
        if (capturing) {
            hipGraph_t captured;
            MUST(hipStreamEndCapture(other, &captured));
            MUST(hipGraphDestroy(captured));
        }
        if (running_on)
            MUST(hipEventRecord(ran_on_s, record_on));
        if (cued && go && n == 1) {
            cue_and_release(on);
            stop_once_held(on);
        }
        if (n == LAUNCHES && is(what, "destroy"))
            MUST(hipGraphExecDestroy(exec));
        if (running_on)
            continue;
        MUST(hipStreamSynchronize(s));
        MUST(hipStreamSynchronize(other));
        if (far)
            MUST(hipStreamSynchronize(far));
        print_launch(n);
        if (branches)
            printf("kernels so far on device 0: %u, on device 1: %u\n", ran_on[0], ran_on[1]);
        if (app_memop)
            printf("word: %llx\n", (unsigned long long)*word);
        if (n == 1 && ungated) { /* the neighbour is gone meanwhile */
            ack_wait(true);
            sleep_us(300000);
        }
    }
    if (!is(what, "destroy"))
        MUST(hipGraphExecDestroy(exec));
    MUST(hipGraphDestroy(g));
    if (child)
        MUST(hipGraphDestroy(child));
    if (changed_held)
        printf("the held kernel was released by the host: %s\n", stuck ? "no" : "yes");
    printf("executable graphs alive: %d\n", hipsimGraphExecsAlive());
    print_calls();
    fprintf(stderr, "graph_gates: %llu graph waits held\n",
            (unsigned long long)hipsimGraphWaitsHeld());
    fprintf(stderr, "graph_gates: %llu hipGraphExecBatchMemOpNodeSetParams calls\n",
            (unsigned long long)hipsimGraphCalls("hipGraphExecBatchMemOpNodeSetParams"));
    if (word)
        MUST(hipHostFree(word));
    MUST(hipEventDestroy(ran_on_s));
    if (!legacy)
        MUST(hipStreamDestroy(s));
    MUST(hipStreamDestroy(other));
    if (captured_other)
        MUST(hipStreamDestroy(captured_other));
    if (far)
        MUST(hipStreamDestroy(far));
    return 0;
}
