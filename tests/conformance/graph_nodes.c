/*
 * graph_nodes.c - graphs built node by node, as HIP 6.4 and later build them.
 *
 * Node types in HIP 6.4's numbering (Kernel 0 ... BatchMemOp 14, whatever the headers in use
 * say), edges and the topological order hipGraphGetNodes returns, clones and
 * hipGraphNodeFindInClone, batch memory operation nodes: a wait node holds the nodes after it
 * until a host word reaches 1 (fault "wait-value-ignored" lets them run at once), and an
 * executable graph's set-params reach only the launches made after them. Then the other changes
 * an executable graph takes (kernel set-params, hipGraphNodeSetEnabled, hipGraphExecUpdate),
 * child graphs and memory nodes. Nothing is timed: a "not yet" is looked at while a wait node
 * is known to hold, and a bound only turns a hang into a different output.
 */
#include "conf.h"

/* Newer than the 5.2.3 headers: the prototypes and types as upstream declares them. */
#include "../../src/shim/hip/hip_compat_shim.h"

/* hipGraphNodeType in HIP 6.4's numbering; 5.2.3's enum numbers from 1. */
static const char *const type_names[] = {"Kernel",
                                         "Memcpy",
                                         "Memset",
                                         "Host",
                                         "Graph",
                                         "Empty",
                                         "WaitEvent",
                                         "EventRecord",
                                         "ExtSemaphoreSignal",
                                         "ExtSemaphoreWait",
                                         "MemAlloc",
                                         "MemFree",
                                         "MemcpyFromSymbol",
                                         "MemcpyToSymbol",
                                         "BatchMemOp"};

#define BOUND_MS 30000u /* a wait that would hang ends here, and the output says so */

static conf_log order;
static hipStream_t s, s2;
static _Atomic uint64_t *words; /* hipHostMalloc'd, so that the device sees host writes */

static void print_type(const char *label, hipGraphNode_t n)
{
    hipGraphNodeType t = (hipGraphNodeType)-1;
    hipError_t e = hipGraphNodeGetType(n, &t);
    unsigned v = (unsigned)t;
    printf("%s -> %s, %u %s\n", label, conf_err(e), v,
           v < sizeof type_names / sizeof type_names[0] ? type_names[v] : "?");
}

static hipKernelNodeParams kernel_params(const void *k, void **args)
{
    hipKernelNodeParams p = {.blockDim = conf_dim(1),
                             .func = (void *)(uintptr_t)k,
                             .gridDim = conf_dim(1),
                             .kernelParams = args};
    return p;
}

/* Adds d[0] += value after deps. */
static hipError_t add_add(hipGraphNode_t *n, hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                          int *d, int value)
{
    void *args[] = {&d, &value};
    hipKernelNodeParams p = kernel_params(conf_k.add, args);
    return hipGraphAddKernelNode(n, g, deps, ndeps, &p);
}

/* Adds a kernel appending value to the order log after deps. */
static hipError_t add_log(hipGraphNode_t *n, hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                          int value)
{
    conf_log *log = &order;
    uint64_t ns = 0;
    void *args[] = {&log, &value, &ns};
    hipKernelNodeParams p = kernel_params(conf_k.log, args);
    return hipGraphAddKernelNode(n, g, deps, ndeps, &p);
}

/* One operation waiting until *word >= 1 (64 bits). */
static hipStreamBatchMemOpParams wait_op(_Atomic uint64_t *word)
{
    hipStreamBatchMemOpParams op;
    memset(&op, 0, sizeof op);
    op.waitValue.operation = hipStreamMemOpWaitValue64;
    op.waitValue.address = (void *)word;
    op.waitValue.value64 = 1;
    op.waitValue.flags = hipStreamWaitValueGte;
    return op;
}

/* The context a batch memory operation node needs (HIP 7.2 refuses NULL): deprecated, but the only
 * way to name one. */
static hipError_t current_ctx(hipCtx_t *ctx)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return hipCtxGetCurrent(ctx);
#pragma GCC diagnostic pop
}

static hipBatchMemOpNodeParams batch_params(hipStreamBatchMemOpParams *ops)
{
    hipCtx_t ctx = NULL;
    MUST(current_ctx(&ctx));
    hipBatchMemOpNodeParams p = {.ctx = ctx, .count = 1, .paramArray = ops, .flags = 0};
    return p;
}

static int read_dev(const int *d)
{
    return conf_read_int(d);
}

/* Whether s's work is done within BOUND_MS. */
static int stream_done(hipStream_t st)
{
    uint64_t deadline = conf_now_ms() + BOUND_MS;
    while (hipStreamQuery(st) == hipErrorNotReady)
        if (conf_now_ms() >= deadline)
            return 0;
        else
            conf_sleep_ms(1);
    return 1;
}

/*
 * After a launch on s of a wait node on words[i] and a kernel after it, with `before` entries in
 * the order log: that the wait holds the kernel, looked at once the simulator says a wait holds
 * (or the kernel ran, or BOUND_MS passed), then that the launch completes once the host sets the
 * word.
 */
static void held_until_set(const char *launch, int i, int before)
{
    uint64_t deadline = conf_now_ms() + BOUND_MS;
    while (hipsimGraphWaitsHolding() == 0 && conf_log_count(&order) <= before &&
           conf_now_ms() < deadline)
        conf_sleep_ms(1);
    printf("%s holds: %s\n", launch, conf_yes(hipsimGraphWaitsHolding() == 1));
    conf_log_print("order while it holds", &order);
    atomic_store(&words[i], 1);
    printf("word %d = 1\n", i);
    printf("%s done: %s\n", launch, conf_yes(stream_done(s)));
    conf_log_print("order", &order);
}

/* ---- node types ------------------------------------------------------------------------------ */

static void node_types(int *d)
{
    printf("-- node types, HIP 6.4 numbering\n");
    hipGraph_t g, child;
    hipGraphNode_t k, e, c, b, ma, mf;
    MUST(hipGraphCreate(&g, 0));
    MUST(hipGraphCreate(&child, 0));
    MUST(hipGraphAddEmptyNode(&e, child, NULL, 0));
    static _Atomic uint64_t word;
    static hipStreamBatchMemOpParams op;
    op = wait_op(&word);
    hipBatchMemOpNodeParams bp = batch_params(&op);
    hipMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = hipMemAllocationTypePinned;
    ap.poolProps.location.type = hipMemLocationTypeDevice;
    ap.bytesize = 64;
    SHOW("hipGraphAddKernelNode", add_add(&k, g, NULL, 0, d, 1));
    SHOW("hipGraphAddEmptyNode", hipGraphAddEmptyNode(&e, g, &k, 1));
    SHOW("hipGraphAddChildGraphNode", hipGraphAddChildGraphNode(&c, g, &e, 1, child));
    SHOW("hipGraphAddBatchMemOpNode", hipGraphAddBatchMemOpNode(&b, g, &c, 1, &bp));
    SHOW("hipGraphAddMemAllocNode", hipGraphAddMemAllocNode(&ma, g, &b, 1, &ap));
    printf("dptr set: %s\n", conf_yes(ap.dptr != NULL));
    SHOW("hipGraphAddMemFreeNode", hipGraphAddMemFreeNode(&mf, g, &ma, 1, ap.dptr));
    print_type("kernel", k);
    print_type("empty", e);
    print_type("child graph", c);
    print_type("batch memop", b);
    print_type("mem alloc", ma);
    print_type("mem free", mf);
    hipGraphNodeType t;
    SHOW("hipGraphNodeGetType(NULL)", hipGraphNodeGetType(NULL, &t));
    SHOW("hipGraphNodeGetType(k, NULL)", hipGraphNodeGetType(k, NULL));

    printf("captured: a kernel, a memset, a copy, a host function\n");
    hipGraph_t cg;
    conf_hlog hl = {&order, 99};
    MUST(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    MUST(conf_launch_add(s, d, 1));
    MUST(hipMemsetAsync(d, 0, sizeof(int), s));
    MUST(hipMemcpyAsync(d, d, sizeof(int), hipMemcpyDeviceToDevice, s));
    MUST(hipLaunchHostFunc(s, conf_host_log, &hl));
    MUST(hipStreamEndCapture(s, &cg));
    hipGraphNode_t nodes[4];
    size_t n = 4, ne = 0;
    SHOW("hipGraphGetNodes", hipGraphGetNodes(cg, nodes, &n));
    for (size_t i = 0; i < n; i++)
        print_type("  node", nodes[i]);
    SHOW("hipGraphGetEdges(count)", hipGraphGetEdges(cg, NULL, NULL, &ne));
    printf("edges: %zu\n", ne);
    MUST(hipGraphDestroy(cg));
    MUST(hipGraphDestroy(child));
    MUST(hipGraphDestroy(g));
}

/* ---- edges and order ------------------------------------------------------------------------- */

static hipGraphNode_t na, nb, nc;

static char name_of(hipGraphNode_t n)
{
    return n == na ? 'A' : n == nb ? 'B' : n == nc ? 'C' : n == NULL ? '0' : '?';
}

static void print_nodes(hipGraph_t g)
{
    hipGraphNode_t v[3];
    size_t n = 3;
    hipError_t e = hipGraphGetNodes(g, v, &n);
    printf("  nodes -> %s:", conf_err(e));
    for (size_t i = 0; e == hipSuccess && i < n; i++)
        printf(" %c", name_of(v[i]));
    printf("\n");
}

static void print_edges(hipGraph_t g)
{
    hipGraphNode_t from[4], to[4];
    size_t n = 0;
    MUST(hipGraphGetEdges(g, NULL, NULL, &n));
    size_t m = 4;
    hipError_t e = hipGraphGetEdges(g, from, to, &m);
    printf("  edges -> %s, %zu:", conf_err(e), n);
    for (size_t i = 0; i < m; i++)
        printf(" %c->%c", name_of(from[i]), name_of(to[i]));
    printf("\n");
}

static void edges(void)
{
    printf("-- edges and order\n");
    hipGraph_t g, other;
    hipGraphNode_t foreign;
    MUST(hipGraphCreate(&g, 0));
    MUST(hipGraphCreate(&other, 0));
    MUST(hipGraphAddEmptyNode(&foreign, other, NULL, 0));
    MUST(hipGraphAddEmptyNode(&na, g, NULL, 0));
    MUST(hipGraphAddEmptyNode(&nb, g, NULL, 0));
    MUST(hipGraphAddEmptyNode(&nc, g, NULL, 0));
    printf("A, B, C added in that order\n");
    SHOW("hipGraphAddDependencies(C->A, B->C)",
         hipGraphAddDependencies(g, (hipGraphNode_t[]){nc, nb}, (hipGraphNode_t[]){na, nc}, 2));
    print_nodes(g);
    print_edges(g);
    SHOW("hipGraphAddDependencies(C->A) again", hipGraphAddDependencies(g, &nc, &na, 1));
    SHOW("hipGraphAddDependencies(A->A)", hipGraphAddDependencies(g, &na, &na, 1));
    SHOW("hipGraphAddDependencies(A->node of another graph)",
         hipGraphAddDependencies(g, &na, &foreign, 1));
    SHOW("hipGraphRemoveDependencies(A->B), not an edge",
         hipGraphRemoveDependencies(g, &na, &nb, 1));
    print_edges(g);
    SHOW("hipGraphRemoveDependencies(C->A)", hipGraphRemoveDependencies(g, &nc, &na, 1));
    print_nodes(g);
    print_edges(g);

    hipGraphNode_t v[5] = {0};
    size_t n = 2;
    SHOW("hipGraphGetNodes(2 of 3)", hipGraphGetNodes(g, v, &n));
    printf("  %zu: %c %c\n", n, name_of(v[0]), name_of(v[1]));
    n = 5;
    SHOW("hipGraphGetNodes(5 for 3)", hipGraphGetNodes(g, v, &n));
    printf("  %zu: %c %c %c %c %c\n", n, name_of(v[0]), name_of(v[1]), name_of(v[2]), name_of(v[3]),
           name_of(v[4]));
    hipGraphNode_t from[1];
    n = 1;
    SHOW("hipGraphGetEdges(from without to)", hipGraphGetEdges(g, from, NULL, &n));

    hipGraphNode_t d;
    SHOW("hipGraphAddEmptyNode(after A, A)",
         hipGraphAddEmptyNode(&d, g, (hipGraphNode_t[]){na, na}, 2));
    SHOW("hipGraphAddEmptyNode(after another graph's node)",
         hipGraphAddEmptyNode(&d, g, &foreign, 1));
    SHOW("hipGraphAddEmptyNode(1 dependency, NULL)", hipGraphAddEmptyNode(&d, g, NULL, 1));

    printf("a cycle: A->B, B->C, C->A\n");
    SHOW("hipGraphAddDependencies(A->B, C->A)",
         hipGraphAddDependencies(g, (hipGraphNode_t[]){na, nc}, (hipGraphNode_t[]){nb, na}, 2));
    print_nodes(g);
    hipGraphExec_t x = NULL;
    SHOW("hipGraphInstantiate", hipGraphInstantiate(&x, g, NULL, NULL, 0));
    MUST(hipGraphDestroy(g));
    MUST(hipGraphDestroy(other));
}

/* ---- clones ---------------------------------------------------------------------------------- */

static void clones(int *d)
{
    printf("-- clone and find in clone\n");
    hipGraph_t g, other, clone, clone2, mem, none = NULL;
    hipGraphNode_t k1, k2, o, found = NULL, found2 = NULL, ma;
    MUST(hipGraphCreate(&g, 0));
    MUST(hipGraphCreate(&other, 0));
    MUST(add_add(&k1, g, NULL, 0, d, 1));
    MUST(add_add(&k2, g, &k1, 1, d, 10));
    MUST(hipGraphAddEmptyNode(&o, other, NULL, 0));
    SHOW("hipGraphClone", hipGraphClone(&clone, g));
    size_t n = 0, ne = 0;
    MUST(hipGraphGetNodes(clone, NULL, &n));
    MUST(hipGraphGetEdges(clone, NULL, NULL, &ne));
    printf("clone: %zu nodes, %zu edges\n", n, ne);
    SHOW("hipGraphNodeFindInClone(k2, clone)", hipGraphNodeFindInClone(&found, k2, clone));
    printf("  another node: %s\n", conf_yes(found != NULL && found != k2));
    print_type("  its type", found);
    hipGraphNodeType t;
    hipGraphNode_t dep[1];
    size_t m = 1;
    MUST(hipGraphGetEdges(clone, dep, (hipGraphNode_t[1]){0}, &m));
    SHOW("hipGraphNodeFindInClone(k1, clone)", hipGraphNodeFindInClone(&found2, k1, clone));
    printf("  it is the clone's edge's source: %s\n", conf_yes(found2 == dep[0]));
    SHOW("hipGraphNodeFindInClone(k1, the original)", hipGraphNodeFindInClone(&found, k1, g));
    SHOW("hipGraphNodeFindInClone(another graph's node, clone)",
         hipGraphNodeFindInClone(&found, o, clone));
    SHOW("hipGraphClone(clone)", hipGraphClone(&clone2, clone));
    SHOW("hipGraphNodeFindInClone(k1, clone of the clone)",
         hipGraphNodeFindInClone(&found, k1, clone2));
    MUST(hipGraphNodeGetType(found, &t));
    SHOW("hipGraphDestroy(original)", hipGraphDestroy(g));
    hipGraphExec_t x;
    SHOW("hipGraphInstantiate(clone)", hipGraphInstantiate(&x, clone, NULL, NULL, 0));
    conf_write_int(d, 0);
    SHOW("hipGraphLaunch", hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("d = %d\n", read_dev(d));

    hipMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = hipMemAllocationTypePinned;
    ap.poolProps.location.type = hipMemLocationTypeDevice;
    ap.bytesize = 16;
    MUST(hipGraphCreate(&mem, 0));
    MUST(hipGraphAddMemAllocNode(&ma, mem, NULL, 0, &ap));
    SHOW("hipGraphClone(with a memory allocation node)", hipGraphClone(&none, mem));
    printf("  no clone: %s\n", conf_yes(none == NULL));
    MUST(hipGraphExecDestroy(x));
    MUST(hipGraphDestroy(clone2));
    MUST(hipGraphDestroy(mem));
    MUST(hipGraphDestroy(clone));
    MUST(hipGraphDestroy(other));
}

/* ---- batch memory operation nodes ------------------------------------------------------------ */

static void batch_checks(hipGraph_t g)
{
    hipStreamBatchMemOpParams ops[257];
    for (int i = 0; i < 257; i++)
        ops[i] = wait_op(&words[0]);
    hipBatchMemOpNodeParams p = batch_params(ops);
    hipGraphNode_t n;
    p.count = 0;
    SHOW("  count 0", hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
    p.count = 257;
    SHOW("  count 257", hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
    p = batch_params(NULL);
    SHOW("  paramArray NULL", hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
    p = batch_params(ops);
    p.flags = 1;
    SHOW("  flags 1", hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
    p = batch_params(ops);
    p.ctx = NULL;
    SHOW("  ctx NULL", hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
    hipStreamBatchMemOpParams barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.operation = hipStreamMemOpBarrier;
    p = batch_params(&barrier);
    SHOW("  a barrier", hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
    p = batch_params(ops);
    p.count = 256;
    SHOW("  count 256", hipGraphAddBatchMemOpNode(&n, g, NULL, 0, &p));
}

static void wait_node(void)
{
    printf("-- a wait node holds the nodes after it until a host word reaches 1\n");
    hipCtx_t ctx = NULL;
    SHOW("hipCtxGetCurrent", current_ctx(&ctx));
    printf("context: %s\n", ctx ? "set" : "NULL");
    hipGraph_t g, scratch;
    hipGraphNode_t k1, w, k2;
    MUST(hipGraphCreate(&g, 0));
    MUST(hipGraphCreate(&scratch, 0));
    printf("hipGraphAddBatchMemOpNode checks:\n");
    batch_checks(scratch);
    MUST(hipGraphDestroy(scratch));

    static hipStreamBatchMemOpParams op;
    op = wait_op(&words[0]);
    hipBatchMemOpNodeParams p = batch_params(&op), got;
    MUST(add_log(&k1, g, NULL, 0, 1));
    SHOW("hipGraphAddBatchMemOpNode(wait word 0 >= 1)",
         hipGraphAddBatchMemOpNode(&w, g, &k1, 1, &p));
    MUST(add_log(&k2, g, &w, 1, 2));
    memset(&got, 0, sizeof got);
    SHOW("hipGraphBatchMemOpNodeGetParams", hipGraphBatchMemOpNodeGetParams(w, &got));
    printf("  count %u, flags %u, the caller's paramArray: %s, the context: %s\n", got.count,
           got.flags, conf_yes(got.paramArray == &op), conf_yes(got.ctx == p.ctx));
    SHOW("hipGraphBatchMemOpNodeGetParams(a kernel node)",
         hipGraphBatchMemOpNodeGetParams(k1, &got));

    hipGraphExec_t x;
    MUST(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    conf_log_reset(&order);
    uint64_t held = hipsimGraphWaitsHeld();
    SHOW("hipGraphLaunch", hipGraphLaunch(x, s));
    held_until_set("the launch", 0, 1);
    printf("waits that held: %llu, holding: %d\n",
           (unsigned long long)(hipsimGraphWaitsHeld() - held), hipsimGraphWaitsHolding());
    MUST(hipGraphExecDestroy(x));
    MUST(hipGraphDestroy(g));
}

static void exec_batch_params(void)
{
    printf("-- an executable graph's batch set-params reach the launches after it only\n");
    hipGraph_t g, other;
    hipGraphNode_t w, k, o;
    static hipStreamBatchMemOpParams on1, on2;
    on1 = wait_op(&words[1]);
    on2 = wait_op(&words[2]);
    atomic_store(&words[1], 1);
    hipBatchMemOpNodeParams p1 = batch_params(&on1), p2 = batch_params(&on2), got;
    MUST(hipGraphCreate(&g, 0));
    MUST(hipGraphCreate(&other, 0));
    MUST(hipGraphAddEmptyNode(&o, other, NULL, 0));
    MUST(hipGraphAddBatchMemOpNode(&w, g, NULL, 0, &p1));
    MUST(add_log(&k, g, &w, 1, 7));
    hipGraphExec_t x;
    MUST(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    printf("word 1 = 1, word 2 = 0; the node waits on word 1\n");

    conf_hold hold = {0};
    conf_log_reset(&order);
    MUST(conf_launch_hold(s, &hold));
    SHOW("launch 1, behind a held kernel", hipGraphLaunch(x, s));
    SHOW("hipGraphExecBatchMemOpNodeSetParams(word 2)",
         hipGraphExecBatchMemOpNodeSetParams(x, w, &p2));
    conf_release(&hold);
    printf("launch 1 done: %s\n", conf_yes(stream_done(s)));
    conf_log_print("order", &order);
    SHOW("launch 2", hipGraphLaunch(x, s));
    held_until_set("launch 2", 2, 1);

    SHOW("hipGraphExecBatchMemOpNodeSetParams(a kernel node)",
         hipGraphExecBatchMemOpNodeSetParams(x, k, &p2));
    SHOW("hipGraphExecBatchMemOpNodeSetParams(another graph's node)",
         hipGraphExecBatchMemOpNodeSetParams(x, o, &p2));
    p2.count = 0;
    SHOW("hipGraphExecBatchMemOpNodeSetParams(count 0)",
         hipGraphExecBatchMemOpNodeSetParams(x, w, &p2));
    p2.count = 1;
    memset(&got, 0, sizeof got);
    MUST(hipGraphBatchMemOpNodeGetParams(w, &got));
    printf("the graph's node still waits on word 1: %s\n", conf_yes(got.paramArray == &on1));
    SHOW("hipGraphBatchMemOpNodeSetParams(word 2)", hipGraphBatchMemOpNodeSetParams(w, &p2));
    MUST(hipGraphBatchMemOpNodeGetParams(w, &got));
    printf("now on word 2: %s\n", conf_yes(got.paramArray == &on2));
    MUST(hipGraphExecDestroy(x));
    MUST(hipGraphDestroy(g));
    MUST(hipGraphDestroy(other));
}

/* ---- other changes to an executable graph ---------------------------------------------------- */

static void exec_changes(int *d)
{
    printf("-- kernel set-params, enabling, update\n");
    hipGraph_t g, g2, g3, g4;
    hipGraphNode_t k, e, k2, k3, k3b, e4, err_node;
    MUST(hipGraphCreate(&g, 0));
    MUST(add_add(&k, g, NULL, 0, d, 1));
    MUST(hipGraphAddEmptyNode(&e, g, &k, 1));
    hipGraphExec_t x, x2;
    MUST(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    conf_write_int(d, 0);
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));

    int ten = 10;
    void *args[] = {&d, &ten};
    hipKernelNodeParams p = kernel_params(conf_k.add, args);
    SHOW("hipGraphExecKernelNodeSetParams(d += 10)", hipGraphExecKernelNodeSetParams(x, k, &p));
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));
    MUST(hipGraphInstantiate(&x2, g, NULL, NULL, 0));
    MUST(hipGraphLaunch(x2, s));
    MUST(hipStreamSynchronize(s));
    printf("a new executable graph of the same graph: d = %d\n", read_dev(d));
    hipKernelNodeParams bad = kernel_params((const void *)&ten, args);
    SHOW("hipGraphExecKernelNodeSetParams(unregistered function)",
         hipGraphExecKernelNodeSetParams(x, k, &bad));
    SHOW("hipGraphExecKernelNodeSetParams(the empty node)",
         hipGraphExecKernelNodeSetParams(x, e, &p));

    unsigned on = 9;
    SHOW("hipGraphNodeSetEnabled(k, 0)", hipGraphNodeSetEnabled(x, k, 0));
    SHOW("hipGraphNodeGetEnabled(k)", hipGraphNodeGetEnabled(x, k, &on));
    printf("  enabled: %u\n", on);
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));
    SHOW("hipGraphNodeSetEnabled(k, 1)", hipGraphNodeSetEnabled(x, k, 1));
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));
    SHOW("hipGraphNodeSetEnabled(the empty node, 0)", hipGraphNodeSetEnabled(x, e, 0));

    MUST(hipGraphCreate(&g2, 0));
    MUST(add_add(&k2, g2, NULL, 0, d, 100));
    MUST(hipGraphAddEmptyNode(&e4, g2, &k2, 1));
    hipGraphExecUpdateResult r = (hipGraphExecUpdateResult)99;
    err_node = (hipGraphNode_t)(uintptr_t)0x5e57;
    SHOW("hipGraphExecUpdate(d += 100)", hipGraphExecUpdate(x, g2, &err_node, &r));
    printf("  result %d\n", (int)r);
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));
    SHOW("hipGraphExecKernelNodeSetParams(the first graph's node, d += 10)",
         hipGraphExecKernelNodeSetParams(x, k, &p));
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));

    MUST(hipGraphCreate(&g3, 0));
    MUST(add_add(&k3, g3, NULL, 0, d, 1));
    MUST(add_add(&k3b, g3, &k3, 1, d, 1));
    MUST(hipGraphAddEmptyNode(&e4, g3, &k3b, 1));
    SHOW("hipGraphExecUpdate(three nodes)", hipGraphExecUpdate(x, g3, &err_node, &r));
    printf("  result %d, error node NULL: %s\n", (int)r, conf_yes(err_node == NULL));
    MUST(hipGraphCreate(&g4, 0));
    MUST(hipGraphAddEmptyNode(&e4, g4, NULL, 0));
    MUST(hipGraphAddEmptyNode(&k3, g4, &e4, 1));
    SHOW("hipGraphExecUpdate(an empty node first)", hipGraphExecUpdate(x, g4, &err_node, &r));
    printf("  result %d, error node is it: %s\n", (int)r, conf_yes(err_node == e4));
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));
    MUST(hipGraphExecDestroy(x));
    MUST(hipGraphExecDestroy(x2));
    MUST(hipGraphDestroy(g));
    MUST(hipGraphDestroy(g2));
    MUST(hipGraphDestroy(g3));
    MUST(hipGraphDestroy(g4));
}

/* ---- child graphs and memory nodes ----------------------------------------------------------- */

static void child_and_memory(int *d)
{
    printf("-- child graphs and memory nodes\n");
    hipGraph_t child, g, mem;
    hipGraphNode_t ck, e, c, k, later, ma, mf, n;
    MUST(hipGraphCreate(&child, 0));
    MUST(add_add(&ck, child, NULL, 0, d, 1000));
    MUST(hipGraphCreate(&g, 0));
    MUST(hipGraphAddEmptyNode(&e, g, NULL, 0));
    SHOW("hipGraphAddChildGraphNode", hipGraphAddChildGraphNode(&c, g, &e, 1, child));
    MUST(add_add(&k, g, &c, 1, d, 1));
    MUST(add_add(&later, child, &ck, 1, d, 5000));
    printf("the child graph gets another node after it was added\n");
    hipGraphExec_t x;
    MUST(hipGraphInstantiate(&x, g, NULL, NULL, 0));
    conf_write_int(d, 0);
    MUST(hipGraphLaunch(x, s));
    MUST(hipStreamSynchronize(s));
    printf("launch: d = %d\n", read_dev(d));
    SHOW("hipGraphAddChildGraphNode(NULL)", hipGraphAddChildGraphNode(&n, g, NULL, 0, NULL));

    hipMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = hipMemAllocationTypePinned;
    ap.poolProps.location.type = hipMemLocationTypeDevice;
    MUST(hipGraphCreate(&mem, 0));
    ap.dptr = (void *)&ap;
    SHOW("hipGraphAddMemAllocNode(0 bytes)", hipGraphAddMemAllocNode(&ma, mem, NULL, 0, &ap));
    printf("  dptr NULL: %s\n", conf_yes(ap.dptr == NULL));
    ap.bytesize = 32;
    SHOW("hipGraphAddMemAllocNode(32 bytes)", hipGraphAddMemAllocNode(&ma, mem, NULL, 0, &ap));
    SHOW("hipGraphAddMemFreeNode(memory it did not allocate)",
         hipGraphAddMemFreeNode(&mf, mem, &ma, 1, d));
    SHOW("hipGraphAddMemFreeNode(its memory)", hipGraphAddMemFreeNode(&mf, mem, &ma, 1, ap.dptr));
    SHOW("hipGraphAddMemFreeNode(its memory again)",
         hipGraphAddMemFreeNode(&n, mem, &mf, 1, ap.dptr));
    SHOW("hipGraphAddChildGraphNode(a graph with memory nodes)",
         hipGraphAddChildGraphNode(&n, g, NULL, 0, mem));
    hipGraphExec_t xm;
    SHOW("hipGraphInstantiate", hipGraphInstantiate(&xm, mem, NULL, NULL, 0));
    SHOW("hipGraphLaunch", hipGraphLaunch(xm, s));
    MUST(hipStreamSynchronize(s));
    MUST(hipGraphExecDestroy(xm));
    MUST(hipGraphExecDestroy(x));
    MUST(hipGraphDestroy(mem));
    MUST(hipGraphDestroy(g));
    MUST(hipGraphDestroy(child));
}

/* ---- stream ids ------------------------------------------------------------------------------ */

static void stream_ids(void)
{
    printf("-- stream ids\n");
    unsigned long long a = 0, a2 = 0, b = 0;
    SHOW("hipStreamGetId(s)", hipStreamGetId(s, &a));
    MUST(hipStreamGetId(s, &a2));
    SHOW("hipStreamGetId(s2)", hipStreamGetId(s2, &b));
    printf("the same for s twice: %s; another for s2: %s\n", conf_yes(a == a2), conf_yes(a != b));
    SHOW("hipStreamGetId(s, NULL)", hipStreamGetId(s, NULL));
}

int main(void)
{
    conf_init();
    int *d;
    MUST(hipStreamCreate(&s));
    MUST(hipStreamCreate(&s2));
    MUST(hipMalloc((void **)&d, sizeof(int)));
    MUST(hipHostMalloc((void **)&words, 4 * sizeof *words, 0));
    for (int i = 0; i < 4; i++)
        atomic_store(&words[i], 0);
    conf_write_int(d, 0);

    node_types(d);
    edges();
    clones(d);
    wait_node();
    exec_batch_params();
    exec_changes(d);
    child_and_memory(d);
    stream_ids();

    MUST(hipDeviceSynchronize());
    MUST(hipHostFree((void *)words));
    MUST(hipFree(d));
    MUST(hipStreamDestroy(s2));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
