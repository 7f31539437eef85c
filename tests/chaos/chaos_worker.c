/*
 * chaos_worker.c - one process of the chaos tests (chaos.c starts them under the shim, on one
 * shared simulated device, each with its own GPUPRIO_PRIORITY).
 *
 *   chaos_worker run ROUNDS
 *       Two threads, each with a stream of its own (the second thread also uses the null stream
 *       every third round), run ROUNDS rounds of: 1 to 3 kernels that each update words of a
 *       device buffer in an order-sensitive way (w = w * 3 + v), a copy of the buffer back to
 *       pinned memory, a synchronization, a comparison with what the host computed, and a gap
 *       of 1 to 5 ms, so that lower priorities get their turns. Prints "ready" once both
 *       streams ran something (they are on the board), then at the end
 *           done ROUNDS held_max_us N from_ms T in CALL
 *       the longest any one HIP call took, when it started (CLOCK_MONOTONIC) and which call it
 *       was, leaving out calls during which the process was stopped and resumed (SIGSTOP and
 *       SIGCONT: chaos.c counts its resumes in the file CHAOS_RESUMES names). With
 *       CHAOS_STOPFILE set, the threads also stop once that file exists (ROUNDS 0: only then),
 *       and ROUNDS in the last line is the rounds the first thread ran. A wrong result prints
 *       "WRONG ..." and exits 1; a HIP error, "FATAL ..." and exits 1.
 *
 *   chaos_worker brief HOW
 *       Creates two streams, runs a few kernels on each and ends with kernels still queued, as
 *       HOW says:
 *           wait         goes on launching and synchronizing until it is killed
 *           return       returns 7 from main
 *           thread-exit  calls exit(5) from a second thread while the first waits in a
 *                        synchronization
 *           signal       raises SIGTERM (whose default action ends it)
 *           abort        calls abort() (SIGABRT, whose handler gpuprio must not take over)
 *       The exit status tells chaos.c that the process ended as it chose, not as gpuprio did.
 *
 * Every random choice comes from CHAOS_SEED (and the pid), so a failing run can be repeated.
 */
#include "../conformance/conf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#define WORDS 8
#define THREADS 2

/* How many times chaos.c resumed this process: it counts them in the file CHAOS_RESUMES names,
 * while the process is still stopped, so a call that spans a stop reads another count when it
 * ends. A SIGCONT handler cannot tell this: the kernel runs it on a thread of its choice, which
 * may be scheduled after the timed thread has already looked (the likely cause of a CI run that
 * judged a critical worker's 1.28 s call, a stop's length, a hold). NULL without CHAOS_RESUMES: no
 * stops are told apart. */
static const _Atomic uint64_t *resumes;
static _Atomic uint64_t held_max_ns;
static _Atomic uint64_t held_max_from; /* when that call started (CLOCK_MONOTONIC, ns; roughly) */
static const char
    *_Atomic held_max_call; /* the call that took held_max_ns (roughly: not atomic with it) */

static uint64_t resumes_so_far(void)
{
    return resumes ? atomic_load(resumes) : 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Runs one HIP call, timed: what it took counts towards held_max_ns unless the process was
 * stopped meanwhile (then the time is the stop's, not gpuprio's). */
#define TIMED(call)                                                                                \
    do {                                                                                           \
        uint64_t timed_resumes = resumes_so_far();                                                 \
        uint64_t timed_from = now_ns();                                                            \
        MUST(call);                                                                                \
        uint64_t timed_took = now_ns() - timed_from;                                               \
        uint64_t timed_max = atomic_load(&held_max_ns);                                            \
        while (resumes_so_far() == timed_resumes && timed_took > timed_max)                        \
            if (atomic_compare_exchange_weak(&held_max_ns, &timed_max, timed_took)) {              \
                atomic_store(&held_max_call, #call);                                               \
                atomic_store(&held_max_from, timed_from);                                          \
                break;                                                                             \
            }                                                                                      \
    } while (0)

static const char *stop_file;

struct runner {
    int t, rounds;
    unsigned seed;
    hipStream_t s;
    uint32_t *dev, *host;
    uint32_t model[WORDS];
    pthread_barrier_t *warmed;
};

static unsigned rnd(unsigned *seed, unsigned n)
{
    return (unsigned)rand_r(seed) % n;
}

static void *run_rounds(void *arg)
{
    struct runner *r = arg;
    TIMED(conf_launch_mad(r->s, r->dev, 1, 0));
    TIMED(hipStreamSynchronize(r->s));
    r->model[0] = 1;
    pthread_barrier_wait(r->warmed);
    int round;
    for (round = 0; round < r->rounds || !r->rounds; round++) {
        if (stop_file && round % 16 == 0 && access(stop_file, F_OK) == 0)
            break;
        /* The null stream waits for the process's blocking streams and they for it: that order
         * must hold under gates as it does without them. */
        hipStream_t s = r->t == 1 && round % 3 == 2 ? NULL : r->s;
        for (unsigned k = 1 + rnd(&r->seed, 3); k > 0; k--) {
            unsigned w = rnd(&r->seed, WORDS);
            uint32_t v = (uint32_t)rand_r(&r->seed);
            TIMED(conf_launch_mad(s, r->dev + w, v, 50000 + 50000 * (uint64_t)rnd(&r->seed, 4)));
            r->model[w] = r->model[w] * 3u + v;
        }
        TIMED(hipMemcpyAsync(r->host, r->dev, sizeof r->model, hipMemcpyDeviceToHost, s));
        TIMED(hipStreamSynchronize(s));
        if (memcmp(r->host, r->model, sizeof r->model) != 0) {
            printf("WRONG thread %d round %d: word 0 is %u, expected %u\n", r->t, round, r->host[0],
                   r->model[0]);
            fflush(stdout);
            _exit(1);
        }
        conf_sleep_ms(1 + rnd(&r->seed, 5));
    }
    r->rounds = round;
    return NULL;
}

static int run(int rounds, unsigned seed)
{
    const char *resumes_file = getenv("CHAOS_RESUMES");
    if (resumes_file) {
        int fd = open(resumes_file, O_RDONLY | O_CLOEXEC);
        void *map = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *resumes, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
            printf("FATAL cannot map CHAOS_RESUMES %s: %s\n", resumes_file, strerror(errno));
            return 1;
        }
        close(fd);
        resumes = map;
    }
    pthread_barrier_t warmed;
    pthread_barrier_init(&warmed, NULL, THREADS + 1);
    struct runner r[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        r[t] = (struct runner){
            .t = t, .rounds = rounds, .seed = seed + 7919u * (unsigned)t, .warmed = &warmed};
        MUST(hipStreamCreateWithFlags(&r[t].s, t ? hipStreamDefault : hipStreamNonBlocking));
        MUST(hipMalloc((void **)&r[t].dev, sizeof r[t].model));
        MUST(hipMemset(r[t].dev, 0, sizeof r[t].model));
        MUST(hipHostMalloc((void **)&r[t].host, sizeof r[t].model, 0));
        pthread_create(&th[t], NULL, run_rounds, &r[t]);
    }
    pthread_barrier_wait(&warmed);
    printf("ready\n");
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        MUST(hipStreamDestroy(r[t].s));
        MUST(hipFree(r[t].dev));
        MUST(hipHostFree(r[t].host));
    }
    const char *call = atomic_load(&held_max_call);
    printf("done %d held_max_us %llu from_ms %llu in %s\n", r[0].rounds,
           (unsigned long long)(atomic_load(&held_max_ns) / 1000),
           (unsigned long long)(atomic_load(&held_max_from) / 1000000), call ? call : "none");
    return 0;
}

/* ---- brief ---- */

static hipStream_t brief_streams[2];

static void *exit_from_thread(void *arg)
{
    (void)arg;
    conf_sleep_ms(2); /* main is in its synchronization by then, most of the time */
    exit(5);
}

static int brief(const char *how)
{
    uint32_t *dev;
    MUST(hipMalloc((void **)&dev, 2 * sizeof *dev));
    for (int i = 0; i < 2; i++) {
        MUST(hipStreamCreate(&brief_streams[i]));
        for (int k = 0; k < 4; k++)
            MUST(conf_launch_mad(brief_streams[i], dev + i, (uint32_t)k, 200000));
    }
    if (!strcmp(how, "return"))
        return 7;
    if (!strcmp(how, "thread-exit")) {
        pthread_t th;
        pthread_create(&th, NULL, exit_from_thread, NULL);
        for (;;)
            MUST(hipStreamSynchronize(brief_streams[0]));
    }
    if (!strcmp(how, "wait"))
        for (uint32_t v = 0;; v++) {
            MUST(conf_launch_mad(brief_streams[v % 2], dev, v, 100000));
            MUST(hipStreamSynchronize(brief_streams[(v + 1) % 2]));
        }
    if (!strcmp(how, "signal"))
        raise(SIGTERM);
    else if (!strcmp(how, "abort"))
        abort();
    printf("FATAL: unknown way to end: %s\n", how);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr,
                "usage: chaos_worker run ROUNDS | brief return|thread-exit|signal|abort|wait\n");
        return 2;
    }
    conf_init();
    const char *seed_env = getenv("CHAOS_SEED");
    unsigned seed = (unsigned)(seed_env ? strtoul(seed_env, NULL, 10) : 1) ^ (unsigned)getpid();
    stop_file = getenv("CHAOS_STOPFILE");
    if (!strcmp(argv[1], "run"))
        return run(atoi(argv[2]), seed);
    if (!strcmp(argv[1], "brief"))
        return brief(argv[2]);
    fprintf(stderr, "chaos_worker: unknown mode %s\n", argv[1]);
    return 2;
}
