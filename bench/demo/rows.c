/*
 * rows.c - gpuprio-demo's parent side: runs each row in processes of its own and collects their
 * result lines.
 *
 * A row runs in a fresh process (/proc/self/exe --scenario ID ...) because what sets rows apart
 * is read once per process: LD_PRELOAD of the shim (gpuprio rows: GPUPRIO_SHIM_PATH, the
 * absolute path of the shim built next to the demo), gpuprio's GPUPRIO_* settings and the
 * simulator's HIPSIM_* ones. The child gets the parent's environment with the row's entries
 * applied (scenario.env, then the role's role_env, then scenario.sim_env, then LD_PRELOAD), and
 * the parent keeps only its one result line (result.c); the child's stderr passes through, so its
 * own diagnostics reach the user as they are.
 *
 * Rounds. Every row runs --rounds times, the rows taking turns (all rows once, then all again),
 * and its rounds' results are added up (result.c): what the host does meanwhile falls on every
 * row alike, LC alone's among them, instead of on whichever row ran then.
 *
 * Cross-process rows. The parent starts one child per workload (--scenario ID --role lc|lc2|be,
 * each BE worker a process of its own), all with the same environment but for their role_env: the
 * row's entries as above, HIPSIM_SHARED set to a name unique to the run and row, so their simulated
 * devices share one set of compute slots (tests/sim/hipsim.h) and have a PCI bus id, which gpuprio
 * keys its board by, and GPUPRIO_BOARD_DIR pointing at a private directory that the parent creates
 * (in /dev/shm: Level 2 needs tmpfs) and removes, so the demo leaves no board behind (it removes
 * the simulator's segments after each row too). Each child creates its one stream, warms up and
 * prints "ready"; once all are ready, the parent writes their pids into the row's page (a memfd
 * every child inherits, named to them by --row-fd, where their simulators count their lateness:
 * hoststall.c), then one t0 (CLOCK_MONOTONIC, which all processes share) to their stdin, so the
 * windows coincide. A BE process runs until its stdin closes, which the parent does once the
 * client processes have exited. The parent reaps each child as soon as its output ends (the
 * simulator frees a dead process's share of the device only once it is no zombie), adds the
 * children's result lines up and checks that the priorities gpuprio gave the streams of the
 * different processes are in the intended order. If any child fails, the row fails.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "demo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *const demo_role_names[NROLES] = {
    [ROLE_ALL] = "all", [ROLE_LC] = "lc", [ROLE_LC2] = "lc2", [ROLE_BE] = "be"};

static size_t env_name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* Whether an entry of the NULL-terminated lists names the variable of `kv`. */
static bool named_in(const char *kv, const char *const *const *lists, size_t nlists)
{
    size_t len = env_name_len(kv);
    for (size_t l = 0; l < nlists; l++)
        for (size_t j = 0; lists[l] && lists[l][j]; j++)
            if (env_name_len(lists[l][j]) == len && strncmp(kv, lists[l][j], len) == 0)
                return true;
    return false;
}

/* environ with the row's entries applied: its own (env), the role's (role_env), its simulator
 * settings (sim_env), LD_PRELOAD of the shim for a gpuprio row, then `more` (NULL-terminated, or
 * NULL: the parent's settings for a cross-process row). "NAME=VALUE" is set (replacing any of
 * the same name), "NAME" unset. Caller frees. */
static char **row_environment(const scenario *sc, demo_role role, const char *const *more)
{
    static const char *const preload[] = {"LD_PRELOAD=" GPUPRIO_SHIM_PATH, NULL};
    const char *const *const lists[] = {sc->env, sc->role_env[role], sc->sim_env,
                                        sc->gpuprio ? preload : NULL, more};
    const size_t nlists = sizeof lists / sizeof lists[0];
    size_t n = 0, extra = 0;
    while (environ[n])
        n++;
    for (size_t l = 0; l < nlists; l++)
        for (size_t j = 0; lists[l] && lists[l][j]; j++)
            extra++;
    char **envp = calloc(n + extra + 1, sizeof *envp);
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!named_in(environ[i], lists, nlists))
            envp[k++] = environ[i];
    for (size_t l = 0; l < nlists; l++)
        for (size_t j = 0; lists[l] && lists[l][j]; j++)
            if (strchr(lists[l][j], '='))
                envp[k++] = (char *)(uintptr_t)lists[l][j];
    envp[k] = NULL;
    return envp;
}

/* The value the row's processes get for `name`: their own (sim_env), else the parent's. */
static const char *row_getenv(const scenario *sc, const char *name)
{
    size_t len = strlen(name);
    for (size_t j = 0; sc->sim_env && sc->sim_env[j]; j++)
        if (env_name_len(sc->sim_env[j]) == len && strncmp(sc->sim_env[j], name, len) == 0)
            return sc->sim_env[j][len] == '=' ? sc->sim_env[j] + len + 1 : NULL;
    return getenv(name);
}

/* One child process of a row. */
typedef struct child {
    pid_t pid;
    demo_role role;
    int out;   /* read end of its stdout, -1 once it ended */
    int in;    /* write end of its stdin (cross-process rows), or -1 */
    char *buf; /* what it wrote to stdout so far, NUL-terminated */
    size_t len, cap;
    bool ready; /* cross-process rows: it said "ready" */
} child;

/* Starts argv with envp; with_stdin: on a pipe of ours, else on the parent's stdin. The pipes are
 * close-on-exec, so that no child holds another's stdin open (it would never see it close). */
static bool spawn_child(char *const *argv, char **envp, bool with_stdin, child *ch)
{
    int out[2], in[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0) {
        perror("gpuprio-demo: pipe");
        return false;
    }
    if (with_stdin && pipe2(in, O_CLOEXEC) != 0) {
        perror("gpuprio-demo: pipe");
        close(out[0]);
        close(out[1]);
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("gpuprio-demo: fork");
        close(out[0]);
        close(out[1]);
        if (with_stdin) {
            close(in[0]);
            close(in[1]);
        }
        return false;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls between fork and exec. dup2 clears close-on-exec. The
         * parent ignores SIGPIPE; the child must not inherit that. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(SIGPIPE, &dfl, NULL);
        if (dup2(out[1], STDOUT_FILENO) < 0 || (with_stdin && dup2(in[0], STDIN_FILENO) < 0))
            _exit(127);
        execve("/proc/self/exe", argv, envp);
        static const char msg[] = "gpuprio-demo: execve /proc/self/exe failed\n";
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)ignored;
        _exit(127);
    }
    close(out[1]);
    if (with_stdin)
        close(in[0]);
    *ch = (child){.pid = pid, .out = out[0], .in = in[1]};
    return true;
}

/* Appends what the child wrote to ch->buf (one read): the bytes read, 0 at EOF, -1 on a read
 * error or when out of memory. */
static ssize_t read_child(child *ch)
{
    if (ch->len + 1 >= ch->cap) {
        size_t cap = ch->cap ? ch->cap * 2 : 4096;
        char *bigger = cap <= (1u << 20) ? realloc(ch->buf, cap) : NULL;
        if (!bigger)
            return -1;
        ch->buf = bigger;
        ch->cap = cap;
    }
    ssize_t got;
    while ((got = read(ch->out, ch->buf + ch->len, ch->cap - 1 - ch->len)) < 0 && errno == EINTR) {
    }
    ch->len += got > 0 ? (size_t)got : 0;
    ch->buf[ch->len] = '\0';
    return got;
}

/* Waits for the child; true if it exited with status 0, else says how it ended. */
static bool wait_child(const scenario *sc, const child *ch)
{
    int status = 0;
    while (waitpid(ch->pid, &status, 0) < 0 && errno == EINTR) {
    }
    char who[32] = "";
    if (sc->split)
        snprintf(who, sizeof who, " (%s process)", demo_role_names[ch->role]);
    if (WIFSIGNALED(status))
        fprintf(stderr, "gpuprio-demo: row %s%s: child killed by signal %d%s\n", sc->id, who,
                WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (watchdog: runtime hung?)" : "");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "gpuprio-demo: row %s%s: child exited with status %d\n", sc->id, who,
                WEXITSTATUS(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Closes the stdin of every child still holding one: BE processes then stop, and processes still
 * waiting for t0 give up. */
static void close_inputs(child *ch, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ch[i].in >= 0) {
            close(ch[i].in);
            ch[i].in = -1;
        }
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A cross-process row's shared page (demo.h), one for the whole run: its fd is inherited by
 * every child, and a cross-process row's are told it (--row-fd). */
typedef struct shared_page {
    int fd;
    row_page *page;
} shared_page;

/* Runs one row once: in a child process, or, in a cross-process row, in one per workload with
 * the parent's settings `more` added to their environment. True with *r (zeroed first) filled
 * in if it succeeded. */
static bool run_row(const scenario *sc, const options *o, const char *argv0,
                    const char *const *more, const shared_page *sp, row_result *r)
{
    char sec[32], rate[32], kern[32], lcus[32], beus[32], rounds[16], fd[16];
    snprintf(sec, sizeof sec, "%.17g", o->seconds);
    snprintf(rate, sizeof rate, "%.17g", o->rate);
    snprintf(kern, sizeof kern, "%d", o->kernels);
    snprintf(lcus, sizeof lcus, "%.17g", o->lc_us);
    snprintf(beus, sizeof beus, "%.17g", o->be_us);
    snprintf(rounds, sizeof rounds, "%d", o->rounds);
    snprintf(fd, sizeof fd, "%d", sp->fd);
    /* clang-format off */
    char *argv[] = {(char *)(uintptr_t)argv0, "--scenario", (char *)(uintptr_t)sc->id,
                    "--seconds", sec, "--rate", rate, "--kernels", kern,
                    "--lc-us", lcus, "--be-us", beus, "--rounds", rounds,
                    NULL, NULL, NULL, NULL, NULL};
    /* clang-format on */
    const size_t role_arg = sizeof argv / sizeof argv[0] - 5; /* "--role R --row-fd N" */
    if (sc->split) {
        argv[role_arg + 2] = "--row-fd";
        argv[role_arg + 3] = fd;
        *sp->page = (row_page){.magic = ROW_PAGE_MAGIC};
    }

    child ch[MAX_ITEMS];
    size_t n = 0;
    if (!sc->split)
        ch[n++].role = ROLE_ALL;
    if (sc->split && sc->lc)
        ch[n++].role = ROLE_LC;
    if (sc->split && sc->lc2)
        ch[n++].role = ROLE_LC2;
    for (int i = 0; sc->split && i < sc->be_workers && n < MAX_ITEMS; i++)
        ch[n++].role = ROLE_BE;

    bool ok = true;
    size_t started = 0;
    while (ok && started < n) {
        demo_role role = ch[started].role;
        if (sc->split) {
            argv[role_arg] = "--role";
            argv[role_arg + 1] = (char *)(uintptr_t)demo_role_names[role];
        }
        char **envp = row_environment(sc, role, more);
        ok = envp && spawn_child(argv, envp, sc->split, &ch[started]);
        free(envp);
        ch[started].role = role;
        started += ok;
    }

    /* Read every child's output as it comes, and reap each as soon as it ends: the simulator (and
     * gpuprio's board) free a dead process's share of the device only once it is no zombie.
     * Cross-process rows: once every process is ready (stream created, warmed up), one t0 for
     * all; once the clients have exited (or anything failed), the BE processes may stop. */
    size_t left = started, clients = 0, nready = 0;
    for (size_t i = 0; i < started; i++)
        clients += ch[i].role != ROLE_BE;
    bool t0_sent = !sc->split;
    while (left > 0) {
        if (!ok || (t0_sent && clients == 0))
            close_inputs(ch, started);
        struct pollfd pfd[MAX_ITEMS];
        size_t idx[MAX_ITEMS], nfds = 0;
        for (size_t i = 0; i < started; i++)
            if (ch[i].out >= 0)
                pfd[nfds] = (struct pollfd){.fd = ch[i].out, .events = POLLIN}, idx[nfds++] = i;
        int np = poll(pfd, nfds, -1);
        if (np < 0 && errno == EINTR)
            continue;
        for (size_t k = 0; k < nfds; k++) {
            child *c = &ch[idx[k]];
            if (np >= 0 && pfd[k].revents == 0)
                continue; /* (if poll fails, read each in turn) */
            ssize_t got = read_child(c);
            if (got > 0 && sc->split && !c->ready && strchr(c->buf, '\n')) {
                c->ready = strncmp(c->buf, "ready\n", 6) == 0;
                if (!c->ready)
                    fprintf(stderr, "gpuprio-demo: row %s (%s process): said %.20s, not ready\n",
                            sc->id, demo_role_names[c->role], c->buf);
                ok = c->ready && ok;
                nready++;
            }
            if (got > 0)
                continue;
            close(c->out);
            c->out = -1;
            left--;
            clients -= c->role != ROLE_BE;
            ok = wait_child(sc, c) && got == 0 && (c->ready || !sc->split) && ok;
        }
        if (ok && !t0_sent && nready == started) {
            for (size_t i = 0; i < started; i++)
                sp->page->pids[sp->page->npids++] = (int32_t)ch[i].pid;
            char line[32];
            int len = snprintf(line, sizeof line, "%" PRIu64 "\n",
                               (uint64_t)(monotonic_ns() + PROCS_START_NS + BE_LEAD_NS));
            for (size_t i = 0; i < started; i++)
                ok = write(ch[i].in, line, (size_t)len) == len && ok;
            t0_sent = true;
        }
    }
    close_inputs(ch, started);

    memset(r, 0, sizeof *r);
    row_result *part = malloc(sizeof *part);
    if (!part) {
        fprintf(stderr, "gpuprio-demo: out of memory\n");
        ok = false;
    }
    for (size_t i = 0; i < started; i++) {
        if (ok && (!ch[i].buf || !demo_parse_result_line(ch[i].buf, sc->id, part))) {
            fprintf(stderr, "gpuprio-demo: row %s: no valid " RESULT_TAG " line in its output\n",
                    sc->id);
            ok = false;
        }
        if (ok)
            demo_merge_result(r, part, false);
        free(ch[i].buf);
    }
    free(part);
    if (ok && sc->gpuprio && !demo_prio_ordered(r->prio)) {
        fprintf(stderr,
                "gpuprio-demo: row %s: the streams' gpuprio priorities are %s, not LC > LC2 > BE: "
                "gpuprio would not tell them apart\n",
                sc->id, r->prio);
        ok = false;
    }
    return ok;
}

static volatile sig_atomic_t interrupted; /* the signal that asked the parent to stop */

static void on_signal(int sig)
{
    interrupted = sig;
}

/* Removes the board directory and the files in it (boards, and any half-made one). */
static void remove_board_dir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    if (rmdir(dir) != 0)
        fprintf(stderr, "gpuprio-demo: cannot remove %s: %s\n", dir, strerror(errno));
}

/* Runs row i once (a round), on a device and, for a cross-process row, a board of its own,
 * and adds what it measured to res[i]; false if it failed. */
static bool run_round(size_t i, const options *o, const char *argv0, const char *board_env,
                      const shared_page *sp, row_result *res, row_result *round)
{
    const scenario *sc = &demo_scenarios[i];
    char shared[64];
    snprintf(shared, sizeof shared, "gpuprio-demo-%d-%zu", (int)getpid(), i);
    char shared_env[80];
    snprintf(shared_env, sizeof shared_env, "HIPSIM_SHARED=%s", shared);
    const char *const more[] = {shared_env, board_env, NULL};
    bool ok = run_row(sc, o, argv0, sc->split ? more : NULL, sp, round);
    unsigned devices = demo_setting_uint(row_getenv(sc, "HIPSIM_DEVICES"), 1);
    for (unsigned d = 0; sc->split && d < devices; d++) {
        char segment[128];
        snprintf(segment, sizeof segment, "/hipsim-%u-%s-%u", (unsigned)getuid(), shared, d);
        (void)shm_unlink(segment);
    }
    if (ok)
        demo_merge_result(&res[i], round, true);
    return ok;
}

/* The page the processes of a cross-process row share (demo.h), inherited by every child. */
static bool make_shared_page(shared_page *sp)
{
    sp->fd = memfd_create("gpuprio-demo-row", 0);
    if (sp->fd < 0) {
        perror("gpuprio-demo: memfd_create");
        return false;
    }
    if (ftruncate(sp->fd, sizeof(row_page)) != 0) {
        perror("gpuprio-demo: ftruncate of the row's page");
        goto fail;
    }
    sp->page = mmap(NULL, sizeof(row_page), PROT_READ | PROT_WRITE, MAP_SHARED, sp->fd, 0);
    if (sp->page == MAP_FAILED) {
        perror("gpuprio-demo: mmap of the row's page");
        goto fail;
    }
    return true;
fail:
    close(sp->fd);
    return false;
}

/* The rows take turns, round after round, so that what the host does meanwhile falls on all of
 * them alike (LC alone's among them). Cross-process rows run on a device and board of their own,
 * removed afterwards. */
bool demo_run_rows(const options *o, const char *argv0, row_result *res, bool *ok)
{
    /* Writing t0 to a child that died must fail the row, not kill the parent. An interrupted
     * demo still removes what it made: the children get SIGINT too and the row ends at once. */
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* On tmpfs, as users' boards must be for Level 2's gates (the simulator refuses to register a
     * shared mapping of a file elsewhere, as the runtimes do: docs/simulator.md). */
    struct stat shm;
    const char *tmp = stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode) ? "/dev/shm"
                      : getenv("TMPDIR") && *getenv("TMPDIR")             ? getenv("TMPDIR")
                                                                          : "/tmp";
    char board_dir[PATH_MAX];
    snprintf(board_dir, sizeof board_dir, "%s/gpuprio-demo-XXXXXX", tmp);
    if (!mkdtemp(board_dir)) {
        fprintf(stderr, "gpuprio-demo: cannot create a directory in %s: %s\n", tmp,
                strerror(errno));
        return false;
    }
    char board_env[PATH_MAX + 32];
    snprintf(board_env, sizeof board_env, "GPUPRIO_BOARD_DIR=%s", board_dir);

    shared_page sp;
    row_result *round = malloc(sizeof *round);
    if (!round || !make_shared_page(&sp)) {
        free(round);
        remove_board_dir(board_dir);
        return false;
    }
    for (size_t i = 0; i < demo_nscenarios; i++)
        ok[i] = demo_row_selected(o, i);
    /* A row that failed once stays failed, and does not run again. */
    for (int k = 0; k < o->rounds && !interrupted; k++)
        for (size_t i = 0; i < demo_nscenarios && !interrupted; i++)
            if (ok[i])
                ok[i] = run_round(i, o, argv0, board_env, &sp, res, round);
    for (size_t i = 0; i < demo_nscenarios; i++)
        if (ok[i])
            demo_finish_result(&res[i]);
    munmap(sp.page, sizeof(row_page));
    close(sp.fd);
    free(round);
    remove_board_dir(board_dir);
    if (interrupted) {
        signal(interrupted, SIG_DFL);
        raise(interrupted);
        return false;
    }
    return true;
}
