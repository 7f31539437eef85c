/*
 * board_worker.c - one process of the cross-process tests (board_test.c starts several on one
 * shared simulated device, each under the shim with its own GPUPRIO_PRIORITY).
 *
 *   board_worker TAG burst BURSTS KERNELS KERNEL_US GAP_US
 *       BURSTS bursts of KERNELS kernels, GAP_US apart, each burst synchronized
 *   board_worker TAG saturate KERNELS KERNEL_US
 *       KERNELS kernels back to back, synchronized at the end
 *   board_worker TAG hold KERNEL_US
 *       waits for a line on stdin, launches one kernel, says "launched", synchronizes
 *   board_worker TAG capture KERNELS KERNEL_US REPLAYS
 *       captures KERNELS kernels into a graph, says "nodes N" (the graph's), replays it REPLAYS
 *       times, then launches KERNELS kernels directly, synchronizes
 *   board_worker TAG mixed KERNELS KERNEL_US BURSTS
 *       a second stream (created after the first, so GPUPRIO_STREAM_PRIORITIES can rank the
 *       two) runs BURSTS single kernels tagged 4, 2 ms apart, each synchronized, while a thread
 *       saturates the first stream with KERNELS kernels
 *   board_worker TAG depend ROUNDS KERNELS KERNEL_US
 *       a second stream (created after the first, as in mixed) depends on the first: each round
 *       launches KERNELS kernels on the first stream, records an event there, has the second
 *       stream wait for it and run a kernel tagged 4, runs a kernel tagged 5 on the null stream
 *       (which waits for both), and synchronizes the device; says "slowest N ms" (a round's)
 *   board_worker TAG signal KERNELS KERNEL_US FILE
 *       KERNELS kernels, then a write of 1 from the stream (hipStreamWriteValue32) to the first
 *       word of FILE, mapped shared and registered with the runtime; synchronized at the end
 *   board_worker TAG drop KERNELS KERNEL_US
 *       KERNELS kernels on a second stream, destroyed at once (its work still queued), then the
 *       device synchronized
 *   board_worker TAG retire HOW KERNELS KERNEL_US
 *       queues KERNELS kernels, says "queued" and waits for a line; then retires their queue as
 *       HOW says, says "retired" and synchronizes the device, then says "synchronized". HOW:
 *       keep (on its stream, kept), destroy (on a second stream, destroyed), exit (on the null
 *       stream from a thread, which then exits), alive (the same, the thread kept alive)
 *   board_worker TAG refuse HOW KERNEL_US
 *       queues one kernel of KERNEL_US and waits until the device started it, then launches on
 *       the same stream a kernel that the runtime refuses (an empty block:
 *       hipErrorInvalidConfiguration), or, where HOW begins with "capture-", a 1-us kernel during
 *       whose launch another thread begins a capture (on a stream of its own, ended after the
 *       launch returned: hipsimBeforeNextLaunch); then retires the stream as the rest of HOW
 *       says: exit (the null stream of a thread, which then exits), destroy (a second stream,
 *       destroyed); says "retired" and waits for a line; then synchronizes the device and says
 *       "synchronized"
 *   board_worker TAG exit KERNELS KERNEL_US
 *       queues KERNELS kernels and calls exit() with them queued; a handler registered before
 *       gpuprio's (so run after it) says "left", synchronizes the device, says "synchronized"
 *   board_worker TAG sticky KERNEL_US
 *       leaves an error pending (hipSetDevice of a device that does not exist), launches one
 *       kernel, says "last error NAME" (hipGetLastError's), synchronizes
 *   board_worker TAG sticky-null KERNEL_US
 *       the same on the null stream, twice: the second launch after hipGetLastError cleared it
 *   board_worker TAG undestroyed KERNELS KERNEL_US LONG_US
 *       on a second stream: KERNELS kernels, synchronized; a destroy that fails (run with
 *       HIPSIM_REFUSE_STREAM_DESTROY=1); KERNELS kernels and one of LONG_US (of the same cost key,
 *       so predicted as short); 100 ms later, while the long one still runs, says "in flight N,
 *       drained D, markers M for C commands" (gpuprio's commands in flight on the stream, what a
 *       50-ms gpuprio_stream_drain returned, the events recorded for the commands since the
 *       destroy); then synchronizes, says "drained D" (gpuprio_stream_drain, at most 5 s) and
 *       "completed X of Y", and destroys the stream (now for good)
 *   board_worker TAG await FILE
 *       the stream waits on the device (hipStreamWaitValue32) until FILE's first word is 1, then
 *       runs a 1-ms kernel; synchronized; says "waited N ms" (from the wait's submission)
 *
 * With BOARD_WORKER_LINGER=1 it says "worked" once its work is done and waits for a line on stdin
 * before it reads its stream's statistics and ends (so that a test can keep it alive, or have its
 * statistics read once nothing changes them any more).
 *
 * With BOARD_WORKER_MARKERS=1 it also prints, before "held", "markers N for M commands, C of S
 * completed": the events recorded in the process (gpuprio's completion markers) and its stream's
 * commands since it started its work, then of all its stream's commands the ones gpuprio saw
 * reached once it had drained the stream (gpuprio_stream_drain, at most 2 s).
 *
 * Every kernel's trace entry carries TAG << 16 | burst. The worker prints "ready" once its
 * stream exists, then waits for a line on stdin before it starts (so that a test starts the
 * work of every process at once, however slowly each process came up), and prints at the end
 * "held N us, suspended M times" (its stream's time held on the host, and suspensions), then
 * "done N" with its stream's gpuprio priority.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../sched/sched_test.h"

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

struct saturation {
    const void *kernel;
    hipStream_t s;
    int kernels;
    uint64_t ns, tag;
};

/* FILE's first word, mapped shared with every process that maps it, as the device sees it. */
static uint32_t *shared_word(const char *file)
{
    int fd = open(file, O_RDWR);
    void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0)
        close(fd);
    if (p == MAP_FAILED) {
        perror(file);
        exit(2);
    }
    void *dev;
    MUST(hipHostRegister(p, 4096, hipHostRegisterMapped));
    MUST(hipHostGetDevicePointer(&dev, p, 0));
    return dev;
}

static uint64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* retire's thread: queues its kernels on the null stream, then waits to be let go. */
struct null_stream_work {
    const void *kernel;
    int kernels;
    uint64_t ns, tag;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool queued, go;
};

static void *queue_on_null_stream(void *arg)
{
    struct null_stream_work *w = arg;
    for (int i = 0; i < w->kernels; i++)
        MUST(busy_launch(w->kernel, w->ns, w->tag, NULL));
    pthread_mutex_lock(&w->mu);
    w->queued = true;
    pthread_cond_broadcast(&w->cv);
    while (!w->go)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void say(const char *what)
{
    printf("%s\n", what);
    fflush(stdout);
}

static void retire(const char *how, const void *kernel, hipStream_t s, int kernels, uint64_t ns,
                   uint64_t tag)
{
    char line[16];
    bool on_thread = !strcmp(how, "exit") || !strcmp(how, "alive");
    struct null_stream_work w = {
        kernel, kernels, ns, tag, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
        false,  false};
    pthread_t t;
    hipStream_t d = s;
    if (on_thread) {
        if (pthread_create(&t, NULL, queue_on_null_stream, &w) != 0)
            exit(2);
        pthread_mutex_lock(&w.mu);
        while (!w.queued)
            pthread_cond_wait(&w.cv, &w.mu);
        pthread_mutex_unlock(&w.mu);
    } else {
        if (!strcmp(how, "destroy"))
            MUST(hipStreamCreate(&d));
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, d));
    }
    say("queued");
    if (!fgets(line, sizeof line, stdin))
        exit(2);
    if (!strcmp(how, "destroy"))
        MUST(hipStreamDestroy(d));
    bool joined = !strcmp(how, "exit");
    if (on_thread) {
        pthread_mutex_lock(&w.mu);
        w.go = joined; /* "alive": kept alive until the device is synchronized */
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
        if (joined)
            pthread_join(t, NULL);
    }
    say("retired");
    MUST(hipDeviceSynchronize());
    say("synchronized");
    if (on_thread && !joined) {
        pthread_mutex_lock(&w.mu);
        w.go = true;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(t, NULL);
    }
}

/* A launch the runtime refuses (an empty block), which a gate may already stand before. */
static void launch_refused(const void *kernel, hipStream_t s)
{
    uint64_t ns = 1000, tag = 0;
    void *args[] = {&ns, &tag};
    dim3 one = {1, 1, 1}, empty = {0, 1, 1};
    EXPECT(hipLaunchKernel(kernel, one, empty, args, 0, s) == hipErrorInvalidConfiguration);
    EXPECT(hipGetLastError() == hipErrorInvalidConfiguration);
}

/* The capture that another thread begins during a launch (refuse capture-HOW): step 1 when it
 * has begun, 2 when it may end. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int step;
    pthread_t thread;
} capturer = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void capturer_step(int step, bool wait)
{
    pthread_mutex_lock(&capturer.mu);
    if (wait) {
        while (capturer.step < step)
            pthread_cond_wait(&capturer.cv, &capturer.mu);
    } else {
        capturer.step = step;
        pthread_cond_broadcast(&capturer.cv);
    }
    pthread_mutex_unlock(&capturer.mu);
}

static void *capture_elsewhere(void *unused)
{
    (void)unused;
    hipStream_t s;
    hipGraph_t g;
    MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    MUST(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
    capturer_step(1, false);
    capturer_step(2, true);
    MUST(hipStreamEndCapture(s, &g));
    MUST(hipGraphDestroy(g));
    MUST(hipStreamDestroy(s));
    return NULL;
}

static void begin_capture_elsewhere(void *unused)
{
    (void)unused;
    if (pthread_create(&capturer.thread, NULL, capture_elsewhere, NULL) != 0)
        exit(2);
    capturer_step(1, true);
}

/* A launch that a capture begun on another thread meets at the runtime, after gpuprio admitted
 * it (so a gate may stand before it): the launch is not captured, but gpuprio follows no marker
 * while a capture is in progress. */
static void launch_during_capture(const void *kernel, hipStream_t s)
{
    hipsimBeforeNextLaunch(begin_capture_elsewhere, NULL);
    MUST(busy_launch(kernel, 1000, 0, s));
    capturer_step(2, false);
    pthread_join(capturer.thread, NULL);
}

/* What refuse puts behind its kernel: a refused launch, or one during a capture. */
static void (*launch_behind)(const void *kernel, hipStream_t s) = launch_refused;

/* refuse's kernel: busy, and says when the device started it. */
static atomic_bool announced_started;
static uint64_t announced_kernel(hipsimLaunch *l)
{
    atomic_store(&announced_started, true);
    return busy_kernel(l);
}

/* Launches an announced kernel on s and returns once the device started it (so that it passed
 * its gate), or exits after 20 s. */
static void launch_started(const void *kernel, uint64_t ns, uint64_t tag, hipStream_t s)
{
    atomic_store(&announced_started, false);
    MUST(busy_launch(kernel, ns, tag, s));
    for (int i = 0; i < 20000 && !atomic_load(&announced_started); i++)
        sleep_us(1000);
    if (!atomic_load(&announced_started))
        exit(2);
}

/* refuse's thread: its kernel, then the refused launch, on the null stream; then it ends. */
static void *refuse_on_null_stream(void *arg)
{
    struct null_stream_work *w = arg;
    launch_started(w->kernel, w->ns, w->tag, NULL);
    launch_behind(w->kernel, NULL);
    return NULL;
}

static void refuse(const char *how, const void *kernel, uint64_t ns, uint64_t tag)
{
    char line[16];
    if (!strncmp(how, "capture-", 8)) {
        launch_behind = launch_during_capture;
        how += 8;
    }
    if (!strcmp(how, "exit")) {
        struct null_stream_work w = {.kernel = kernel, .kernels = 1, .ns = ns, .tag = tag};
        pthread_t t;
        if (pthread_create(&t, NULL, refuse_on_null_stream, &w) != 0)
            exit(2);
        pthread_join(t, NULL);
    } else {
        hipStream_t d;
        MUST(hipStreamCreate(&d));
        launch_started(kernel, ns, tag, d);
        launch_behind(kernel, d);
        MUST(hipStreamDestroy(d));
    }
    say("retired");
    if (!fgets(line, sizeof line, stdin))
        exit(2);
    MUST(hipDeviceSynchronize());
    say("synchronized");
}

static void synchronize_at_exit(void)
{
    say("left");
    MUST(hipDeviceSynchronize());
    say("synchronized");
}

static void *saturate(void *arg)
{
    struct saturation *w = arg;
    for (int i = 0; i < w->kernels; i++)
        MUST(busy_launch(w->kernel, w->ns, w->tag, w->s));
    MUST(hipStreamSynchronize(w->s));
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: see board_worker.c\n");
        return 2;
    }
    uint64_t tag = strtoull(argv[1], NULL, 10) << 16;
    const char *mode = argv[2];
    if (strcmp(mode, "exit") == 0)
        atexit(synchronize_at_exit); /* before gpuprio's own: it runs after them */
    struct gp_api api = gp_api_find();
    const void *kernel = busy_register();
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    hipStream_t second = NULL;
    if (strcmp(mode, "mixed") == 0 || strcmp(mode, "depend") == 0) {
        MUST(hipStreamCreate(&second));
        warm_up(second);
    }
    /* Streams that never run anything, like PyTorch's pools (BOARD_WORKER_IDLE_STREAMS). */
    const char *idle = getenv("BOARD_WORKER_IDLE_STREAMS");
    for (int i = idle ? atoi(idle) : 0; i > 0; i--) {
        hipStream_t unused;
        MUST(hipStreamCreate(&unused));
    }
    warm_up(s);
    printf("ready\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 2;
    const char *markers = getenv("BOARD_WORKER_MARKERS");
    bool count_markers = markers && !strcmp(markers, "1");
    struct gpuprio_queue_stats before = {0};
    uint64_t records = 0;
    if (count_markers) {
        EXPECT(api.stream_stats(s, &before) == 0);
        records = hipsimEventRecords();
    }
    if (strcmp(mode, "burst") == 0 && argc == 7) {
        int bursts = atoi(argv[3]), kernels = atoi(argv[4]);
        uint64_t ns = strtoull(argv[5], NULL, 10) * 1000;
        long gap = atol(argv[6]);
        for (int b = 1; b <= bursts; b++) {
            sleep_us(gap);
            for (int k = 0; k < kernels; k++)
                MUST(busy_launch(kernel, ns, tag | (uint64_t)b, s));
            MUST(hipStreamSynchronize(s));
        }
    } else if (strcmp(mode, "saturate") == 0 && argc == 5) {
        int kernels = atoi(argv[3]);
        uint64_t ns = strtoull(argv[4], NULL, 10) * 1000;
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, s));
        MUST(hipStreamSynchronize(s));
    } else if (strcmp(mode, "drop") == 0 && argc == 5) {
        int kernels = atoi(argv[3]);
        uint64_t ns = strtoull(argv[4], NULL, 10) * 1000;
        hipStream_t d;
        MUST(hipStreamCreate(&d));
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, d));
        MUST(hipStreamDestroy(d));
        MUST(hipDeviceSynchronize());
    } else if (strcmp(mode, "retire") == 0 && argc == 6) {
        retire(argv[3], kernel, s, atoi(argv[4]), strtoull(argv[5], NULL, 10) * 1000, tag);
    } else if (strcmp(mode, "refuse") == 0 && argc == 5) {
        size_t sizes[] = {sizeof(uint64_t), sizeof(uint64_t)};
        const void *announced = hipsimRegisterKernel("announced", announced_kernel, 2, sizes);
        refuse(argv[3], announced, strtoull(argv[4], NULL, 10) * 1000, tag);
    } else if (strcmp(mode, "exit") == 0 && argc == 5) {
        int kernels = atoi(argv[3]);
        uint64_t ns = strtoull(argv[4], NULL, 10) * 1000;
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, s));
        say("queued");
        if (!fgets(line, sizeof line, stdin))
            return 2;
        exit(failures != 0);
    } else if (strcmp(mode, "sticky") == 0 && argc == 4) {
        EXPECT(hipSetDevice(99) != hipSuccess);
        MUST(busy_launch(kernel, strtoull(argv[3], NULL, 10) * 1000, tag, s));
        printf("last error %s\n", hipGetErrorName(hipGetLastError()));
        fflush(stdout);
        MUST(hipStreamSynchronize(s));
    } else if (strcmp(mode, "sticky-null") == 0 && argc == 4) {
        for (int round = 0; round < 2; round++) {
            EXPECT(hipSetDevice(99) != hipSuccess);
            MUST(busy_launch(kernel, strtoull(argv[3], NULL, 10) * 1000, tag, NULL));
            printf("last error %s\n", hipGetErrorName(hipGetLastError()));
            fflush(stdout);
            MUST(hipStreamSynchronize(NULL));
        }
    } else if (strcmp(mode, "hold") == 0 && argc == 4) {
        if (!fgets(line, sizeof line, stdin))
            return 2;
        MUST(busy_launch(kernel, strtoull(argv[3], NULL, 10) * 1000, tag, s));
        printf("launched\n");
        fflush(stdout);
        MUST(hipStreamSynchronize(s));
    } else if (strcmp(mode, "capture") == 0 && argc == 6) {
        int kernels = atoi(argv[3]), replays = atoi(argv[5]);
        uint64_t ns = strtoull(argv[4], NULL, 10) * 1000;
        hipGraph_t g;
        hipGraphExec_t ge;
        MUST(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, s));
        MUST(hipStreamEndCapture(s, &g));
        size_t nodes = 0;
        MUST(hipGraphGetNodes(g, NULL, &nodes));
        printf("nodes %zu\n", nodes);
        fflush(stdout);
        MUST(hipGraphInstantiate(&ge, g, NULL, NULL, 0));
        for (int r = 0; r < replays; r++)
            MUST(hipGraphLaunch(ge, s));
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, s));
        MUST(hipStreamSynchronize(s));
        MUST(hipGraphExecDestroy(ge));
        MUST(hipGraphDestroy(g));
    } else if (strcmp(mode, "mixed") == 0 && argc == 6) {
        struct saturation w = {kernel, s, atoi(argv[3]), strtoull(argv[4], NULL, 10) * 1000, tag};
        pthread_t t;
        if (pthread_create(&t, NULL, saturate, &w) != 0)
            return 2;
        for (int b = atoi(argv[5]); b > 0; b--) {
            sleep_us(2000);
            MUST(busy_launch(kernel, w.ns, UINT64_C(4) << 16, second));
            MUST(hipStreamSynchronize(second));
        }
        pthread_join(t, NULL);
        MUST(hipStreamDestroy(second));
    } else if (strcmp(mode, "depend") == 0 && argc == 6) {
        int kernels = atoi(argv[4]);
        uint64_t ns = strtoull(argv[5], NULL, 10) * 1000, slowest = 0;
        hipEvent_t e;
        MUST(hipEventCreateWithFlags(&e, hipEventDisableTiming));
        for (int r = atoi(argv[3]); r > 0; r--) {
            uint64_t from = ms_now();
            for (int k = 0; k < kernels; k++)
                MUST(busy_launch(kernel, ns, tag, s));
            MUST(hipEventRecord(e, s));
            MUST(hipStreamWaitEvent(second, e, 0));
            MUST(busy_launch(kernel, ns, UINT64_C(4) << 16, second));
            MUST(busy_launch(kernel, ns, UINT64_C(5) << 16, NULL));
            MUST(hipDeviceSynchronize());
            if (ms_now() - from > slowest)
                slowest = ms_now() - from;
        }
        MUST(hipEventDestroy(e));
        MUST(hipStreamDestroy(second));
        printf("slowest %llu ms\n", (unsigned long long)slowest);
        fflush(stdout);
    } else if (strcmp(mode, "signal") == 0 && argc == 6) {
        uint32_t *word = shared_word(argv[5]);
        uint64_t ns = strtoull(argv[4], NULL, 10) * 1000;
        for (int k = atoi(argv[3]); k > 0; k--)
            MUST(busy_launch(kernel, ns, tag, s));
        MUST(hipStreamWriteValue32(s, word, 1, 0));
        MUST(hipStreamSynchronize(s));
    } else if (strcmp(mode, "undestroyed") == 0 && argc == 6) {
        int kernels = atoi(argv[3]);
        uint64_t ns = strtoull(argv[4], NULL, 10) * 1000,
                 long_ns = strtoull(argv[5], NULL, 10) * 1000;
        hipStream_t d;
        MUST(hipStreamCreate(&d));
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, d));
        MUST(hipStreamSynchronize(d));
        EXPECT(hipStreamDestroy(d) == hipErrorUnknown);
        EXPECT(hipGetLastError() == hipErrorUnknown);
        uint64_t recorded = hipsimEventRecords();
        for (int k = 0; k < kernels; k++)
            MUST(busy_launch(kernel, ns, tag, d));
        MUST(busy_launch(kernel, long_ns, tag | 1, d));
        recorded = hipsimEventRecords() - recorded;
        sleep_us(100000);
        struct gpuprio_queue_stats st = {0};
        EXPECT(hipStreamQuery(d) == hipErrorNotReady); /* the long kernel runs... */
        EXPECT(api.stream_stats(d, &st) == 0);
        int drained = api.stream_drain(d, 50);
        EXPECT(hipStreamQuery(d) == hipErrorNotReady); /* ... throughout */
        printf("in flight %u, drained %d, markers %llu for %d commands\n", st.in_flight, drained,
               (unsigned long long)recorded, kernels + 1);
        MUST(hipStreamSynchronize(d));
        printf("drained %d\n", api.stream_drain(d, 5000));
        EXPECT(api.stream_stats(d, &st) == 0);
        printf("completed %llu of %llu\n", (unsigned long long)st.completed,
               (unsigned long long)st.submitted);
        fflush(stdout);
        MUST(hipStreamDestroy(d));
    } else if (strcmp(mode, "await") == 0 && argc == 4) {
        uint32_t *word = shared_word(argv[3]);
        uint64_t from = ms_now();
        MUST(hipStreamWaitValue32(s, word, 1, hipStreamWaitValueGte, UINT32_MAX));
        MUST(busy_launch(kernel, 1000000, tag, s));
        MUST(hipStreamSynchronize(s));
        printf("waited %llu ms\n", (unsigned long long)(ms_now() - from));
        fflush(stdout);
    } else {
        fprintf(stderr, "board_worker: bad arguments\n");
        return 2;
    }
    const char *linger = getenv("BOARD_WORKER_LINGER");
    if (linger && !strcmp(linger, "1")) {
        say("worked");
        if (!fgets(line, sizeof line, stdin))
            return 2;
    }
    int priority = 0;
    struct gpuprio_queue_stats stats;
    EXPECT(api.stream_get_priority(s, &priority) == 0);
    if (count_markers) {
        records = hipsimEventRecords() - records;
        api.stream_drain(s, 2000);
        EXPECT(api.stream_stats(s, &stats) == 0);
        printf("markers %llu for %llu commands, %llu of %llu completed\n",
               (unsigned long long)records,
               (unsigned long long)(stats.submitted - before.submitted),
               (unsigned long long)stats.completed, (unsigned long long)stats.submitted);
    }
    EXPECT(api.stream_stats(s, &stats) == 0);
    MUST(hipStreamDestroy(s));
    printf("held %llu us, suspended %llu times\n", (unsigned long long)(stats.held_ns / 1000),
           (unsigned long long)stats.suspensions);
    printf("done %d\n", priority);
    return failures != 0;
}
