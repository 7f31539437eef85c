/*
 * gate_probe.cu - what a closed wait-value gate does on an NVIDIA GPU, measured before Level 2
 * (issue 14) builds on it. No gpuprio code is involved: the gate is a 64-bit word in shared host
 * memory, registered with the runtime, and a low-priority stream waits on it
 * (cuStreamWaitValue64, GEQ) before each of its kernels; "open" is a value far ahead of every
 * waiter, "closed" is 0.
 *
 * A high-priority client (an empty kernel, launch to synchronize, 3 ms apart) is timed next to a
 * low-priority load of SPIN_US-microsecond kernels covering every SM, kept DEPTH deep, in
 * another process (fork before CUDA starts; the gate word is a shared anonymous mapping) or in
 * the same process on a stream of the lowest hardware priority (the client's stream then has the
 * highest). Rows:
 *   alone         the client with nothing else on the GPU
 *   spin          the load without gates (what Level 1's admission faces)
 *   gated-open    the load with a gate before every kernel, never closed (the gates' cost)
 *   preempt       the client closes the gate, launches, synchronizes, opens it again
 *   blocked       the load's stream waits at a closed gate the whole time: does a context that
 *                 waits on a semaphore hold on to the GPU?
 * and the host cost of one cuStreamWaitValue64 call on an open gate. Prints one table.
 *
 * With two processes, GATE_PROBE_CLIENT_PRIO and GATE_PROBE_LOAD_PRIO give the client's and the
 * load's stream priorities ("greatest", "least" or a number; default the runtime's default): under
 * MPS (docs/mps.md) hardware priorities compare across processes. GATE_PROBE_ONE=0 leaves out the
 * one-process rows. GATE_PROBE_BLOCK_US=B makes the load fill every SM (two blocks of 1024
 * threads per SM, the most threads an SM holds, so that no other kernel's block fits beside
 * them) with blocks of B microseconds, SPIN_US / B waves of them per kernel: the hardware then
 * can start the client only when a block ends, at best (under MPS, with the client's stream
 * of higher priority) after the rest of one block.
 * GATE_PROBE_CHAIN=K makes each request a CUDA graph of K kernels of GATE_PROBE_CHAIN_US
 * (default 5) microseconds over every SM, timed on the GPU by events (a model's forward pass in
 * small: what a neighbour's stream does to the client between its kernels shows there), and
 * adds, after the one-process rows, what an open gate and an event record cost a stream on the
 * GPU per kernel. GATE_PROBE_LOAD_QUERY_US=N makes the blocked load query its stream and an
 * event behind the closed gate every N microseconds, as gpuprio's watcher polls a suspended
 * queue's marker (GPUPRIO_POLL_US): whether such queries cost the client.
 * GATE_PROBE_GRAPH=K makes each load kernel a CUDA graph of K kernels of SPIN_US / K
 * microseconds, and each gate a batch memory operation node (a 64-bit wait, as gpuprio's gates
 * inside graphs) before every one of them: whether a graph held at a wait node gives the GPU up
 * to another process as a stream held at cuStreamWaitValue64 does.
 * GATE_PROBE_FENCE=1 puts, before each gate of the plain load, a cuStreamWriteValue64 of the
 * gates fenced so far into a word of the load's own and a wait for that value: the fifth run
 * found that a closed gate often stops the load one kernel late, the stream's front end having
 * passed the next gate while a kernel ran; this fence makes the gate read after the kernel
 * before it ends. The preempt row then shows whether it stops the load one kernel sooner, and
 * the load's lines (kernels a second, per mode) what the fence costs it. (Twenty-eighth run: it
 * did with 1000-us kernels, made 400 and 2000 worse, and built into gpuprio it moved no tail:
 * docs/benchmarks/h200-run-28-fences.md.)
 *
 * Build: nvcc -O2 -arch=native bench/gpu/gate_probe.cu -o gate_probe -lcuda
 * Run:   ./gate_probe [SPIN_US [DEPTH [REQUESTS]]]   (defaults 400 16 300)
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#define OPEN (UINT64_C(1) << 62)
#define CLOSED UINT64_C(0)

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)
#define CKD(x)                                                                                     \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            cuGetErrorString(r_, &s_);                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_);                        \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

/* Shared between the two processes (an anonymous shared mapping made before fork). */
struct shared {
    volatile uint64_t gate;
    volatile uint32_t open32; /* always 1: a 32-bit gate that is open */
    volatile int load_mode;   /* 0 stop, 1 spin, 2 gated, 3 blocked */
    volatile int load_ready;
    volatile int load_quit;
    /* GATE_PROBE_FENCE: the load's stream writes the count of its fenced gates here, and waits
     * for it before each gate (written by the load's stream only). */
    volatile uint64_t done;
};

__global__ void spin(unsigned long long ns)
{
    unsigned long long start, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - start < ns);
}

__global__ void empty() {}

static double now_us()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int sms;
static unsigned spin_us = 400, depth = 16, requests = 300, block_us, query_us, graph_k, fence;
/* GATE_PROBE_GRAPH: the load's graphs, without and with a wait node before every kernel. */
static cudaGraphExec_t load_plain, load_gated;

/* One load kernel on s: every block spins spin_us, or (GATE_PROBE_BLOCK_US) block_us in waves
 * that fill every SM. */
static void launch_load(cudaStream_t s)
{
    if (block_us)
        spin<<<sms * 2 * std::max(1u, spin_us / block_us), 1024, 0, s>>>(1000ull * block_us);
    else
        spin<<<sms * 4, 128, 0, s>>>(1000ull * spin_us);
}

/* A graph of graph_k kernels of spin_us / graph_k over every SM, each behind a wait node on the
 * gate when gated (the wait node's dependencies are the previous kernel's). */
static cudaGraphExec_t make_load_graph(CUdeviceptr gate_dev, bool gated)
{
    CUgraph g;
    CKD(cuGraphCreate(&g, 0));
    CUgraphNode prev = nullptr;
    unsigned long long ns = 1000ull * spin_us / graph_k;
    for (unsigned i = 0; i < graph_k; i++) {
        if (gated) {
            CUstreamBatchMemOpParams op;
            memset(&op, 0, sizeof op);
            op.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
            op.waitValue.address = gate_dev;
            op.waitValue.value64 = 1;
            op.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
            CUDA_BATCH_MEM_OP_NODE_PARAMS p;
            memset(&p, 0, sizeof p);
            CKD(cuCtxGetCurrent(&p.ctx));
            p.count = 1;
            p.paramArray = &op;
            CUgraphNode w;
            CKD(cuGraphAddBatchMemOpNode(&w, g, prev ? &prev : nullptr, prev ? 1 : 0, &p));
            prev = w;
        }
        void *args[] = {&ns};
        cudaKernelNodeParams kp;
        memset(&kp, 0, sizeof kp);
        kp.func = (void *)spin;
        kp.gridDim = dim3(sms * 4);
        kp.blockDim = dim3(128);
        kp.kernelParams = args;
        cudaGraphNode_t k;
        CK(cudaGraphAddKernelNode(&k, (cudaGraph_t)g, (cudaGraphNode_t *)(prev ? &prev : nullptr),
                                  prev ? 1 : 0, &kp));
        prev = (CUgraphNode)k;
    }
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, (cudaGraph_t)g, 0));
    CKD(cuGraphDestroy(g));
    return e;
}

/* The load: kernels of spin_us over every SM, depth deep, each behind a gate when gated; when
 * blocked, only a wait on the closed gate (and a kernel behind it) is queued. Runs until mode
 * leaves want. */
static void run_load(shared *sh, cudaStream_t s, CUdeviceptr gate_dev, int want)
{
    std::vector<cudaEvent_t> ev(depth);
    for (auto &e : ev)
        CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    if (graph_k && !load_plain) {
        load_plain = make_load_graph(gate_dev, false);
        load_gated = make_load_graph(gate_dev, true);
    }
    if (want == 3 && graph_k) {
        CK(cudaGraphLaunch(load_gated, s));
        CK(cudaEventRecord(ev[0], s));
        sh->load_ready = 1;
        while (sh->load_mode == want)
            usleep(100);
        sh->gate = OPEN;
    } else if (want == 3) {
        CKD(cuStreamWaitValue64((CUstream)s, gate_dev, 1, CU_STREAM_WAIT_VALUE_GEQ));
        launch_load(s);
        CK(cudaEventRecord(ev[0], s));
        sh->load_ready = 1;
        /* As gpuprio's watcher does while the queue has a marker outstanding behind its gate. */
        while (sh->load_mode == want) {
            if (query_us) {
                (void)cudaEventQuery(ev[0]);
                (void)cudaStreamQuery(s);
            }
            usleep(query_us ? query_us : 100);
        }
        sh->gate = OPEN; /* let the stream drain */
    } else {
        /* GATE_PROBE_FENCE: before each gate, the stream writes the count of kernels before it
         * and waits for that write, so that the gate is read once the previous kernel ended
         * (without it the front end may pass the next gate while a kernel runs). */
        CUdeviceptr done_dev = gate_dev + ((uintptr_t)&sh->done - (uintptr_t)&sh->gate);
        double from = now_us();
        unsigned i = 0;
        sh->load_ready = 1;
        for (; sh->load_mode == want; i++) {
            cudaEvent_t e = ev[i % depth];
            if (i >= depth)
                CK(cudaEventSynchronize(e));
            if (graph_k)
                CK(cudaGraphLaunch(want == 2 ? load_gated : load_plain, s));
            else if (want == 2 && fence) { /* counted across rows: the word only grows */
                static uint64_t fenced;
                fenced++;
                CKD(cuStreamWriteValue64((CUstream)s, done_dev, fenced, 0));
                CKD(cuStreamWaitValue64((CUstream)s, done_dev, fenced, CU_STREAM_WAIT_VALUE_GEQ));
            }
            if (!graph_k && want == 2)
                CKD(cuStreamWaitValue64((CUstream)s, gate_dev, 1, CU_STREAM_WAIT_VALUE_GEQ));
            if (!graph_k)
                launch_load(s);
            CK(cudaEventRecord(e, s));
        }
        CK(cudaStreamSynchronize(s));
        printf("# load, mode %d%s: %.0f kernels a second\n", want,
               want == 2 && fence ? " (fenced gates)" : "", i / ((now_us() - from) / 1e6));
        /* Now: the load's process ends with _exit, which leaves stdio's buffer unwritten. */
        fflush(stdout);
    }
    CK(cudaStreamSynchronize(s));
    for (auto &e : ev)
        CK(cudaEventDestroy(e));
}

/* The load's side: runs whatever load sh->load_mode asks for, until sh->load_quit. */
static void serve_load(shared *sh, cudaStream_t s, CUdeviceptr gate_dev)
{
    while (!sh->load_quit) {
        int m = sh->load_mode;
        if (m)
            run_load(sh, s, gate_dev, m);
        else
            usleep(200);
    }
}

struct row {
    const char *name;
    std::vector<double> us;
};

static void print_row(const char *where, const row &r, double alone_p50)
{
    std::vector<double> v = r.us;
    std::sort(v.begin(), v.end());
    auto pct = [&](double p) { return v[std::min(v.size() - 1, (size_t)(p * v.size()))]; };
    printf("%-13s %-11s %8.1f %8.1f %8.1f %8.1f %8.1f  %6.2fx\n", where, r.name, pct(0.5), pct(0.9),
           pct(0.99), v.back(), v.front(), alone_p50 > 0 ? pct(0.5) / alone_p50 : 1.0);
}

/* GATE_PROBE_CHAIN=K: a request is a CUDA graph of K kernels of chain_us each over every SM
 * (like a model's forward pass), timed on the GPU by events around it, so that what another
 * process's stream does to the client's kernels between its launches shows without the host's
 * wake-up noise. */
static unsigned chain_k, chain_us = 5;
static cudaGraphExec_t chain_exec;

static void make_chain(cudaStream_t s)
{
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (unsigned i = 0; i < chain_k; i++)
        spin<<<sms, 128, 0, s>>>(1000ull * chain_us);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&chain_exec, g, 0));
    CK(cudaGraphDestroy(g));
}

/* One request: its round trip on the host, or with a chain, the chain's time on the GPU. */
static double request(cudaStream_t s, bool preempt, shared *sh)
{
    static cudaEvent_t ev[2];
    if (chain_k && !ev[0]) {
        CK(cudaEventCreate(&ev[0]));
        CK(cudaEventCreate(&ev[1]));
    }
    double t0 = now_us();
    if (preempt)
        sh->gate = CLOSED;
    if (chain_k) {
        CK(cudaEventRecord(ev[0], s));
        CK(cudaGraphLaunch(chain_exec, s));
        CK(cudaEventRecord(ev[1], s));
    } else {
        empty<<<1, 1, 0, s>>>();
    }
    CK(cudaStreamSynchronize(s));
    double t1 = now_us();
    if (preempt)
        sh->gate = OPEN;
    if (!chain_k)
        return t1 - t0;
    float ms;
    CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    return ms * 1e3;
}

/* The client's requests; with preempt, it closes the gate first and opens it after. */
static row client(const char *name, shared *sh, cudaStream_t s, bool preempt)
{
    row r{name, {}};
    if (chain_k && !chain_exec)
        make_chain(s);
    for (int i = 0; i < 20; i++) /* warm up */
        request(s, false, sh);
    for (unsigned i = 0; i < requests; i++) {
        usleep(3000);
        r.us.push_back(request(s, preempt, sh));
    }
    return r;
}

static CUdeviceptr register_gate(shared *sh)
{
    CK(cudaHostRegister((void *)sh, 4096, cudaHostRegisterMapped | cudaHostRegisterPortable));
    void *dev;
    CK(cudaHostGetDevicePointer(&dev, (void *)&sh->gate, 0));
    return (CUdeviceptr)dev;
}

static void check_support()
{
    CK(cudaFree(0));
    CUdevice d;
    CKD(cuCtxGetDevice(&d));
    int memops = 0, host = 0, mps = -1;
    CKD(cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d));
    CKD(cuDeviceGetAttribute(&host, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
                             d));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cuDeviceGetAttribute(&mps, (CUdevice_attribute)133 /* CU_DEVICE_ATTRIBUTE_MPS_ENABLED */, d);
    printf("# 64-bit stream memory operations: %d, host pointer for registered memory: %d, "
           "SMs: %d, MPS: %d\n",
           memops, host, sms, mps);
}

static const int modes[] = {1, 2, 2, 3};
static const char *names[] = {"spin", "gated-open", "preempt", "blocked"};

/* With a chain: what a gate costs the stream on the GPU. The chain's kernels are launched one by
 * one (the host stays ahead of 20-us kernels), each behind an open gate of the kind measured, or
 * followed by an event record (what a completion marker puts on the stream); the median chain
 * time over that of the bare chain, per kernel. */
static void gate_gpu_cost(shared *sh, CUdeviceptr gate_dev)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUdeviceptr dev_gate, open32;
    uint64_t open = OPEN;
    CKD(cuMemAlloc(&dev_gate, sizeof open));
    CKD(cuMemcpyHtoD(dev_gate, &open, sizeof open));
    sh->open32 = 1;
    CK(cudaHostGetDevicePointer((void **)&open32, (void *)&sh->open32, 0));
    cudaEvent_t ev[2], marker;
    CK(cudaEventCreate(&ev[0]));
    CK(cudaEventCreate(&ev[1]));
    CK(cudaEventCreateWithFlags(&marker, cudaEventDisableTiming));
    static const char *what[] = {"none", "wait64-host", "wait32-host", "wait64-device",
                                 "event-record"};
    double bare = 0;
    for (int v = 0; v < 5; v++) {
        std::vector<double> t;
        for (int rep = 0; rep < 41; rep++) {
            CK(cudaEventRecord(ev[0], s));
            for (unsigned i = 0; i < chain_k; i++) {
                if (v == 1)
                    CKD(cuStreamWaitValue64((CUstream)s, gate_dev, 1, CU_STREAM_WAIT_VALUE_GEQ));
                else if (v == 2)
                    CKD(cuStreamWaitValue32((CUstream)s, open32, 1, CU_STREAM_WAIT_VALUE_GEQ));
                else if (v == 3)
                    CKD(cuStreamWaitValue64((CUstream)s, dev_gate, 1, CU_STREAM_WAIT_VALUE_GEQ));
                spin<<<sms, 128, 0, s>>>(1000ull * chain_us);
                if (v == 4)
                    CK(cudaEventRecord(marker, s));
            }
            CK(cudaEventRecord(ev[1], s));
            CK(cudaStreamSynchronize(s));
            float ms;
            CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
            t.push_back(ms * 1e3);
        }
        std::sort(t.begin(), t.end());
        double med = t[t.size() / 2];
        if (v == 0)
            bare = med;
        printf(
            "# on the GPU, %u kernels of %u us, each with %-13s: %8.1f us, %+.2f us per kernel\n",
            chain_k, chain_us, what[v], med, (med - bare) / chain_k);
    }
    CK(cudaEventDestroy(ev[0]));
    CK(cudaEventDestroy(ev[1]));
    CK(cudaEventDestroy(marker));
    CKD(cuMemFree(dev_gate));
    CK(cudaStreamDestroy(s));
}

/* Wait-value host cost: calls per microsecond on an open gate, on an otherwise idle stream. */
static void wait_call_cost(CUdeviceptr gate_dev)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int rep = 0; rep < 3; rep++) {
        const int n = 20000;
        double t0 = now_us();
        for (int i = 0; i < n; i++)
            CKD(cuStreamWaitValue64((CUstream)s, gate_dev, 1, CU_STREAM_WAIT_VALUE_GEQ));
        double t1 = now_us();
        CK(cudaStreamSynchronize(s));
        double t2 = now_us();
        for (int i = 0; i < n; i++)
            empty<<<1, 1, 0, s>>>();
        double t3 = now_us();
        CK(cudaStreamSynchronize(s));
        printf("# host cost: cuStreamWaitValue64 %.3f us per call, empty launch %.3f us per "
               "call (%d calls each)\n",
               (t1 - t0) / n, (t3 - t2) / n, n);
    }
    CK(cudaStreamDestroy(s));
}

/* The client alone, then next to each kind of load (the load runs in another process or
 * thread, which follows sh->load_mode). */
static void run_rows(const char *where, shared *sh, cudaStream_t s)
{
    row alone = client("alone", sh, s, false);
    std::vector<double> a = alone.us;
    std::sort(a.begin(), a.end());
    double alone_p50 = a[a.size() / 2];
    print_row(where, alone, alone_p50);
    fflush(stdout);
    for (int k = 0; k < 4; k++) {
        sh->gate = modes[k] == 3 ? CLOSED : OPEN;
        sh->load_ready = 0;
        sh->load_mode = modes[k];
        while (!sh->load_ready)
            usleep(100);
        usleep(20000);
        row r = client(names[k], sh, s, k == 2);
        sh->load_mode = 0;
        usleep(20000);
        print_row(where, r, alone_p50);
        fflush(stdout);
    }
}

/* A stream of the priority the environment variable names (see the header). */
static cudaStream_t stream_of(const char *env)
{
    const char *v = getenv(env);
    int least, greatest, prio = 0;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    if (v && !strcmp(v, "greatest"))
        prio = greatest;
    else if (v && !strcmp(v, "least"))
        prio = least;
    else if (v)
        prio = atoi(v);
    cudaStream_t s;
    CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, prio));
    CK(cudaStreamGetPriority(s, &prio));
    printf("# %s: stream priority %d (range %d..%d)\n", env, prio, least, greatest);
    return s;
}

static void two_processes(shared *sh)
{
    sh->gate = OPEN;
    sh->load_mode = 0;
    pid_t pid = fork();
    if (pid == 0) { /* the load */
        check_support();
        CUdeviceptr gate_dev = register_gate(sh);
        cudaStream_t s = stream_of("GATE_PROBE_LOAD_PRIO");
        fflush(stdout);
        serve_load(sh, s, gate_dev);
        _exit(0);
    }
    check_support();
    cudaStream_t s = stream_of("GATE_PROBE_CLIENT_PRIO");
    run_rows("2 processes", sh, s);
    sh->load_quit = 1;
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        printf("# the load process failed (status %#x)\n", status);
}

static void *load_thread(void *arg)
{
    void **a = (void **)arg;
    shared *sh = (shared *)a[0];
    cudaStream_t s = (cudaStream_t)a[1];
    serve_load(sh, s, (CUdeviceptr)a[2]);
    return nullptr;
}

static void one_process(shared *sh)
{
    check_support();
    CUdeviceptr gate_dev = register_gate(sh);
    int least, greatest;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t hi, lo;
    CK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest));
    CK(cudaStreamCreateWithPriority(&lo, cudaStreamNonBlocking, least));
    sh->gate = OPEN;
    sh->load_mode = 0;
    sh->load_quit = 0;
    pthread_t t;
    void *args[3] = {sh, lo, (void *)gate_dev};
    pthread_create(&t, nullptr, load_thread, args);
    run_rows("1 process", sh, hi);
    sh->load_quit = 1;
    pthread_join(t, nullptr);
    wait_call_cost(gate_dev);
    if (chain_k)
        gate_gpu_cost(sh, gate_dev);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        spin_us = (unsigned)atoi(argv[1]);
    if (argc > 2)
        depth = (unsigned)atoi(argv[2]);
    if (argc > 3)
        requests = (unsigned)atoi(argv[3]);
    if (getenv("GATE_PROBE_BLOCK_US"))
        block_us = (unsigned)atoi(getenv("GATE_PROBE_BLOCK_US"));
    if (getenv("GATE_PROBE_LOAD_QUERY_US"))
        query_us = (unsigned)atoi(getenv("GATE_PROBE_LOAD_QUERY_US"));
    if (getenv("GATE_PROBE_CHAIN"))
        chain_k = (unsigned)atoi(getenv("GATE_PROBE_CHAIN"));
    if (getenv("GATE_PROBE_GRAPH"))
        graph_k = (unsigned)atoi(getenv("GATE_PROBE_GRAPH"));
    if (getenv("GATE_PROBE_FENCE"))
        fence = (unsigned)atoi(getenv("GATE_PROBE_FENCE"));
    if (getenv("GATE_PROBE_CHAIN_US"))
        chain_us = (unsigned)atoi(getenv("GATE_PROBE_CHAIN_US"));
    shared *sh =
        (shared *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    if (chain_k)
        printf("# client: a graph of %u kernels of %u us over every SM, its time on the GPU (us)",
               chain_k, chain_us);
    else
        printf("# client round trip (us)");
    printf(", %u requests 3 ms apart; load: %u-us kernels on every SM, %u deep", requests, spin_us,
           depth);
    if (block_us)
        printf(", filling every SM with %u-us blocks", block_us);
    if (graph_k)
        printf(", each a graph of %u kernels, gated by wait nodes", graph_k);
    putchar('\n');
    printf("%-13s %-11s %8s %8s %8s %8s %8s  %7s\n", "where", "row", "P50", "P90", "P99", "max",
           "min", "P50/alone");
    two_processes(sh); /* first: the parent has not started CUDA before it forks */
    const char *one = getenv("GATE_PROBE_ONE");
    if (!one || strcmp(one, "0"))
        one_process(sh);
    return 0;
}
