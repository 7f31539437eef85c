/*
 * graph_gates.c - a CUDA driver program that replays a graph of many short kernels, over the fake
 * driver (fake_cuda.c: graphs run on a thread of their own, and wait nodes really wait), for
 * tests/graphs/graph_gates.sh and graph_chaos.sh (cuda): what it prints must not change under
 * gpuprio, whatever gpuprio does to its graph launches (docs/design.md, "Gates inside graphs").
 *
 *   graph_gates CASE      instantiates, launches and destroys through cuGetProcAddress, as the
 *                         CUDA runtime does; builds a chain of KERNELS kernel nodes (each acc = acc
 * * 31 + i after a 3 ms sleep), instantiates it, launches it once and waits (so that its time is
 * learned), then LAUNCHES more times on the same stream, and prints acc after each launch, how many
 * kernels ran, and how many executable graphs are alive at the end. CASE: gated        as above;
 * with GRAPH_GO=FIFO, after the first of those launches (before waiting for it) a line goes to
 * FIFO: the high-priority neighbour's cue to burst; mem_nodes, conditional, child, device_launch
 * the graph also has a memory allocation node, a conditional node, a child graph of two kernels, or
 * is instantiated for device launch, device_updatable kernel 3 is device-updatable
 * (CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE); changed after the second launch,
 * cuGraphExecKernelNodeSetParams gives kernel 5 another argument; update after the second launch,
 * cuGraphExecUpdate from a graph whose kernel 7 has another argument; disabled     after the second
 * launch, cuGraphNodeSetEnabled turns kernel 9 off; destroy      the last launch is destroyed
 * (cuGraphExecDestroy) at once, while it runs; capture      the first launch after the learning one
 * is made while another stream captures; changed_held  as changed_other (the first launch after
 * the learning one on the first stream, not waited for, then changed and launched on the other),
 * and kernel 2 of that first launch waits until the host releases it, which it does only once the
 * launch on the other stream returned: a library that blocks the host on the first launch there
 * deadlocks (kernel 2 gives up after 5 s, and the program says so); changed_capture  as
 * changed_other, the graph first launched into a capture of the other stream (which runs nothing)
 * before it is changed; changed_upload  as changed_other, the changed graph uploaded on the first
 * stream before its launch on the other. With GRAPH_PRINT_CALLS=1 it
 * also prints how many graph functions of the driver were called (the option off: gpuprio must add
 * none). On stderr: how many graph waits held. graph_gates high FIFO  the neighbour: a kernel on a
 * stream of its own ("ready" on stdout), then, once a line comes through FIFO, kernels of 2 ms for
 * 60 ms, then idle until FIFO gives another line (opened anew). graph_gates high FIFO hold, and the
 * cases replay, thread_exit and stream_gone, are graph_chaos.sh's (see chaos_case); reused_first
 * and reused_changed: a stream destroyed and another created at its address (see reused_case).
 *
 * What the HIP program (tests/hipgraph/graph_gates.c) says and does alike, the neighbour's side of
 * the FIFOs among it, is tests/graphs/graph_prog.c. A failed call prints FATAL and exits 1.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_must.h"
#include "graph_prog.h"

int fake_cuda_graph_calls(void);
int fake_cuda_graph_execs_alive(void);
int fake_cuda_graph_waits_held(void);
int fake_cuda_graph_waits_holding(void);

/* Reached as the CUDA runtime reaches them, through cuGetProcAddress (instantiate). */
static CUresult (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
static CUresult (*launch_fn)(CUgraphExec, CUstream);
static CUresult (*exec_destroy_fn)(CUgraphExec);

static unsigned long long acc;
static unsigned ran;
/* changed_held: kernel 2 waits until the host clears hold (a kernel polling mapped memory), for
 * at most 5 s; stuck says it gave up (the host never got there: it was blocked). */
static atomic_bool hold, stuck;

static void step(void **args)
{
    unsigned i = *(unsigned *)args[0];
    for (int ms = 0; i == 3 && atomic_load(&hold); ms++) {
        if (ms == 5000) {
            atomic_store(&stuck, true);
            break;
        }
        sleep_us(1000);
    }
    sleep_us(*(long *)args[1]);
    acc = acc * 31 + i;
    ran++;
}

static CUDA_KERNEL_NODE_PARAMS kernel(void **p)
{
    return one_thread_node(step, p);
}

/* The chain of kernels; node[i] is kernel i. */
static CUgraph chain(CUgraphNode *node, int swap_at, void **swapped)
{
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    for (int i = 0; i < KERNELS; i++) {
        CUDA_KERNEL_NODE_PARAMS k = kernel(i == swap_at ? swapped : params[i]);
        MUST(cuGraphAddKernelNode(&node[i], g, i ? &node[i - 1] : NULL, i ? 1 : 0, &k));
    }
    return g;
}

/* The neighbour's stream and its kernels' arguments (index high_i, 2 ms). */
static CUstream high_s;
static unsigned high_i;
static long high_us = 2000;
static void *high_p[2] = {&high_i, &high_us};

static void high_launch(void)
{
    MUST(cuLaunchKernel((CUfunction)(void *)step, 1, 1, 1, 1, 1, 1, 0, high_s, high_p, NULL));
}

static void high_five(void)
{
    for (int k = 0; k < 5; k++)
        high_launch();
    MUST(cuStreamSynchronize(high_s));
}

/* The burst once cued: 30 kernels of 2 ms. */
static void high_burst(void)
{
    for (high_i = 0; high_i < 30; high_i++)
        high_launch();
    MUST(cuStreamSynchronize(high_s));
}

/* graph_gates high FIFO [exit|hold]: joins at high priority (a kernel on a stream of its own),
 * then is the neighbour (graph_prog.h) with a burst of 30 kernels of 2 ms. */
static void high(const char *fifo, enum high_mode mode)
{
    CUcontext ctx;
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&high_s, 0));
    high_launch();
    MUST(cuStreamSynchronize(high_s));
    if (neighbour(fifo, mode, high_five, high_burst))
        MUST(cuStreamDestroy(high_s));
}

/* ---- graph_chaos.sh's cases: neighbours that die, stop and exit around gated graphs ---- */

/* The graph functions looked up (instantiate_fn...), and g instantiated with them. */
static CUgraphExec instantiate(CUgraph g, unsigned long long flags)
{
    CUdriverProcAddressQueryResult found;
    MUST(cuGetProcAddress("cuGraphInstantiateWithFlags", (void **)&instantiate_fn, 13000, 0,
                          &found));
    MUST(cuGetProcAddress("cuGraphLaunch", (void **)&launch_fn, 13000, 0, &found));
    MUST(cuGetProcAddress("cuGraphExecDestroy", (void **)&exec_destroy_fn, 13000, 0, &found));
    CUgraphExec exec;
    MUST(instantiate_fn(&exec, g, flags));
    return exec;
}

/* chaos_case's and reused_case's set-up: the primary context made current, a stream in *s (and
 * one in *other unless NULL), and the chain (in *g, node[i] kernel i) instantiated. */
static CUgraphExec chain_exec(CUcontext *ctx, CUstream *s, CUstream *other, CUgraphNode *node,
                              CUgraph *g)
{
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(ctx, 0));
    MUST(cuCtxSetCurrent(*ctx));
    MUST(cuStreamCreate(s, 0));
    if (other)
        MUST(cuStreamCreate(other, 0));
    chain_params();
    *g = chain(node, -1, NULL);
    return instantiate(*g, 0);
}

/* Launched once on s and waited for, so that its GPU time is learned (as main does). */
static void learn(CUgraphExec exec, CUstream s)
{
    MUST(launch_fn(exec, s));
    MUST(cuStreamSynchronize(s));
    drain(s);
}

static CUgraphExec chaos_exec;
static CUstream chaos_stream;

/* The first thread's launches are made (none held on the host: the neighbour is idle); then,
 * with a neighbour (GRAPH_GO), it is cued, and the thread waits until a wait node holds them (at
 * most 10 s), so that it goes on with its launches held on the device, and says so on stderr. */
static void launch_then_cue(CUstream s)
{
    for (int n = 0; n < FIRST_THREAD_LAUNCHES; n++)
        MUST(launch_fn(chaos_exec, s));
    if (!getenv("GRAPH_GO"))
        return;
    cue(getenv("GRAPH_GO"));
    wait_until_holding(fake_cuda_graph_waits_holding);
}

/* thread_exit's first thread: launches on the main thread's stream, not waited for. */
static void *launch_and_exit(void *arg)
{
    MUST(cuCtxSetCurrent((CUcontext)arg));
    launch_then_cue(chaos_stream);
    return NULL;
}

/* stream_gone's first thread: learns on a stream of its own, launches more on it and destroys
 * it, not waiting for them. */
static void *launch_destroy_and_exit(void *arg)
{
    CUstream own;
    MUST(cuCtxSetCurrent((CUcontext)arg));
    MUST(cuStreamCreate(&own, 0));
    learn(chaos_exec, own);
    launch_then_cue(own);
    MUST(cuStreamDestroy(own));
    return NULL;
}

/* The second thread: three launches on a stream of its own, each waited for. */
static void *launch_after(void *arg)
{
    CUstream own;
    MUST(cuCtxSetCurrent((CUcontext)arg));
    MUST(cuStreamCreate(&own, 0));
    for (int n = 0; n < 3; n++) {
        MUST(launch_fn(chaos_exec, own));
        MUST(cuStreamSynchronize(own));
        printf("second thread, launch %d: acc %016llx, %u kernels\n", n, acc, ran);
    }
    MUST(cuStreamDestroy(own));
    return NULL;
}

/*
 * replay        the chain learned, then CHAOS_LAUNCHES launches on one stream, each waited for
 *               and printed (on stderr, when each launch call was made and returned); GRAPH_GO is
 *               cued after the first (graph_chaos.sh kills or stops the neighbour, or this
 *               program, meanwhile);
 * thread_exit   learned on the main thread's stream; a thread launches it there 4 times, cues
 *               GRAPH_GO, and once a wait node holds them exits without waiting; then another
 *               thread launches it on a stream of its own (the driver orders launches of one
 *               executable graph);
 * stream_gone   as thread_exit, but the first thread learns and launches on a stream of its own,
 *               which it destroys with the launches in flight.
 */
static int chaos_case(const char *what)
{
    bool thread_exit = strcmp(what, "thread_exit") == 0;
    bool stream_gone = strcmp(what, "stream_gone") == 0;
    CUcontext ctx;
    CUgraphNode node[KERNELS];
    CUgraph g;
    chaos_exec = chain_exec(&ctx, &chaos_stream, NULL, node, &g);
    if (!stream_gone) {
        learn(chaos_exec, chaos_stream);
        printf("learned: acc %016llx, %u kernels\n", acc, ran);
    }
    if (thread_exit || stream_gone) {
        if (!run_thread(thread_exit ? launch_and_exit : launch_destroy_and_exit, ctx) ||
            !run_thread(launch_after, ctx))
            return 1;
    } else {
        for (int n = 1; n <= CHAOS_LAUNCHES; n++) {
            say_launch(n, "called");
            MUST(launch_fn(chaos_exec, chaos_stream));
            say_launch(n, "returned");
            if (n == 1)
                cue(getenv("GRAPH_GO"));
            MUST(cuStreamSynchronize(chaos_stream));
            printf("launch %d: acc %016llx, %u kernels\n", n, acc, ran);
        }
    }
    MUST(exec_destroy_fn(chaos_exec));
    MUST(cuGraphDestroy(g));
    printf("executable graphs alive: %d\n", fake_cuda_graph_execs_alive());
    fprintf(stderr, "graph_gates: %d graph waits held\n", fake_cuda_graph_waits_held());
    MUST(cuStreamDestroy(chaos_stream));
    MUST(cuDevicePrimaryCtxRelease(0));
    return 0;
}

/*
 * reused_first    learned on a stream s; launched on s while another stream captures (left
 *                 whole: the application's own executable graph runs) and not waited for; s
 *                 destroyed at once and a stream created at its address with an id of its own
 *                 (FAKE_CUDA_STREAM_DESTROY_RETURNS=1, FAKE_CUDA_STREAM_REUSE=1), on which it is
 *                 launched 3 times, each waited for and printed: the first must run after the
 *                 launch on s (the driver orders launches of one executable graph), not beside it
 * reused_changed  learned on s, launched on s (under gpuprio, its gated copy) and not waited for;
 *                 s destroyed and a stream created at its address; kernel 5 changed, then
 *                 launched there 3 times, as above
 */
static int reused_case(bool changed)
{
    CUcontext ctx;
    CUstream s, again, other;
    CUgraphNode node[KERNELS];
    CUgraph g;
    CUgraphExec exec = chain_exec(&ctx, &s, &other, node, &g);
    learn(exec, s);
    printf("learned: acc %016llx, %u kernels\n", acc, ran);
    if (!changed)
        MUST(cuStreamBeginCapture(other, CU_STREAM_CAPTURE_MODE_RELAXED));
    MUST(launch_fn(exec, s));
    if (!changed) {
        CUgraph captured;
        MUST(cuStreamEndCapture(other, &captured));
        MUST(cuGraphDestroy(captured));
    }
    MUST(cuStreamDestroy(s));
    MUST(cuStreamCreate(&again, 0));
    if (again != s) {
        printf("FATAL: the fake did not create the stream at the destroyed one's address\n");
        return 1;
    }
    if (changed) {
        CUDA_KERNEL_NODE_PARAMS k = kernel(other_params);
        MUST(cuGraphExecKernelNodeSetParams(exec, node[5], &k));
    }
    for (int n = 2; n <= LAUNCHES; n++) {
        MUST(launch_fn(exec, again));
        MUST(cuStreamSynchronize(again));
        printf("launch %d: acc %016llx, %u kernels\n", n, acc, ran);
    }
    MUST(exec_destroy_fn(exec));
    MUST(cuGraphDestroy(g));
    printf("executable graphs alive: %d\n", fake_cuda_graph_execs_alive());
    fprintf(stderr, "graph_gates: %d graph waits held\n", fake_cuda_graph_waits_held());
    MUST(cuStreamDestroy(again));
    MUST(cuStreamDestroy(other));
    MUST(cuDevicePrimaryCtxRelease(0));
    return 0;
}

int main(int argc, char **argv)
{
    enum high_mode mode;
    if (high_args(argc, argv, &mode)) {
        MUST(cuInit(0));
        high(argv[2], mode);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: graph_gates CASE | graph_gates high FIFO [exit|hold]\n");
        return 2;
    }
    const char *what = argv[1];
    if (strcmp(what, "replay") == 0 || strcmp(what, "thread_exit") == 0 ||
        strcmp(what, "stream_gone") == 0)
        return chaos_case(what);
    if (strcmp(what, "reused_first") == 0 || strcmp(what, "reused_changed") == 0)
        return reused_case(strcmp(what, "reused_changed") == 0);
    bool changed_held = strcmp(what, "changed_held") == 0;
    bool changed_capture = strcmp(what, "changed_capture") == 0;
    bool changed_upload = strcmp(what, "changed_upload") == 0;
    bool changed_other =
        strcmp(what, "changed_other") == 0 || changed_held || changed_capture || changed_upload;
    bool switch_other = strcmp(what, "switch_other") == 0;
    CUcontext ctx;
    CUstream s, other;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&s, 0));
    MUST(cuStreamCreate(&other, 0));
    chain_params();
    CUgraphNode node[KERNELS], extra;
    CUgraph g = chain(node, -1, NULL), child = NULL;
    unsigned long long flags = 0;
    if (strcmp(what, "mem_nodes") == 0) {
        CUDA_MEM_ALLOC_NODE_PARAMS alloc = {.bytesize = 64};
        MUST(cuGraphAddMemAllocNode(&extra, g, &node[KERNELS - 1], 1, &alloc));
    } else if (strcmp(what, "conditional") == 0) {
        CUgraphNodeParams cond = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
        MUST(cuGraphAddNode(&extra, g, &node[KERNELS - 1], NULL, 1, &cond));
    } else if (strcmp(what, "child") == 0) {
        CUgraphNode inner[2];
        MUST(cuGraphCreate(&child, 0));
        CUDA_KERNEL_NODE_PARAMS k = kernel(other_params);
        MUST(cuGraphAddKernelNode(&inner[0], child, NULL, 0, &k));
        MUST(cuGraphAddKernelNode(&inner[1], child, &inner[0], 1, &k));
        MUST(cuGraphAddChildGraphNode(&extra, g, &node[KERNELS - 1], 1, child));
    } else if (strcmp(what, "device_launch") == 0) {
        flags = CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
    } else if (strcmp(what, "device_updatable") == 0) {
        CUkernelNodeAttrValue v;
        memset(&v, 0, sizeof v);
        v.deviceUpdatableKernelNode.deviceUpdatable = 1;
        MUST(cuGraphKernelNodeSetAttribute(
            node[3], CU_KERNEL_NODE_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
    } else if (strcmp(what, "gated") && strcmp(what, "ungated") && strcmp(what, "changed") &&
               !changed_other && !switch_other && strcmp(what, "update") &&
               strcmp(what, "disabled") && strcmp(what, "destroy") && strcmp(what, "capture")) {
        fprintf(stderr, "graph_gates: unknown case %s\n", what);
        return 2;
    }
    CUgraphExec exec = instantiate(g, flags);

    /* Learned: the launch's time, from its completion marker, before the next launch. Under
     * gpuprio, its drain returns once the watcher counted the launch complete, which it does
     * after learning its time (a fixed pause was too short on a loaded host under ASan). */
    MUST(launch_fn(exec, s));
    MUST(cuStreamSynchronize(s));
    printf("launch 0: acc %016llx, %u kernels\n", acc, ran);
    drain(s);

    const char *go = getenv("GRAPH_GO");
    for (int n = 1; n <= LAUNCHES; n++) {
        /* Launches on the other stream, and ones not waited for before the next (nor printed). */
        CUstream on = (switch_other && n > 1) || (changed_other && n == 2) ? other : s;
        bool running_on = (switch_other || changed_other) && n == 1;
        if (n == 2 && changed_capture) { /* into a capture of the other stream: not run */
            CUgraph captured;
            MUST(cuStreamBeginCapture(other, CU_STREAM_CAPTURE_MODE_RELAXED));
            MUST(launch_fn(exec, other));
            MUST(cuStreamEndCapture(other, &captured));
        }
        if (n == 2 && (strcmp(what, "changed") == 0 || changed_other)) {
            CUDA_KERNEL_NODE_PARAMS k = kernel(other_params);
            MUST(cuGraphExecKernelNodeSetParams(exec, node[5], &k));
        } else if (n == 2 && strcmp(what, "update") == 0) {
            CUgraphNode fresh[KERNELS];
            CUgraph g2 = chain(fresh, 7, other_params2);
            CUgraphExecUpdateResultInfo info;
            MUST(cuGraphExecUpdate(exec, g2, &info));
            MUST(cuGraphDestroy(g2));
        } else if (n == 2 && strcmp(what, "disabled") == 0) {
            MUST(cuGraphNodeSetEnabled(exec, node[9], 0));
        }
        bool capturing = n == 1 && (strcmp(what, "capture") == 0 || switch_other);
        if (capturing)
            MUST(cuStreamBeginCapture(other, CU_STREAM_CAPTURE_MODE_RELAXED));
        if (changed_held && n == 1)
            atomic_store(&hold, true);
        if (changed_upload && n == 2)
            MUST(cuGraphUpload(exec, s));
        MUST(launch_fn(exec, on));
        if (changed_held && n == 2) /* released only once the launch behind it returned */
            atomic_store(&hold, false);
        if (capturing) {
            CUgraph captured;
            MUST(cuStreamEndCapture(other, &captured));
        }
        bool cued = strcmp(what, "gated") == 0 || strcmp(what, "ungated") == 0;
        if (n == 1 && go && cued)
            cue(go);
        if (n == LAUNCHES && strcmp(what, "destroy") == 0)
            MUST(exec_destroy_fn(exec));
        if (running_on)
            continue;
        MUST(cuStreamSynchronize(s));
        MUST(cuStreamSynchronize(other));
        printf("launch %d: acc %016llx, %u kernels\n", n, acc, ran);
        if (n == 1 && strcmp(what, "ungated") == 0)
            sleep_us(300000); /* the neighbour is gone meanwhile */
    }
    if (strcmp(what, "destroy") != 0)
        MUST(exec_destroy_fn(exec));
    MUST(cuGraphDestroy(g));
    if (child)
        MUST(cuGraphDestroy(child));
    if (changed_held)
        printf("the held kernel was released by the host: %s\n", stuck ? "no" : "yes");
    printf("executable graphs alive: %d\n", fake_cuda_graph_execs_alive());
    if (getenv("GRAPH_PRINT_CALLS"))
        printf("graph calls: %d\n", fake_cuda_graph_calls());
    fprintf(stderr, "graph_gates: %d graph waits held\n", fake_cuda_graph_waits_held());
    MUST(cuStreamDestroy(s));
    MUST(cuStreamDestroy(other));
    MUST(cuDevicePrimaryCtxRelease(0));
    return 0;
}
