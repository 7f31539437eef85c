/*
 * chaos.c - processes of a shared simulated device that die, stop and come and go around each
 * other (issue 16). Every process is a chaos_worker under the shim, on one board in a private
 * directory, with HIPSIM_SHARED naming one device with two compute slots.
 *
 *   chaos chaos STEPS WORKER SHIM TOOL
 *       Four workers (mode run) of random priorities and levels work while, for STEPS steps of
 *       100 to 300 ms, this driver kills random ones with SIGKILL, stops others with SIGSTOP
 *       for 1 to 1.6 s (longer than the bound below, so a hold that lasts as long as a stop is
 *       caught) and resumes them, and starts new ones to keep four, and now and then asks
 *       `TOOL top --json --all` what it shows. Checks:
 *         - every worker not killed exits 0 having found every result right;
 *         - no HIP call of any worker was held longer than GPUPRIO_WATCHDOG_MS plus the reclaim
 *           time plus a margin (HELD_BOUND_MS) while no work of a higher priority completed
 *           (a call held by higher priorities that keep completing work is strict priority at
 *           work, however long; the worker leaves out calls during which it was stopped
 *           itself);
 *         - top never shows a process that had ended and been reaped before top started;
 *         - after the last worker exits, no board slot and no file is left in the board
 *           directory.
 *   chaos brief COUNT WORKER SHIM TOOL
 *       COUNT short-lived workers, eight at a time, end in every way (mode brief: return from
 *       main, exit() from a thread, a signal raised, abort(); and SIGKILL from here while they
 *       work) next to a long-running one: each exit status is the one its way of ending gives;
 *       after every 100 of them, board use goes back to the long-running worker's slots within
 *       3 s (the dead's slots are reclaimed: no growth); the long-running worker is right; and
 *       nothing is left behind at the end.
 *
 * CHAOS_SEED (default 1) seeds every random choice here and in the workers; a failure prints it.
 * Output: one line per finding, then a summary line and OK or FAILED (exit status 1).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "gpuprio.h"

#define WORKERS 4
#define WATCHDOG_MS 250
/* The reclaim time: a held process looks for dead owners every 20 ms (sched_board.c); then the
 * margin for the workers' own bursts and a slow machine (TSan). */
#define HELD_BOUND_MS (WATCHDOG_MS + 20 + 230)
#define STOP_MIN_MS 1000
#define STOP_SPREAD_MS 600
#define FINISH_LIMIT_S 120

static const char *worker, *shim, *tool;
static char dir[64], name[32];
static unsigned seed, first_seed;
static int failures;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        failures++;                                                                                \
        printf("FAIL: " __VA_ARGS__);                                                              \
        printf(" (CHAOS_SEED=%u)\n", first_seed);                                                  \
    } while (0)

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static unsigned rnd(unsigned n)
{
    return (unsigned)rand_r(&seed) % n;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- workers ---- */

enum end { END_RUN, END_RETURN, END_THREAD_EXIT, END_SIGNAL, END_ABORT, END_KILLED };
static const char *const end_how[] = {"run", "return", "thread-exit", "signal", "abort", "wait"};

#define STOPS_KEPT 8

struct worker {
    pid_t pid;
    enum end end;
    const char *priority, *level;
    bool stopped, killed;
    uint64_t resume_at;
    char log[96];
    int resumes_fd;   /* its resumes file (chaos_worker.c, CHAOS_RESUMES), or -1 */
    uint64_t resumes; /* how many times it was resumed */
    uint64_t stopped_ms[STOPS_KEPT][2]; /* its last stops: from, to (now_ms) */
};

static const struct {
    const char *name;
    int value;
} priorities[] = {{"critical", GPUPRIO_PRIORITY_CRITICAL},
                  {"high", GPUPRIO_PRIORITY_HIGH},
                  {"normal", GPUPRIO_PRIORITY_NORMAL},
                  {"low", GPUPRIO_PRIORITY_LOW},
                  {"idle", GPUPRIO_PRIORITY_IDLE}};

static int priority_value(const char *priority)
{
    for (size_t i = 0; i < sizeof priorities / sizeof priorities[0]; i++)
        if (!strcmp(priorities[i].name, priority))
            return priorities[i].value;
    return GPUPRIO_PRIORITY_NORMAL;
}

/* Starts a worker of the given priority (NULL: a random one) and a random level, with its output
 * in a file of the board directory; pid -1 on failure. */
static struct worker spawn(enum end end, int rounds, const char *priority)
{
    static unsigned serial;
    struct worker w = {.end = end,
                       .priority = priority ? priority : priorities[rnd(5)].name,
                       .level = rnd(2) ? "2" : "1"};
    char resumes[sizeof w.log];
    snprintf(w.log, sizeof w.log, "%s/worker-%u.log", dir, serial);
    snprintf(resumes, sizeof resumes, "%s/worker-%u.resumes", dir, serial++);
    w.resumes_fd = -1;
    if (end == END_RUN) {
        w.resumes_fd = open(resumes, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (w.resumes_fd >= 0 && ftruncate(w.resumes_fd, sizeof w.resumes) != 0) {
            close(w.resumes_fd);
            w.resumes_fd = -1;
        }
        if (w.resumes_fd < 0)
            FAIL("cannot make %s: %s", resumes, strerror(errno));
    }
    char arg[16];
    snprintf(arg, sizeof arg, "%d", rounds);
    fflush(stdout);
    w.pid = fork();
    if (w.pid == 0) {
        int fd = open(w.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        setenv("LD_PRELOAD", shim, 1);
        setenv("GPUPRIO_PRIORITY", w.priority, 1);
        setenv("GPUPRIO_LEVEL", w.level, 1);
        if (end == END_RUN) {
            if (w.resumes_fd >= 0)
                setenv("CHAOS_RESUMES", resumes, 1);
            execl(worker, worker, "run", arg, (char *)NULL);
        } else {
            execl(worker, worker, "brief", end == END_KILLED ? "wait" : end_how[end], (char *)NULL);
        }
        _exit(127);
    }
    if (w.pid < 0) {
        FAIL("fork: %s", strerror(errno));
        if (w.resumes_fd >= 0)
            close(w.resumes_fd);
        w.resumes_fd = -1;
    }
    return w;
}

/* What the worker's status should have been, as waitpid reports it. */
static bool status_as_chosen(const struct worker *w, int st)
{
    switch (w->end) {
    case END_RUN:
        return WIFEXITED(st) && WEXITSTATUS(st) == 0;
    case END_RETURN:
        return WIFEXITED(st) && WEXITSTATUS(st) == 7;
    case END_THREAD_EXIT:
        return WIFEXITED(st) && WEXITSTATUS(st) == 5;
    case END_SIGNAL:
        return WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM;
    case END_ABORT:
        return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
    case END_KILLED:
        return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    }
    return false;
}

static void describe_status(int st, char *buf, size_t size)
{
    if (WIFEXITED(st))
        snprintf(buf, size, "exit %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, size, "signal %d", WTERMSIG(st));
    else
        snprintf(buf, size, "status %#x", st);
}

/* The longest call a finished run worker reported, in us, and in *from_ms when it started; -1
 * when it did not finish right (and the log then says why: printed here). */
static long finished_run(const struct worker *w, uint64_t *from_ms)
{
    FILE *f = fopen(w->log, "r");
    char line[256];
    long held = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long us;
        unsigned long long from;
        int rounds;
        if (sscanf(line, "done %d held_max_us %lu from_ms %llu", &rounds, &us, &from) == 3) {
            held = (long)us;
            *from_ms = from;
            if (us > HELD_BOUND_MS * 1000ul)
                printf("  worker %d: %s", (int)w->pid, line);
        } else if (!strncmp(line, "WRONG", 5) || !strncmp(line, "FATAL", 5) ||
                   !strncmp(line, "==", 2) || strstr(line, "runtime error"))
            printf("  worker %d: %s", (int)w->pid, line);
    }
    if (f)
        fclose(f);
    return held;
}

/* Dead workers already reaped, for the check of what top shows. */
static pid_t reaped[4096];
static size_t nreaped;

static void forget_reaped(pid_t pid) /* a new worker got a reaped worker's pid */
{
    for (size_t i = 0; i < nreaped; i++)
        if (reaped[i] == pid)
            reaped[i] = reaped[--nreaped];
}

static char board_path[256]; /* the workers' board (find_board_path) */

/* ---- progress of the priorities, sampled from the board ---- */

/* Strict priority holds a worker for as long as work of a higher priority keeps running: that is
 * what priority means, however long it takes. What no worker may see is a hold past the bound
 * while nothing of a higher priority completes anything: then a process above it is stopped,
 * dead or hung, which the watchdog and the stall mark must get past. So a thread reads the board
 * every SAMPLE_MS and notes the highest priority among the queues that completed work since its
 * last look, and a long call is judged by the longest stretch within it in which nothing above
 * the worker's priority completed anything. */
#define SAMPLE_MS 5
#define SAMPLES_MAX (900 * 1000 / SAMPLE_MS) /* 15 minutes */

static struct sample {
    uint64_t t_ms;
    int32_t top; /* the highest priority that completed work since the sample before; INT32_MIN */
} * samples;
static _Atomic size_t nsamples;
static _Atomic bool sampling;
static pthread_t sampler;

static void *sample_progress(void *arg)
{
    (void)arg;
    struct gp_board b;
    bool open = false;
    static uint64_t owner[GP_BOARD_SLOTS], done[GP_BOARD_SLOTS];
    while (atomic_load(&sampling) && atomic_load(&nsamples) < SAMPLES_MAX) {
        const char *why;
        if (open && !gp_board_linked(&b)) { /* removed by the last process, made again since */
            gp_board_close(&b);
            open = false;
        }
        if (!open && gp_board_open_file(board_path, false, &b, &why) == 0) {
            open = true;
            memset(owner, 0, sizeof owner);
        }
        int32_t top = INT32_MIN;
        for (unsigned i = 0; open && i < GP_BOARD_SLOTS; i++) {
            const struct gp_board_slot *slot = &b.f->slots[i];
            uint64_t word = atomic_load(&slot->owner), completed = atomic_load(&slot->st.completed);
            int32_t priority = atomic_load(&slot->st.priority);
            if (GP_SLOT_STATE(word) == GP_SLOT_LIVE && owner[i] == word && completed > done[i] &&
                priority > top)
                top = priority;
            owner[i] = GP_SLOT_STATE(word) == GP_SLOT_LIVE ? word : 0;
            done[i] = completed;
        }
        size_t n = atomic_load(&nsamples);
        samples[n] = (struct sample){now_ms(), top};
        atomic_store(&nsamples, n + 1);
        sleep_ms(SAMPLE_MS);
    }
    if (open)
        gp_board_close(&b);
    return NULL;
}

static void start_sampling(void)
{
    samples = calloc(SAMPLES_MAX, sizeof *samples);
    atomic_store(&sampling, samples != NULL);
    if (samples && pthread_create(&sampler, NULL, sample_progress, NULL) != 0)
        atomic_store(&sampling, false);
}

static void stop_sampling(void)
{
    if (atomic_exchange(&sampling, false))
        pthread_join(sampler, NULL);
    free(samples);
    samples = NULL;
}

/* The longest stretch of [from_ms, to_ms] in which no queue of priority above p completed work,
 * in ms; -1 when the samples do not cover it. */
static long unexplained_ms(int p, uint64_t from_ms, uint64_t to_ms)
{
    size_t n = samples ? atomic_load(&nsamples) : 0;
    if (!n || samples[0].t_ms > from_ms || samples[n - 1].t_ms < to_ms)
        return -1;
    uint64_t last = from_ms, longest = 0;
    for (size_t i = 0; i < n && samples[i].t_ms <= to_ms; i++)
        if (samples[i].t_ms >= from_ms && samples[i].top > p) {
            longest = samples[i].t_ms - last > longest ? samples[i].t_ms - last : longest;
            last = samples[i].t_ms;
        }
    longest = to_ms - last > longest ? to_ms - last : longest;
    return (long)longest;
}

/* CHAOS_HOLD_BOUND=report: a call over HELD_BOUND_MS is printed, not failed. For the TSan build,
 * whose host code runs several times slower: there the workers of higher priority stay active
 * most of the time, and strict priority legitimately holds the lowest ones for longer. */
static bool hold_bound_reported_only(void)
{
    const char *v = getenv("CHAOS_HOLD_BOUND");
    return v && strcmp(v, "report") == 0;
}

/* How many ms of [from, to] this driver kept worker w stopped (of its last STOPS_KEPT - 1 stops
 * that ended: a stop under way has the next entry): a hold it reports should have none, as the
 * worker leaves out calls that spanned a stop. */
static uint64_t stopped_within(const struct worker *w, uint64_t from, uint64_t to)
{
    uint64_t sum = 0, kept = STOPS_KEPT - 1;
    for (uint64_t i = w->resumes > kept ? w->resumes - kept : 0; i < w->resumes; i++) {
        const uint64_t *stop = w->stopped_ms[i % STOPS_KEPT];
        uint64_t a = stop[0] > from ? stop[0] : from, b = stop[1] < to ? stop[1] : to;
        sum += b > a ? b - a : 0;
    }
    return sum;
}

static long held_max_us;
static unsigned ended_run, ended_killed, ended_other;

/* Checks a worker that ended with status st. */
static void ended(struct worker *w, int st)
{
    char got[32];
    describe_status(st, got, sizeof got);
    /* A kill that reached a worker that had just finished its rounds (a zombie ignores it)
     * leaves its own status: it is judged as finished. */
    bool finished_first = w->end == END_RUN && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (w->killed && !finished_first) {
        ended_killed++;
        if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
            FAIL("worker %d was killed, yet ended with %s", (int)w->pid, got);
    } else if (!status_as_chosen(w, st)) {
        FAIL("worker %d (%s, %s, level %s) ended with %s, not as it chose", (int)w->pid,
             end_how[w->end], w->priority, w->level, got);
        finished_run(w, &(uint64_t){0});
    } else if (w->end == END_RUN) {
        ended_run++;
        uint64_t from = 0;
        long held = finished_run(w, &from);
        long unexplained = held < 0 ? -1
                                    : unexplained_ms(priority_value(w->priority), from,
                                                     from + (uint64_t)held / 1000);
        if (held < 0)
            FAIL("worker %d (%s, level %s) did not say it finished", (int)w->pid, w->priority,
                 w->level);
        else if (held <= (long)HELD_BOUND_MS * 1000)
            ;
        else if (unexplained >= 0 && unexplained <= HELD_BOUND_MS)
            printf("worker %d (%s, level %s): a call took %.1f ms, while higher priorities "
                   "completed work at most %ld ms apart (bound %d ms): strict priority\n",
                   (int)w->pid, w->priority, w->level, held / 1e3, unexplained, HELD_BOUND_MS);
        else if (!hold_bound_reported_only())
            FAIL("worker %d (%s, level %s): a call took %.1f ms, %ld ms of it with no work of a "
                 "higher priority completing (bound %d ms; stopped itself for %" PRIu64
                 " ms of it)",
                 (int)w->pid, w->priority, w->level, held / 1e3, unexplained, HELD_BOUND_MS,
                 stopped_within(w, from, from + (uint64_t)held / 1000));
        else
            printf("worker %d (%s, level %s): a call took %.1f ms, %ld ms of it with no work of "
                   "a higher priority completing (bound %d ms, reported only: "
                   "CHAOS_HOLD_BOUND=report)\n",
                   (int)w->pid, w->priority, w->level, held / 1e3, unexplained, HELD_BOUND_MS);
        if (held > held_max_us)
            held_max_us = held;
    } else {
        ended_other++;
    }
    if (nreaped < sizeof reaped / sizeof reaped[0])
        reaped[nreaped++] = w->pid;
    w->pid = 0;
    if (w->resumes_fd >= 0)
        close(w->resumes_fd);
    w->resumes_fd = -1;
}

/* Reaps the workers of ws that ended (all of them with wait); how many are still there. */
static int reap(struct worker *ws, int n, bool wait)
{
    int left = 0;
    for (int i = 0; i < n; i++) {
        if (ws[i].pid <= 0)
            continue;
        int st;
        pid_t got = waitpid(ws[i].pid, &st, wait ? 0 : WNOHANG);
        if (got == ws[i].pid)
            ended(&ws[i], st);
        else
            left++;
    }
    return left;
}

/* ---- what is left ---- */

static void find_board_path(void)
{
    char key[GP_BOARD_KEY_MAX];
    snprintf(key, sizeof key, "sim:%s:00", name);
    setenv("GPUPRIO_BOARD_DIR", dir, 1);
    if (gp_board_path(key, board_path, sizeof board_path) != 0)
        board_path[0] = 0;
}

/* Slots in use on the board (claimed, live or records, dead owners' included) by others than
 * process except (0: by anyone); 0 without a board, -1 when it cannot be read. */
static int slots_in_use(pid_t except)
{
    struct gp_board b;
    const char *why;
    if (gp_board_open_file(board_path, false, &b, &why) != 0)
        return errno == ENOENT ? 0 : -1;
    int n = 0;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        uint64_t word = atomic_load(&b.f->slots[i].owner);
        n += word != 0 && GP_SLOT_OWNER(word) != (uint32_t)except;
    }
    gp_board_close(&b);
    return n;
}

/* Files in the board directory other than the workers' logs. */
static int files_left(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "worker-", 7))
            continue;
        printf("  left in the board directory: %s\n", e->d_name);
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* Says who holds the slots in use on the board, for a failure. */
static void show_slots(void)
{
    struct gp_board b;
    const char *why;
    if (gp_board_open_file(board_path, false, &b, &why) != 0)
        return;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        uint64_t word = atomic_load(&b.f->slots[i].owner);
        if (word)
            printf("  slot %u: process %u, state %u (%s), stream %#llx\n", i, GP_SLOT_OWNER(word),
                   GP_SLOT_STATE(word), gp_board_owner_alive(&b, &b.f->slots[i]) ? "alive" : "gone",
                   (unsigned long long)b.f->slots[i].stream);
    }
    gp_board_close(&b);
}

static void check_nothing_left(void)
{
    int slots = slots_in_use(0), files = files_left();
    printf("after the last process: %d board slots in use, %d files left\n", slots, files);
    if (slots != 0)
        FAIL("%d board slots left in use", slots);
    if (files != 0)
        FAIL("%d files left in %s", files, dir);
}

/* The resident memory of process pid in KiB, or -1. */
static long resident_kib(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    FILE *f = fopen(path, "r");
    long size, pages = -1;
    if (f && fscanf(f, "%ld %ld", &size, &pages) != 2)
        pages = -1;
    if (f)
        fclose(f);
    return pages < 0 ? -1 : pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ---- top ---- */

static unsigned stalled_rows; /* queues top showed stalled (a stopped worker's that held others) */

/* Runs TOOL top --json --all; fails for every pid it shows that was reaped before it ran. */
static void check_top(void)
{
    size_t dead_before = nreaped;
    pid_t dead[4096];
    memcpy(dead, reaped, dead_before * sizeof *dead);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' top --json --all", tool);
    FILE *p = popen(cmd, "r");
    if (!p) {
        FAIL("cannot run %s", cmd);
        return;
    }
    char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf - 1, p);
    buf[len] = 0;
    int st = pclose(p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        FAIL("gpuprio top exited with status %#x", st);
    for (const char *at = buf; (at = strstr(at, "\"state\": \"stalled\"")); at++)
        stalled_rows++;
    for (const char *at = buf; (at = strstr(at, "\"pid\": ")); at++) {
        long pid = strtol(at + 7, NULL, 10);
        for (size_t i = 0; i < dead_before; i++)
            if (dead[i] == pid)
                FAIL("gpuprio top showed process %ld, which had ended", pid);
    }
}

/* ---- the tests ---- */

static void stop_worker(struct worker *w)
{
    w->stopped = true;
    w->stopped_ms[w->resumes % STOPS_KEPT][0] = now_ms();
    kill(w->pid, SIGSTOP);
}

/* Counts the resume in the worker's file before it goes on, so that its calls that spanned the
 * stop see the count change (chaos_worker.c, TIMED). */
static void resume_worker(struct worker *w)
{
    w->stopped_ms[w->resumes % STOPS_KEPT][1] = now_ms();
    w->resumes++;
    if (w->resumes_fd >= 0 &&
        pwrite(w->resumes_fd, &w->resumes, sizeof w->resumes, 0) != sizeof w->resumes)
        FAIL("cannot count a resume of worker %d: %s", (int)w->pid, strerror(errno));
    kill(w->pid, SIGCONT);
    w->stopped = false;
}

static void chaos(int steps)
{
    struct worker ws[WORKERS] = {{0}};
    unsigned kills = 0, stops = 0, starts = 0, tops = 0;
    for (int step = 0; step < steps; step++) {
        reap(ws, WORKERS, false);
        uint64_t now = now_ms();
        for (int i = 0; i < WORKERS; i++)
            if (ws[i].pid > 0 && ws[i].stopped && now >= ws[i].resume_at)
                resume_worker(&ws[i]);
        for (int i = 0; i < WORKERS; i++)
            if (ws[i].pid <= 0) {
                ws[i] = spawn(END_RUN, 200 + (int)rnd(400), NULL);
                forget_reaped(ws[i].pid);
                starts++;
            }
        struct worker *w = &ws[rnd(WORKERS)];
        switch (rnd(4)) {
        case 0: /* SIGKILL, stopped or not */
            if (w->pid > 0 && !w->killed) {
                w->killed = true;
                kill(w->pid, SIGKILL);
                kills++;
            }
            break;
        case 1:
            if (w->pid > 0 && !w->killed && !w->stopped) {
                w->resume_at = now + STOP_MIN_MS + rnd(STOP_SPREAD_MS);
                stop_worker(w);
                stops++;
            }
            break;
        case 2:
            check_top();
            tops++;
            break;
        default:
            break;
        }
        sleep_ms(100 + rnd(200));
    }
    for (int i = 0; i < WORKERS; i++)
        if (ws[i].pid > 0 && ws[i].stopped)
            resume_worker(&ws[i]);
    uint64_t limit = now_ms() + FINISH_LIMIT_S * 1000u;
    while (reap(ws, WORKERS, false) > 0 && now_ms() < limit)
        sleep_ms(20);
    for (int i = 0; i < WORKERS; i++)
        if (ws[i].pid > 0) {
            FAIL("worker %d (%s, level %s) still runs %d s after the chaos ended", (int)ws[i].pid,
                 ws[i].priority, ws[i].level, FINISH_LIMIT_S);
            ws[i].killed = true;
            kill(ws[i].pid, SIGKILL);
        }
    reap(ws, WORKERS, true);
    check_top();
    printf("chaos: %d steps, %u workers started, %u killed, %u stopped and resumed, %u finished "
           "right; top ran %u times (%u rows of stalled queues); the longest HIP call %.1f ms "
           "(bound %d ms)\n",
           steps, starts, kills, stops, ended_run, tops + 1, stalled_rows, held_max_us / 1e3,
           HELD_BOUND_MS);
    check_nothing_left();
}

/* Waits until no board slot is in use but process except's, or limit_ms passed; how many others
 * are in use then (*waited_ms: how long it took). */
static int settle(pid_t except, unsigned limit_ms, unsigned *waited_ms)
{
    uint64_t from = now_ms();
    int used;
    while ((used = slots_in_use(except)) > 0 && now_ms() - from < limit_ms)
        sleep_ms(20);
    *waited_ms = (unsigned)(now_ms() - from);
    return used;
}

static void brief(int count)
{
    enum { AT_ONCE = 8, BATCH = 100 };
    /* Dead processes' slots are reclaimed by the survivors' listeners, every second while none of
     * their threads is held (sched_board.c). */
    const unsigned settle_limit_ms = 3000;
    char stop[128];
    snprintf(stop, sizeof stop, "%s/worker-stop", dir);
    setenv("CHAOS_STOPFILE", stop, 1);
    struct worker lasting = spawn(END_RUN, 0, "critical");
    unsetenv("CHAOS_STOPFILE");
    struct worker ws[AT_ONCE] = {{0}};
    int started = 0, most_left = 0;
    unsigned kills = 0, slowest_ms = 0;
    long rss_first = -1, rss_last = -1;
    while (started < count) {
        int batch_end = started + BATCH < count ? started + BATCH : count;
        while (started < batch_end || reap(ws, AT_ONCE, false) > 0) {
            reap(ws, AT_ONCE, false);
            for (int i = 0; i < AT_ONCE && started < batch_end; i++)
                if (ws[i].pid <= 0) {
                    ws[i] = spawn((enum end)(END_RETURN + started++ % 5), 0, NULL);
                    forget_reaped(ws[i].pid);
                }
            for (int i = 0; i < AT_ONCE; i++)
                if (ws[i].pid > 0 && ws[i].end == END_KILLED && !ws[i].killed && rnd(3) == 0) {
                    ws[i].killed = true;
                    kill(ws[i].pid, SIGKILL);
                    kills++;
                }
            sleep_ms(1 + rnd(4));
        }
        unsigned waited;
        int left = settle(lasting.pid, settle_limit_ms, &waited);
        if (left > most_left)
            most_left = left;
        if (waited > slowest_ms)
            slowest_ms = waited;
        rss_last = resident_kib(lasting.pid);
        if (rss_first < 0)
            rss_first = rss_last;
        if (left != 0) {
            show_slots();
            FAIL("after %d processes, %d board slots of processes other than the long-running "
                 "one were in use %u ms later",
                 started, left, waited);
        }
    }
    int fd = open(stop, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    reap(&lasting, 1, true);
    unlink(stop);
    printf("brief: %d processes (%u killed, the others ended as they chose) next to a "
           "long-running one: after every %d, board use was back to its slots alone within %u ms "
           "(%d others at most); its resident memory %ld KiB after the first %d, %ld KiB after "
           "the last\n",
           count, kills, BATCH, slowest_ms, most_left, rss_first, BATCH, rss_last);
    check_nothing_left();
}

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[1], "chaos") && strcmp(argv[1], "brief"))) {
        fprintf(stderr, "usage: chaos chaos|brief N WORKER SHIM TOOL\n");
        return 2;
    }
    worker = argv[3];
    shim = argv[4];
    tool = argv[5];
    const char *s = getenv("CHAOS_SEED");
    seed = first_seed = s ? (unsigned)strtoul(s, NULL, 10) : 1;
    char seed_text[16];
    snprintf(seed_text, sizeof seed_text, "%u", seed);
    setenv("CHAOS_SEED", seed_text, 1);
    snprintf(dir, sizeof dir, "/tmp/gpuprio-chaos-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(name, sizeof name, "chaos%d", (int)getpid());
    setenv("HIPSIM_SHARED", name, 1);
    setenv("HIPSIM_COMPUTE_SLOTS", "2", 1);
    setenv("GPUPRIO_BOARD_DIR", dir, 1);
    char watchdog[16];
    snprintf(watchdog, sizeof watchdog, "%d", WATCHDOG_MS);
    setenv("GPUPRIO_WATCHDOG_MS", watchdog, 1);
    find_board_path();
    signal(SIGPIPE, SIG_IGN);

    start_sampling();
    if (!strcmp(argv[1], "chaos"))
        chaos(atoi(argv[2]));
    else
        brief(atoi(argv[2]));
    stop_sampling();

    char segment[128];
    snprintf(segment, sizeof segment, "/hipsim-%u-%s-0", (unsigned)getuid(), name);
    shm_unlink(segment);
    if (failures || getenv("CHAOS_KEEP")) {
        printf("kept %s (the workers' logs)\n", dir);
    } else {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            printf("could not remove %s\n", dir);
    }
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
