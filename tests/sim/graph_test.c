/*
 * graph_test.c - what the simulator offers the tests of gpuprio's gates in graphs, beyond the HIP
 * API (tests/conformance/graph_nodes.c covers that): hipsimGraphCalls, hipsimGraphExecsAlive,
 * hipsimGraphWaitsHolding/Held, and the settings HIPSIM_GRAPH_SAY, HIPSIM_GRAPH_CLONE_FAILS,
 * HIPSIM_GRAPH_MEMOP_FAILS, HIPSIM_GATED_LAUNCH_FAILS, HIPSIM_STREAM_ID=0 and
 * HIPSIM_STREAM_REUSE=1, which are read once per process, so each mode is a run of its own:
 *   graph_test plain    none of them set
 *   graph_test faults   HIPSIM_GRAPH_CLONE_FAILS, HIPSIM_GRAPH_MEMOP_FAILS, HIPSIM_STREAM_ID=0,
 *                       HIPSIM_STREAM_REUSE set (the test sets them)
 *   graph_test gated    HIPSIM_GATED_LAUNCH_FAILS
 *   graph_test say      HIPSIM_GRAPH_SAY: the lines on stderr, read back from a file
 * Output is "ok"/"FAIL" lines; the exit status is the number of failures. Nothing is timed: a
 * wait is known to hold before the word that opens it is written.
 */
#include "sim_check.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/shim/hip/hip_compat_shim.h"

static int failures;

static void expect(const char *what, int ok)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

static uint64_t nothing(hipsimLaunch *l)
{
    (void)l;
    return 0;
}

static const void *kernel;
static _Atomic uint64_t *word;
static hipStreamBatchMemOpParams op;

static hipError_t add_kernel(hipGraphNode_t *n, hipGraph_t g, hipGraphNode_t *dep)
{
    hipKernelNodeParams p = {
        .blockDim = {1, 1, 1}, .func = (void *)(uintptr_t)kernel, .gridDim = {1, 1, 1}};
    return hipGraphAddKernelNode(n, g, dep, dep ? 1 : 0, &p);
}

/* A wait until *word >= 1 after dep. */
static hipError_t add_wait(hipGraphNode_t *n, hipGraph_t g, hipGraphNode_t *dep)
{
    op.waitValue.operation = hipStreamMemOpWaitValue64;
    op.waitValue.address = (void *)word;
    op.waitValue.value64 = 1;
    hipBatchMemOpNodeParams p = {.ctx = (hipCtx_t)(uintptr_t)1, .count = 1, .paramArray = &op};
    return hipGraphAddBatchMemOpNode(n, g, dep, dep ? 1 : 0, &p);
}

/* kernel -> child graph (one kernel) -> wait -> kernel: the wait comes after 2 of 3 kernels. */
static hipGraphExec_t gated_exec(void)
{
    hipGraph_t g, child;
    hipGraphNode_t k1, c, w, k2, ck;
    CHECK(hipGraphCreate(&g, 0));
    CHECK(hipGraphCreate(&child, 0));
    CHECK(add_kernel(&ck, child, NULL));
    CHECK(add_kernel(&k1, g, NULL));
    CHECK(hipGraphAddChildGraphNode(&c, g, &k1, 1, child));
    CHECK(add_wait(&w, g, &c));
    CHECK(add_kernel(&k2, g, &w));
    hipGraphExec_t x;
    CHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    CHECK(hipGraphDestroy(child));
    CHECK(hipGraphDestroy(g));
    return x;
}

/* Waits (at most 30 s: a bound that only turns a hang into a failure) until a wait holds. */
static int await_holding(void)
{
    for (int ms = 0; ms < 30000; ms++) {
        if (hipsimGraphWaitsHolding() > 0)
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void plain(hipStream_t s)
{
    expect("no graph calls yet", hipsimGraphCalls(NULL) == 0);
    hipGraphExec_t x = gated_exec();
    expect("calls counted by name", hipsimGraphCalls("hipGraphCreate") == 2 &&
                                        hipsimGraphCalls("hipGraphAddKernelNode") == 3 &&
                                        hipsimGraphCalls("hipGraphClone") == 0 &&
                                        hipsimGraphCalls("cuGraphClone") == 0);
    expect("and in all", hipsimGraphCalls(NULL) == 10);
    expect("one executable graph alive", hipsimGraphExecsAlive() == 1);
    unsigned long long a = 0, b = 0;
    hipStream_t s2;
    CHECK(hipStreamCreate(&s2));
    expect("hipStreamGetId answers",
           hipStreamGetId(s, &a) == hipSuccess && hipStreamGetId(s2, &b) == hipSuccess && a != b);
    CHECK(hipStreamDestroy(s2));
    expect("a destroyed stream has no id", hipStreamGetId(s2, &a) == hipErrorInvalidHandle);

    atomic_store(word, 0);
    CHECK(hipGraphLaunch(x, s));
    expect("the launch's wait holds", await_holding());
    CHECK(hipGraphExecDestroy(x));
    expect("the executable graph destroyed while its launch runs", hipsimGraphExecsAlive() == 0);
    atomic_store(word, 1);
    CHECK(hipStreamSynchronize(s));
    expect("the launch completes, its wait held once",
           hipsimGraphWaitsHolding() == 0 && hipsimGraphWaitsHeld() == 1);
    hipGraph_t g, c;
    CHECK(hipGraphCreate(&g, 0));
    expect("a clone", hipGraphClone(&c, g) == hipSuccess);
    CHECK(hipGraphDestroy(c));
    CHECK(hipGraphDestroy(g));
}

static void faults(hipStream_t s)
{
    hipGraph_t g, c = NULL;
    hipGraphNode_t w;
    CHECK(hipGraphCreate(&g, 0));
    expect("HIPSIM_GRAPH_CLONE_FAILS", hipGraphClone(&c, g) == hipErrorOutOfMemory && !c);
    expect("HIPSIM_GRAPH_MEMOP_FAILS", add_wait(&w, g, NULL) == hipErrorNotSupported);
    CHECK(hipGraphDestroy(g));
    unsigned long long id = 0;
    expect("HIPSIM_STREAM_ID=0", hipStreamGetId(s, &id) == hipErrorNotSupported);

    hipStream_t a, b, busy, after;
    CHECK(hipStreamCreate(&a));
    uint64_t a_id = hipsimStreamId(a);
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamCreate(&b));
    expect("HIPSIM_STREAM_REUSE: a new stream takes a destroyed one's handle", a == b);
    expect("with another simulator id", hipsimStreamId(b) != a_id);
    /* A stream destroyed with work queued is not taken until its work is done. */
    CHECK(hipStreamCreate(&busy));
    atomic_store(word, 0);
    CHECK(hipStreamWaitValue64(busy, (void *)word, 1, hipStreamWaitValueGte, ~0ull));
    CHECK(hipStreamDestroy(busy));
    CHECK(hipStreamCreate(&after));
    expect("not while its work runs", after != busy);
    atomic_store(word, 1);
    CHECK(hipDeviceSynchronize());
    CHECK(hipStreamDestroy(after));
    CHECK(hipStreamDestroy(b));
}

static void gated(hipStream_t s)
{
    hipGraphExec_t x = gated_exec(), plain_x;
    hipGraph_t g;
    hipGraphNode_t k;
    CHECK(hipGraphCreate(&g, 0));
    CHECK(add_kernel(&k, g, NULL));
    CHECK(hipGraphInstantiate(&plain_x, g, NULL, NULL, 0));
    expect("HIPSIM_GATED_LAUNCH_FAILS: a launch with a wait node",
           hipGraphLaunch(x, s) == hipErrorOutOfMemory);
    expect("and its upload", hipGraphUpload(x, s) == hipErrorOutOfMemory);
    expect("a launch without one runs", hipGraphLaunch(plain_x, s) == hipSuccess);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipGraphExecDestroy(x));
    CHECK(hipGraphExecDestroy(plain_x));
    CHECK(hipGraphDestroy(g));
}

static void say(hipStream_t s)
{
    char path[] = "/tmp/hipsim-graph-say.XXXXXX";
    int fd = mkstemp(path);
    int saved = dup(2);
    if (fd < 0 || saved < 0 || dup2(fd, 2) < 0) {
        perror("graph_test: stderr to a file");
        exit(100);
    }
    hipGraphExec_t x = gated_exec();
    atomic_store(word, 0);
    CHECK(hipGraphLaunch(x, s));
    int held = await_holding();
    atomic_store(word, 1);
    CHECK(hipStreamSynchronize(s));
    CHECK(hipGraphExecDestroy(x));
    fflush(stderr);
    dup2(saved, 2);
    char text[4096] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    unlink(path);
    fputs(text, stderr);
    expect("the wait held", held);
    expect("holding at T ms after 2 of 3 kernel nodes",
           strstr(text, "hipsim: graph wait holding at ") &&
               strstr(text, " ms after 2 of 3 kernel nodes\n"));
    expect("opened", strstr(text, "hipsim: graph wait opened at ") != NULL);
    char *h = strstr(text, "hipsim: graph wait held ");
    unsigned long ms = 0;
    unsigned k = 0, m = 0;
    expect("held N ms after 2 of 3 kernel nodes",
           h &&
               sscanf(h, "hipsim: graph wait held %lu ms after %u of %u kernel nodes", &ms, &k,
                      &m) == 3 &&
               k == 2 && m == 3);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    kernel = hipsimRegisterKernel("nothing", nothing, 0, NULL);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipHostMalloc((void **)&word, sizeof *word, 0));
    if (strcmp(mode, "faults") == 0)
        faults(s);
    else if (strcmp(mode, "gated") == 0)
        gated(s);
    else if (strcmp(mode, "say") == 0)
        say(s);
    else
        plain(s);
    CHECK(hipHostFree((void *)word));
    CHECK(hipStreamDestroy(s));
    return failures;
}
