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
 * A failed call prints FATAL and exits 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_must.h"

#define KERNELS 40
#define LAUNCHES 4

int fake_cuda_graph_calls(void);
int fake_cuda_graph_execs_alive(void);
int fake_cuda_graph_waits_held(void);
int fake_cuda_graph_waits_holding(void);

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Reached as the CUDA runtime reaches them, through cuGetProcAddress (instantiate). */
static CUresult (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
static CUresult (*launch_fn)(CUgraphExec, CUstream);
static CUresult (*exec_destroy_fn)(CUgraphExec);

static unsigned long long acc;
static unsigned ran;
/* changed_held: kernel 2 waits until the host clears hold (a kernel polling mapped memory), for
 * at most 5 s; stuck says it gave up (the host never got there: it was blocked). */
static atomic_bool hold, stuck;

static void step(void **params)
{
    unsigned i = *(unsigned *)params[0];
    for (int ms = 0; i == 3 && atomic_load(&hold); ms++) {
        if (ms == 5000) {
            atomic_store(&stuck, true);
            break;
        }
        sleep_us(1000);
    }
    sleep_us(*(long *)params[1]);
    acc = acc * 31 + i;
    ran++;
}

static unsigned index_of[KERNELS], other_index = 1000, other_index2 = 2000;
static long kernel_us = 3000;
static void *params[KERNELS][2], *other_params[2] = {&other_index, &kernel_us},
                                 *other_params2[2] = {&other_index2, &kernel_us};

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

/* One line through FIFO. A writer that connects, writes its line for an earlier open and closes
 * (the reader of that line closed and opened again in between) gives this open an end of file
 * with no line: open again, as the script's writers always send one more. */
static bool line_through(const char *fifo)
{
    char line[16];
    for (;;) {
        FILE *f = fopen(fifo, "r");
        if (!f)
            return false;
        bool got = fgets(line, sizeof line, f) != NULL;
        fclose(f);
        if (got)
            return true;
    }
}

/* The neighbour's modes: graph_gates high FIFO [exit|hold]. */
enum high_mode { HIGH_IDLE, HIGH_EXIT, HIGH_HOLD };

/* graph_gates high FIFO [exit|hold]: joins at high priority, says "ready", and once cued through
 * FIFO runs a burst of 30 kernels of 2 ms; then exits (exit: its queue leaves the board, the low
 * program is no longer held by gates), or stays joined and idle until another line (the low
 * program stays held by gates meanwhile). With hold (graph_chaos.sh's cases) it bursts back to
 * back until a line comes instead, so it can be killed or stopped while it holds the low program
 * back, then idles until another line. */
static void high(const char *fifo, enum high_mode mode)
{
    CUcontext ctx;
    CUstream s;
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&s, 0));
    unsigned i = 0;
    long us = 2000;
    void *p[2] = {&i, &us};
    MUST(cuLaunchKernel((CUfunction)(void *)step, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
    MUST(cuStreamSynchronize(s));
    printf("ready\n");
    fflush(stdout);
    if (!line_through(fifo)) {
        printf("FATAL: no cue through %s\n", fifo);
        exit(1);
    }
    if (mode == HIGH_HOLD) {
        char line[16];
        int fd = open(fifo, O_RDONLY | O_NONBLOCK);
        if (fd < 0) {
            printf("FATAL: cannot open %s\n", fifo);
            exit(1);
        }
        while (read(fd, line, sizeof line) <= 0) {
            for (int k = 0; k < 5; k++)
                MUST(cuLaunchKernel((CUfunction)(void *)step, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
            MUST(cuStreamSynchronize(s));
        }
        close(fd);
    } else {
        for (i = 0; i < 30; i++)
            MUST(cuLaunchKernel((CUfunction)(void *)step, 1, 1, 1, 1, 1, 1, 0, s, p, NULL));
        MUST(cuStreamSynchronize(s));
        if (mode == HIGH_EXIT)
            return;
    }
    if (!line_through(fifo)) {
        printf("FATAL: no second line through %s\n", fifo);
        exit(1);
    }
    MUST(cuStreamDestroy(s));
}

/* ---- graph_chaos.sh's cases: neighbours that die, stop and exit around gated graphs ---- */

#define CHAOS_LAUNCHES 24

static void cue(const char *go)
{
    FILE *f = go ? fopen(go, "w") : NULL;
    if (go && (!f || fputs("go\n", f) < 0 || fclose(f) != 0)) {
        printf("FATAL: cannot cue the neighbour through %s\n", go);
        exit(1);
    }
}

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
    for (int i = 0; i < KERNELS; i++) {
        index_of[i] = (unsigned)i + 1;
        params[i][0] = &index_of[i];
        params[i][1] = &kernel_us;
    }
    *g = chain(node, -1, NULL);
    return instantiate(*g, 0);
}

/* Launched once on s and waited for, so that its GPU time is learned (as main does). */
static void learn(CUgraphExec exec, CUstream s)
{
    MUST(launch_fn(exec, s));
    MUST(cuStreamSynchronize(s));
    int (*drain)(void *, unsigned) =
        (int (*)(void *, unsigned))dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    if (drain && drain(s, 10000) != 0)
        printf("FATAL: gpuprio_stream_drain failed\n");
}

static CUgraphExec chaos_exec;
static CUstream chaos_stream;

#define FIRST_THREAD_LAUNCHES 4

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
    int ms = 0;
    for (; ms < 10000 && !fake_cuda_graph_waits_holding(); ms++)
        sleep_us(1000);
    fprintf(stderr, "graph_gates: the first thread goes on %s\n",
            ms < 10000 ? "while a wait node holds its launches" : "with no wait node holding");
}

/* The wall clock in ms, as the fake says when a wait node holds and opens. */
static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
        pthread_t t;
        if (pthread_create(&t, NULL, thread_exit ? launch_and_exit : launch_destroy_and_exit,
                           ctx) != 0 ||
            pthread_join(t, NULL) != 0 || pthread_create(&t, NULL, launch_after, ctx) != 0 ||
            pthread_join(t, NULL) != 0) {
            printf("FATAL: a thread failed\n");
            return 1;
        }
    } else {
        for (int n = 1; n <= CHAOS_LAUNCHES; n++) {
            /* On stderr: a launch held on the host shows as one called and not yet returned. */
            fprintf(stderr, "graph_gates: launch %d called at %lld ms\n", n, wall_ms());
            MUST(launch_fn(chaos_exec, chaos_stream));
            fprintf(stderr, "graph_gates: launch %d returned at %lld ms\n", n, wall_ms());
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
    if ((argc == 3 || (argc == 4 && (!strcmp(argv[3], "exit") || !strcmp(argv[3], "hold")))) &&
        strcmp(argv[1], "high") == 0) {
        MUST(cuInit(0));
        high(argv[2], argc == 3 ? HIGH_IDLE : !strcmp(argv[3], "exit") ? HIGH_EXIT : HIGH_HOLD);
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
    for (int i = 0; i < KERNELS; i++) {
        index_of[i] = (unsigned)i + 1;
        params[i][0] = &index_of[i];
        params[i][1] = &kernel_us;
    }
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
    int (*drain)(void *, unsigned) =
        (int (*)(void *, unsigned))dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    if (drain && drain(s, 10000) != 0)
        printf("FATAL: gpuprio_stream_drain failed\n");

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
        bool cue = strcmp(what, "gated") == 0 || strcmp(what, "ungated") == 0;
        if (n == 1 && go && cue) {
            FILE *f = fopen(go, "w");
            if (!f || fputs("go\n", f) < 0 || fclose(f) != 0) {
                printf("FATAL: cannot cue the neighbour through %s\n", go);
                return 1;
            }
        }
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
