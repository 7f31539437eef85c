/*
 * shared_exit_storm.c - processes that end with work queued, or are killed in the middle of it,
 * never stall the other processes of a shared simulated device (issue 21).
 *
 *   shared_exit_storm ROUNDS [SHIM]    the test: ROUNDS rounds of each kind, without the shim,
 *                                      then (with SHIM) the same under LD_PRELOAD=SHIM
 *   shared_exit_storm quit|finish|victim [FD]    one worker process (the test runs these)
 *
 * Every round starts three processes on one shared device with one compute slot:
 *   exit rounds  two quitters each create four streams (one for each hardware queue, so that
 *                more threads die in the middle of waiting: one stream each, as in the issue,
 *                hung within 40 rounds only most of the time), queue five 20 ms kernels on
 *                each and return from main at once, while a finisher runs fifty 50 us kernels
 *                on two streams and synchronizes;
 *   kill rounds  two victims run short kernels on two streams and are killed with SIGKILL at
 *                random moments in the middle of that work, next to a finisher.
 * A process that ends at any instruction, possibly inside the device's shared state, must not
 * keep the finisher from finishing. Every wait is bounded: whatever has not exited
 * ROUND_LIMIT_MS after its round started is killed and the round fails. The rounds of one kind
 * share one device, so stale state a round leaves behind is in the next round's way; after a
 * failure the device may be wedged for good, so that kind stops there and the next starts on a
 * fresh device. Output: one line per kind and configuration; the exit status is the number of
 * failed ones.
 */
#include "hipsim.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUND_LIMIT_MS 10000 /* a healthy round takes well under a second, even under TSan */
#define QUIT_STREAMS 4       /* a thread per hardware queue, each as likely to die mid-wait */
#define QUIT_KERNEL_NS 20000000u
#define FINISH_KERNEL_NS 50000u
#define VICTIM_KERNEL_NS 100000u
#define VICTIM_KERNELS 200
#define KILL_SPREAD_US 8000 /* victims die within this long after their first launch */

/* ---- workers ---- */

static uint64_t sleep_kernel(hipsimLaunch *l)
{
    return *(uint64_t *)l->args[0];
}

/* Queues kernels round-robin on new streams; -1 on any HIP error. The first launch is reported
 * on started_fd (when >= 0), so that the test can kill a victim in the middle of its work. */
static int queue_kernels(int nstreams, int kernels, uint64_t ns, int started_fd)
{
    size_t sizes[] = {sizeof(uint64_t)};
    const void *k = hipsimRegisterKernel("storm", sleep_kernel, 1, sizes);
    hipStream_t s[QUIT_STREAMS];
    for (int i = 0; i < nstreams; i++)
        if (hipStreamCreate(&s[i]) != hipSuccess)
            return -1;
    for (int i = 0; i < kernels; i++) {
        void *args[] = {&ns};
        if (hipLaunchKernel(k, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, s[i % nstreams]) !=
            hipSuccess)
            return -1;
        if (i == 0 && started_fd >= 0 && write(started_fd, "s", 1) != 1)
            return -1;
    }
    return 0;
}

static int worker(const char *role, const char *fd)
{
    if (!strcmp(role, "quit")) /* returns from main with the work still queued */
        return queue_kernels(QUIT_STREAMS, 5 * QUIT_STREAMS, QUIT_KERNEL_NS, -1) ? 1 : 0;
    if (!strcmp(role, "finish")) {
        const char *preload = getenv("LD_PRELOAD");
        if (preload && preload[0] && !dlsym(RTLD_DEFAULT, "gpuprio_version")) {
            fprintf(stderr, "shared_exit_storm: LD_PRELOAD=%s did not load the shim\n", preload);
            return 3; /* or "under the shim" would pass without it */
        }
        return queue_kernels(2, 50, FINISH_KERNEL_NS, -1) || hipDeviceSynchronize() != hipSuccess;
    }
    if (!strcmp(role, "victim"))
        return queue_kernels(2, VICTIM_KERNELS, VICTIM_KERNEL_NS, fd ? atoi(fd) : -1) ||
               hipDeviceSynchronize() != hipSuccess;
    fprintf(stderr, "shared_exit_storm: unknown worker %s\n", role);
    return 2;
}

/* ---- the test ---- */

static const char *self_path;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A fixed sequence, so that a failing run's kill moments can be reproduced in kind. */
static uint32_t next_random(void)
{
    static uint32_t x = 21;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

struct proc {
    const char *role;
    pid_t pid;
    int status;
    bool done;
};

static pid_t spawn(const char *role, int fd)
{
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", fd);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self_path, self_path, role, fd >= 0 ? fdarg : (char *)NULL, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Collects whatever exited; true when everything has. */
static bool reap(struct proc *p, int n)
{
    bool all = true;
    for (int i = 0; i < n; i++) {
        if (!p[i].done && waitpid(p[i].pid, &p[i].status, WNOHANG) == p[i].pid)
            p[i].done = true;
        all = all && p[i].done;
    }
    return all;
}

/* Waits, bounded by the deadline, for a byte on fd; false when none came. */
static bool wait_byte(int fd, uint64_t deadline)
{
    uint64_t now = now_ms();
    struct pollfd pfd = {fd, POLLIN, 0};
    char c;
    return now < deadline && poll(&pfd, 1, (int)(deadline - now)) == 1 && read(fd, &c, 1) == 1;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, us % 1000000 * 1000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        continue;
}

/* One round; 0, or -1 with the reason printed. */
static int round_once(bool kill_round, int round, const char *what)
{
    int fds[2] = {-1, -1};
    if (kill_round && pipe(fds) < 0) {
        perror("pipe");
        return -1;
    }
    const char *role = kill_round ? "victim" : "quit";
    uint64_t deadline = now_ms() + ROUND_LIMIT_MS;
    struct proc p[3] = {{role, spawn(role, fds[1]), 0, false},
                        {role, spawn(role, fds[1]), 0, false},
                        {"finish", spawn("finish", -1), 0, false}};
    if (fds[1] >= 0)
        close(fds[1]);
    int rc = 0;
    for (int i = 0; i < 3; i++)
        if (p[i].pid < 0) {
            perror("fork");
            p[i].done = true;
            rc = -1;
        }
    if (kill_round) {
        /* Each victim dies at its own random moment after both started queueing. */
        bool started = wait_byte(fds[0], deadline) && wait_byte(fds[0], deadline);
        for (int i = 0; started && i < 2; i++) {
            sleep_us((long)(next_random() % KILL_SPREAD_US));
            kill(p[i].pid, SIGKILL);
        }
        close(fds[0]);
    }
    while (!reap(p, 3) && now_ms() < deadline)
        sleep_us(1000);
    for (int i = 0; i < 3; i++) {
        if (!p[i].done) {
            printf("FAIL %s round %d: the %s (pid %d) did not finish within %d ms; killed\n", what,
                   round, p[i].role, (int)p[i].pid, ROUND_LIMIT_MS);
            kill(p[i].pid, SIGKILL);
            waitpid(p[i].pid, &p[i].status, 0);
            rc = -1;
            continue;
        }
        int st = p[i].status;
        bool killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        bool ok = (WIFEXITED(st) && WEXITSTATUS(st) == 0) || (kill_round && i < 2 && killed);
        if (!ok) {
            printf("FAIL %s round %d: the %s (pid %d) ended with status 0x%x\n", what, round,
                   p[i].role, (int)p[i].pid, (unsigned)st);
            rc = -1;
        }
    }
    return rc;
}

/* ROUNDS rounds of one kind on a fresh device; 0 or 1 (failed). */
static int storm(bool kill_round, int rounds, const char *shim)
{
    char name[64], segment[128], what[64];
    snprintf(name, sizeof name, "storm%d-%s-%s", (int)getpid(), kill_round ? "kill" : "exit",
             shim ? "shim" : "plain");
    snprintf(what, sizeof what, "%s rounds %s", kill_round ? "kill" : "exit",
             shim ? "under the shim" : "without the shim");
    snprintf(segment, sizeof segment, "/hipsim-%u-%s-0", (unsigned)getuid(), name);
    setenv("HIPSIM_SHARED", name, 1);
    uint64_t t0 = now_ms();
    int round = 0, failed = 0;
    while (round < rounds && !failed)
        failed = round_once(kill_round, ++round, what) != 0;
    if (!failed)
        printf("ok %s: %d rounds, every process finished (%.1f s)\n", what, rounds,
               (double)(now_ms() - t0) / 1e3);
    shm_unlink(segment);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc >= 2 &&
        (!strcmp(argv[1], "quit") || !strcmp(argv[1], "finish") || !strcmp(argv[1], "victim")))
        return worker(argv[1], argc > 2 ? argv[2] : NULL);
    int rounds = argc >= 2 ? atoi(argv[1]) : 0;
    if (rounds <= 0 || argc > 3) {
        fprintf(stderr, "usage: shared_exit_storm ROUNDS [SHIM]\n");
        return 2;
    }
    self_path = "/proc/self/exe";
    const char *shim = argc > 2 ? argv[2] : NULL;
    setenv("HIPSIM_COMPUTE_SLOTS", "1", 1);
    unsetenv("HIPSIM_TRACE");
    unsetenv("LD_PRELOAD");

    int failures = storm(false, rounds, NULL) + storm(true, rounds, NULL);
    if (shim) {
        char dir[] = "/tmp/hipsim-storm-XXXXXX", cmd[64];
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            return failures + 1;
        }
        setenv("GPUPRIO_BOARD_DIR", dir, 1); /* the shim's board of this device: private */
        setenv("LD_PRELOAD", shim, 1);
        failures += storm(false, rounds, shim) + storm(true, rounds, shim);
        unsetenv("LD_PRELOAD");
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            printf("could not remove %s\n", dir);
    }
    return failures;
}
