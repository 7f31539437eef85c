/*
 * graph_place.c - where the gated copy of a graph gets its wait nodes (src/hal/cuda/
 * cuda_graph_gate.c, docs/design.md "Gates inside graphs"), built by the HAL itself over the fake
 * driver (no shim: cudahal_sym is this program's, from the fake it links) and launched there; the
 * fake says which kernel nodes follow a wait node (fake_cuda_graph_last_run).
 *
 *   graph_place noted   a chain of 60 kernel nodes, node 30 noted at 50 ms on the application's
 *                       graph (cudahal_node_time_note); the graph is copied (cudahal_graph_ops'
 *                       copy, which must carry the note) and destroyed; the gated copy is built for
 * a learned time of 80 ms at an interval of 10 ms: the other 59 nodes share 30 ms (508474 ns each),
 * so wait nodes come before nodes 19, 30, 31 and 50 exactly: one before and one after the long
 * node, the others an interval apart graph_place rotated noted, the chain's nodes added from node
 * 10 on, then nodes 0 to 9, then its edges: the graph lists its nodes out of their order (the
 * first, without dependencies, 51st, where the 51st in order has a wait node), so the wait nodes go
 * where noted puts them only when each node, its weight and its dependencies are taken by the
 * order, not by the list graph_place count   the same chain with no note, 120 ms (2 ms a node) at
 * 10 ms: a wait node before every fifth node (5, 10, ... 55), as by count graph_place stale count,
 * after an earlier graph, every node noted, was copied and both destroyed: their notes must be gone
 * (the fake reuses the addresses) graph_place forget  the notes' table alone: forgetting many nodes
 * never noted (as the copy's destruction does for all its nodes) keeps a note of another node
 *
 * Each launch must run every kernel in order. Prints "ok CASE", or FAIL lines, and exits 1 then.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda_compat.h" /* cuda.h as the HAL includes it: each symbol under its own name */

#include "../expect.h"
#include "cuda_bind.h"
#include "cuda_graph_gate.h"
#include "cuda_must.h"
#include "cuda_node_time.h"

#define KERNELS 60
#define MS 1000000ull

static const struct gp_graph_ops *const ops = &cudahal_graph_ops;

int fake_cuda_graph_last_run(CUfunction *funcs, int *after_wait, int max);

void *cudahal_sym(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

static unsigned ran, order_ok = 1;
static unsigned index_of[KERNELS];
static void *params[KERNELS][1];

static void step(void **p)
{
    unsigned i = *(unsigned *)p[0];
    order_ok &= i == ran;
    ran++;
}

/* A chain of KERNELS kernel nodes, node[i] running step for index i. */
static CUgraph chain(CUgraphNode *node)
{
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    for (int i = 0; i < KERNELS; i++) {
        index_of[i] = (unsigned)i;
        params[i][0] = &index_of[i];
        CUDA_KERNEL_NODE_PARAMS k = one_thread_node(step, params[i]);
        MUST(cuGraphAddKernelNode_v2(&node[i], g, i ? &node[i - 1] : NULL, i ? 1 : 0, &k));
    }
    return g;
}

/* The same chain, its nodes added without dependencies from node 10 on and then nodes 0 to 9,
 * then its edges: the graph's list of nodes runs out of their order. */
static CUgraph chain_rotated(CUgraphNode *node)
{
    CUresult (*add_deps)(CUgraph, const CUgraphNode *, const CUgraphNode *, size_t);
    *(void **)&add_deps = dlsym(RTLD_DEFAULT, "cuGraphAddDependencies");
    EXPECT(add_deps != NULL);
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    for (int j = 0; j < KERNELS; j++) {
        int i = (j + 10) % KERNELS;
        index_of[i] = (unsigned)i;
        params[i][0] = &index_of[i];
        CUDA_KERNEL_NODE_PARAMS k = one_thread_node(step, params[i]);
        MUST(cuGraphAddKernelNode_v2(&node[i], g, NULL, 0, &k));
    }
    for (int i = 1; add_deps && i < KERNELS; i++)
        MUST(add_deps(g, &node[i - 1], &node[i], 1));
    return g;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "forget")) {
        static char nodes[4096];
        cudahal_node_time_note((CUgraphNode)(void *)&nodes[0], 7 * MS);
        for (size_t i = 1; i < sizeof nodes; i++)
            cudahal_node_time_note((CUgraphNode)(void *)&nodes[i], 0);
        EXPECT(cudahal_node_time_of((CUgraphNode)(void *)&nodes[0]) == 7 * MS);
        if (!failures)
            printf("ok forget\n");
        return failures ? 1 : 0;
    }
    if (argc != 2 || (strcmp(argv[1], "noted") && strcmp(argv[1], "rotated") &&
                      strcmp(argv[1], "count") && strcmp(argv[1], "stale"))) {
        fprintf(stderr, "usage: graph_place noted|rotated|count|stale|forget\n");
        return 2;
    }
    bool rotated = !strcmp(argv[1], "rotated");
    bool noted = rotated || !strcmp(argv[1], "noted"), stale = !strcmp(argv[1], "stale");
    CUcontext ctx;
    CUstream s;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuStreamCreate(&s, 0));
    CUgraphNode node[KERNELS];
    if (stale) { /* an earlier graph, noted, copied and destroyed (PyTorch destroys its graph once
                  * instantiated): nothing of it may weigh in a later graph */
        CUgraphNode old_node[KERNELS];
        CUgraph old = chain(old_node);
        for (int i = 0; i < KERNELS; i++)
            cudahal_node_time_note(old_node[i], 1000);
        size_t old_kernels;
        uintptr_t old_clone;
        EXPECT(ops->copy((uintptr_t)old, 0, &old_kernels, &old_clone) < 0);
        MUST(cuGraphDestroy(old));
        ops->destroy(old_clone);
    }
    CUgraph g = rotated ? chain_rotated(node) : chain(node);
    if (noted)
        cudahal_node_time_note(node[30], 50 * MS);
    size_t kernels;
    uintptr_t clone;
    EXPECT(ops->copy((uintptr_t)g, 0, &kernels, &clone) < 0 && kernels == KERNELS);
    MUST(cuGraphDestroy(g)); /* as an application may, once it instantiated its graph */
    /* Built waiting on a closed word, then moved to the open one, which the build registered. */
    static uint64_t closed;
    struct gp_graph_built twin;
    EXPECT(ops->twin_build(clone, ops->context(), 10 * MS, (noted ? 80 : 120) * MS,
                           (uint64_t)(uintptr_t)&closed, 0, &twin) == 0);
    if (!twin.twin)
        return 1;
    EXPECT(twin.open_word != 0);
    if (ops->twin_target(twin.twin, twin.open_word) != 0) {
        printf("FAIL: the wait nodes were not moved to the open word\n");
        return 1;
    }
    MUST(cuGraphLaunch((CUgraphExec)twin.exec, s));
    MUST(cuStreamSynchronize(s));
    EXPECT(ran == KERNELS && order_ok);
    CUfunction funcs[KERNELS + 1];
    int after_wait[KERNELS + 1];
    EXPECT(fake_cuda_graph_last_run(funcs, after_wait, KERNELS + 1) == KERNELS);
    char got[256] = "", want[256] = "";
    size_t used = 0, wanted = 0;
    for (int i = 0; i < KERNELS; i++) {
        bool expected = noted ? i == 19 || i == 30 || i == 31 || i == 50 : i && i % 5 == 0;
        if (after_wait[i])
            used += (size_t)snprintf(got + used, sizeof got - used, " %d", i);
        if (expected)
            wanted += (size_t)snprintf(want + wanted, sizeof want - wanted, " %d", i);
    }
    printf("wait nodes before kernel nodes:%s\n", got);
    if (strcmp(got, want)) {
        printf("FAIL: expected them before:%s\n", want);
        failures++;
    }
    EXPECT(twin.gates == (noted ? 4 : 11));
    EXPECT(twin.noted == (noted ? 1 : 0));
    ops->twin_destroy(twin.twin, false);
    MUST(cuStreamDestroy_v2(s));
    MUST(cuDevicePrimaryCtxRelease_v2(0));
    if (!failures)
        printf("ok %s\n", argv[1]);
    return failures ? 1 : 0;
}
