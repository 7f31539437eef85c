/*
 * board_harness.c - what the board tests share: starting a board_worker under the shim (with
 * extra environment, as another user, in a pid namespace, through wrappers), waiting for its
 * "ready" and reading what it says; the simulator's trace (every kernel of every process, on one
 * clock) and what it shows of who overtook whom; the subtest's board; the tenant tests' users and
 * shared directory. Run by every ctest name of board_tests.def.
 */
#include "board_harness.h"

int failures; /* expect.h's count, one for all the files of board_test */

const char *worker, *shim;
const char *tool;    /* the gpuprio command (GPUPRIO_TOOL), copied where users reach it */
bool stderr_to_file; /* workers write stderr to DIR/PID.err (stderr_of) */
bool in_namespaces;  /* each worker in a pid namespace of its own (ns-*) */
bool on_disk;        /* the board directory on a disk filesystem (disk-*) */
uid_t spawn_uid;     /* workers run as this user (0: as the test) */
const char *const *wrapper;
char dir[64], name[32], trace[128];
pid_t watched[MAX_WATCHED];
volatile sig_atomic_t reaped[MAX_WATCHED]; /* watched[i] was waited for */
volatile sig_atomic_t n_watched, hung;

/* ---- the workers ---- */

pid_t reap(pid_t pid, int *status, int flags)
{
    sigset_t alrm, old;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pid_t got = waitpid(pid, status, flags);
    sigprocmask(SIG_BLOCK, &alrm, &old);
    for (int i = 0; got > 0 && i < n_watched; i++)
        if (watched[i] == got)
            reaped[i] = 1;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return got;
}

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct proc spawn_env(const char *const *env, const char *priority, const char *policy,
                      const char *const *args)
{
    int out[2], in[2];
    struct proc p = {-1, NULL, -1};
    if (pipe(out) || pipe(in))
        return p;
    fflush(stdout);
    p.pid = fork();
    if (p.pid == 0) {
        int said = fcntl(2, F_DUPFD_CLOEXEC, 3); /* the test's stderr, for a start that fails */
        dup2(out[1], 1);
        dup2(in[0], 0);
        if (stderr_to_file) {
            char err[128];
            snprintf(err, sizeof err, "%s/%d.err", dir, (int)getpid());
            int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0)
                dup2(fd, 2);
        }
        close(out[0]);
        close(in[1]);
        if (spawn_uid &&
            (setgroups(0, NULL) != 0 || setgid(spawn_uid) != 0 || setuid(spawn_uid) != 0)) {
            dprintf(said, "board_test: cannot become uid %u: %s\n", (unsigned)spawn_uid,
                    strerror(errno));
            _exit(126);
        }
        if (!in_namespaces) /* else only the worker, not unshare, has the shim */
            setenv("LD_PRELOAD", shim, 1);
        setenv("GPUPRIO_PRIORITY", priority, 1);
        if (policy)
            setenv("GPUPRIO_POLICY", policy, 1);
        for (int i = 0; env && env[i]; i++) {
            const char *is = strchr(env[i], '=');
            char variable[64];
            if (is && (size_t)(is - env[i]) < sizeof variable) {
                snprintf(variable, sizeof variable, "%.*s", (int)(is - env[i]), env[i]);
                setenv(variable, is + 1, 1);
            }
        }
        /* In a pid namespace of its own, it is its namespace's pid 1, and dies with unshare. */
        char preload[PATH_MAX + 16];
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", shim);
        const char *const unshared[] = {"unshare", "--pid", "--fork", "--kill-child",
                                        "--",      "env",   preload};
        const char *argv[32];
        int n = 0;
        for (size_t i = 0; in_namespaces && i < sizeof unshared / sizeof *unshared; i++)
            argv[n++] = unshared[i];
        for (int i = 0; wrapper && wrapper[i] && i < 8; i++)
            argv[n++] = wrapper[i];
        argv[n++] = worker;
        for (int i = 0; args[i] && i < 8; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        execvp(argv[0], (char *const *)argv);
        dprintf(said, "board_test: cannot run %s as uid %u: %s\n", argv[0], (unsigned)getuid(),
                strerror(errno));
        _exit(127);
    }
    if (p.pid > 0 && n_watched < MAX_WATCHED)
        watched[n_watched++] = p.pid;
    close(out[1]);
    close(in[0]);
    p.out = fdopen(out[0], "r");
    if (p.out) /* unbuffered, so that line_within's poll sees every line not yet read */
        setvbuf(p.out, NULL, _IONBF, 0);
    p.in = in[1];
    return p;
}

bool stderr_of(const struct proc *p, const char *says)
{
    char path[128], line[512];
    snprintf(path, sizeof path, "%s/%d.err", dir, (int)p->pid);
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        fputs(line, stderr);
        found |= strstr(line, says) != NULL;
    }
    if (f)
        fclose(f);
    return found;
}

int stderr_count(const struct proc *p, const char *says)
{
    char path[128], line[1024];
    snprintf(path, sizeof path, "%s/%d.err", dir, (int)p->pid);
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, says) != NULL;
    if (f)
        fclose(f);
    return n;
}

int expect_line(struct proc *p, const char *want)
{
    char line[64];
    if (!p->out || !fgets(line, sizeof line, p->out))
        return -1;
    return strncmp(line, want, strlen(want)) == 0 ? 0 : -1;
}

bool line_within(struct proc *p, const char *want, long ms)
{
    char line[64];
    size_t n = 0;
    uint64_t until = now_ns() + (uint64_t)ms * 1000000u;
    while (p->out && n + 1 < sizeof line) {
        uint64_t now = now_ns();
        struct pollfd fd = {fileno(p->out), POLLIN, 0};
        if (now >= until || poll(&fd, 1, (int)((until - now) / 1000000u) + 1) <= 0)
            return false;
        int c = fgetc(p->out);
        if (c == EOF)
            return false;
        if (c == '\n')
            break;
        line[n++] = (char)c;
    }
    line[n] = '\0';
    return strncmp(line, want, strlen(want)) == 0;
}

struct proc spawn(const char *priority, const char *policy, const char *const *args)
{
    return spawn_env(NULL, priority, policy, args);
}

struct proc spawn_ready_env(const char *const *env, const char *priority, const char *policy,
                            const char *const *args)
{
    struct proc p = spawn_env(env, priority, policy, args);
    EXPECT(expect_line(&p, "ready") == 0);
    return p;
}

struct proc spawn_ready(const char *priority, const char *policy, const char *const *args)
{
    return spawn_ready_env(NULL, priority, policy, args);
}

void go(struct proc *p)
{
    EXPECT(write(p->in, "go\n", 3) == 3);
}

long said(struct proc *p, const char *format)
{
    char line[64];
    long v = -1;
    while (p->out && fgets(line, sizeof line, p->out))
        sscanf(line, format, &v);
    return v;
}

unsigned long long last_held_us, last_suspensions;
unsigned long long last_markers, last_commands, last_completed, last_submitted;
char last_output[1024];

int finish(struct proc *p, int *priority)
{
    char line[64];
    size_t used = 0;
    if (priority)
        *priority = INT32_MIN;
    last_held_us = last_suspensions = last_markers = last_commands = last_completed = 0;
    last_submitted = 0;
    last_output[0] = '\0';
    while (p->out && fgets(line, sizeof line, p->out)) {
        if (strncmp(line, "FAIL ", 5) == 0) /* the worker's own check (expect.h): say which */
            printf("worker %d: %s", (int)p->pid, line);
        int w = snprintf(last_output + used, sizeof last_output - used, "%s", line);
        used += w > 0 && (size_t)w < sizeof last_output - used ? (size_t)w : 0;
        if (priority)
            sscanf(line, "done %d", priority);
        sscanf(line, "held %llu us, suspended %llu times", &last_held_us, &last_suspensions);
        sscanf(line, "markers %llu for %llu commands, %llu of %llu completed", &last_markers,
               &last_commands, &last_completed, &last_submitted);
    }
    int st = 0;
    reap(p->pid, &st, 0);
    if (p->out)
        fclose(p->out);
    close(p->in);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct kernel *k;
size_t nk;

/* ---- the trace ---- */

void read_trace(void)
{
    free(k);
    k = NULL;
    nk = 0;
    size_t cap = 0;
    FILE *f = fopen(trace, "r");
    int pid, dev, hwq;
    uint64_t stream, tag, start, end, submit, waited;
    char kname[64];
    while (f &&
           fscanf(f,
                  "%d %d %" SCNu64 " %d %63s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                  " %" SCNu64,
                  &pid, &dev, &stream, &hwq, kname, &tag, &start, &end, &submit, &waited) == 10) {
        if (nk == cap) {
            cap = cap ? cap * 2 : 1024;
            k = realloc(k, cap * sizeof *k);
        }
        k[nk++] =
            (struct kernel){pid, (int)(tag >> 16), start, end, submit, (int)(tag & 0xffff), waited};
    }
    if (f)
        fclose(f);
}

int count_tag(int tag)
{
    int n = 0;
    for (size_t i = 0; i < nk; i++)
        n += k[i].tag == tag;
    return n;
}

int most_overtaking_within(int tag, uint64_t from, uint64_t until)
{
    int most = 0;
    for (size_t i = 0; i < nk; i++) {
        if (k[i].tag != tag || k[i].submit < from || k[i].submit >= until)
            continue;
        enum { PIDS = 64 };
        int pid[PIDS], count[PIDS], npids = 0;
        for (size_t j = 0; j < nk; j++) {
            if (k[j].tag <= tag || k[j].tag > TAG_LOW || k[j].start < k[i].submit ||
                k[j].start >= k[i].start)
                continue;
            int p = 0;
            while (p < npids && pid[p] != k[j].pid)
                p++;
            if (p == npids && npids < PIDS) {
                pid[npids] = k[j].pid;
                count[npids++] = 0;
            }
            if (p < npids && ++count[p] > most) {
                most = count[p];
                if (getenv("BOARD_TEST_DEBUG"))
                    printf("kernel %zu of tag %d: submitted %.3f ms, started %.3f ms; %d of "
                           "process %d (tag %d) in between\n",
                           i, tag, (double)(k[i].submit - k[0].start) / 1e6,
                           (double)(k[i].start - k[0].start) / 1e6, most, k[j].pid, k[j].tag);
            }
        }
    }
    return most;
}

int most_overtaking(int tag)
{
    return most_overtaking_within(tag, 0, UINT64_MAX);
}

int typical_overtaking(int tag, int *worst)
{
    int bursts = 0, most[256], n = 0;
    for (size_t i = 0; i < nk; i++)
        bursts = k[i].tag == tag && k[i].burst > bursts ? k[i].burst : bursts;
    for (int b = 1; b <= bursts && n < 256; b++) {
        uint64_t from = UINT64_MAX, until = 0;
        for (size_t i = 0; i < nk; i++)
            if (k[i].tag == tag && k[i].burst == b) {
                from = k[i].submit < from ? k[i].submit : from;
                until = k[i].submit + 1 > until ? k[i].submit + 1 : until;
            }
        if (until)
            most[n++] = most_overtaking_within(tag, from, until);
    }
    for (int i = 1; i < n; i++) /* insertion sort: a few bursts */
        for (int j = i; j > 0 && most[j - 1] > most[j]; j--) {
            int t = most[j];
            most[j] = most[j - 1];
            most[j - 1] = t;
        }
    *worst = n ? most[n - 1] : -1;
    return n ? most[n / 2] : -1;
}

/* ---- the board ---- */

struct board_use board_use(void)
{
    struct board_use u = {0, 0, 0};
    char path[256];
    char key[GP_BOARD_KEY_MAX];
    snprintf(key, sizeof key, "sim:%s:00", name);
    setenv("GPUPRIO_BOARD_DIR", dir, 1);
    if (gp_board_path(key, path, sizeof path) != 0)
        return (struct board_use){-1, -1, -1};
    struct gp_board b;
    const char *why;
    if (gp_board_open_file(path, false, &b, &why) != 0)
        return errno == ENOENT ? u : (struct board_use){-1, -1, -1};
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        uint64_t word = atomic_load(&b.f->slots[i].owner);
        u.slots += word != 0;
        if (GP_SLOT_STATE(word) == GP_SLOT_PROCESS) {
            u.records++;
            u.unused += atomic_load(&b.f->slots[i].unused_queues);
        }
    }
    gp_board_close(&b);
    return u;
}

int open_board(struct gp_board *b)
{
    char path[256];
    char key[GP_BOARD_KEY_MAX];
    const char *why;
    snprintf(key, sizeof key, "sim:%s:00", name);
    if (gp_board_path(key, path, sizeof path) != 0)
        return -1;
    return gp_board_open_file(path, true, b, &why);
}

uint64_t suspensions_of(struct gp_board *b, pid_t pid)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        uint64_t word = atomic_load(&b->f->slots[i].owner);
        if (GP_SLOT_STATE(word) == GP_SLOT_LIVE && GP_SLOT_OWNER(word) == (uint32_t)pid)
            n += atomic_load(&b->f->slots[i].st.suspensions);
    }
    return n;
}

int slots_in_use(void)
{
    return board_use().slots;
}

const char *const high_bursts[] = {"1", "burst", "8", "8", "300", "10000", NULL};
const char *const normal_load[] = {"2", "saturate", "500", "300", NULL};
const char *const low_load[] = {"3", "saturate", "500", "300", NULL};

const char *level(void)
{
    const char *l = getenv("GPUPRIO_LEVEL");
    return l ? l : "2";
}

char conf[160], shared[160];

/* ---- the tenant tests' users and shared directory ---- */

bool can_become_others(void)
{
    pid_t child = fork();
    if (child == 0)
        _exit(setgroups(0, NULL) == 0 && setgid(USER_B) == 0 && setuid(USER_B) == 0 ? 0 : 1);
    int status = -1;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

void copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
    char buf[65536];
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            n = -1;
    EXPECT(in >= 0 && out >= 0 && n == 0 && fchmod(out, mode) == 0);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
}

/* Whether uid can run path (access as that user: its permissions, every directory above it, a
 * mount that allows running programs); else says why and fails. */
static bool runnable_by(uid_t uid, const char *path)
{
    int status = -1;
    pid_t child = fork();
    if (child == 0)
        _exit(setgroups(0, NULL) == 0 && setgid(uid) == 0 && setuid(uid) == 0
                  ? access(path, X_OK) == 0 ? 0 : errno & 0x7f
                  : 126);
    bool ok = child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0;
    if (!ok)
        fprintf(stderr,
                "FAIL: uid %u cannot run %s (%s): the tenant tests need a directory every user "
                "can reach and run programs from (board_test makes it under %s)\n",
                (unsigned)uid, path,
                WIFEXITED(status) && WEXITSTATUS(status) != 126 ? strerror(WEXITSTATUS(status))
                                                                : "cannot become that user",
                dir);
    return ok;
}

/* The worker, the shim, the simulator (HIPSIM_LIBRARY, from the test's environment) and the
 * gpuprio command (GPUPRIO_TOOL, where given), copied where the other users can reach them: a
 * build tree under a private home (/root, mode 0700) is not. */
static void copy_for_others(void)
{
    static char bin[96], w[160], sh[160], sim[160], gpuprio[160];
    const char *sim_library = getenv("HIPSIM_LIBRARY");
    snprintf(bin, sizeof bin, "%s/bin", dir);
    snprintf(w, sizeof w, "%s/board_worker", bin);
    snprintf(sh, sizeof sh, "%s/libgpuprio-hip.so", bin);
    snprintf(sim, sizeof sim, "%s/libamdhip64.so.6", bin);
    snprintf(gpuprio, sizeof gpuprio, "%s/gpuprio", bin);
    EXPECT(sim_library != NULL && mkdir(bin, 0755) == 0 && chmod(bin, 0755) == 0);
    copy_file(worker, w, 0755);
    copy_file(shim, sh, 0644);
    if (sim_library)
        copy_file(sim_library, sim, 0755);
    if (tool) {
        copy_file(tool, gpuprio, 0755);
        tool = gpuprio;
    }
    worker = w;
    shim = sh;
    setenv("LD_LIBRARY_PATH", bin, 1); /* before the worker's RUNPATH, the build tree's */
    EXPECT(runnable_by(USER_A, worker) && runnable_by(USER_B, worker));
}

void tenants_setup(void)
{
    snprintf(shared, sizeof shared, "%s/shared", dir);
    snprintf(conf, sizeof conf, "%s/gpuprio.conf", dir);
    EXPECT(chmod(dir, 0755) == 0);
    EXPECT(mkdir(shared, 0700) == 0 && chmod(shared, 01777) == 0);
    copy_for_others();
    setenv("HIPSIM_SHARED_USERS", "1", 1);
    setenv("GPUPRIO_CONFIG", conf, 1);
    setenv("GPUPRIO_BOARD_DIR", shared, 1); /* each user's own board there without the file */
}

void write_conf(const char *text)
{
    unlink(conf);
    if (text) {
        FILE *f = fopen(conf, "w");
        if (f) {
            fprintf(f, "# written by board_test\nboard_dir = %s\n%s", shared, text);
            fclose(f);
        }
        EXPECT(chmod(conf, 0644) == 0);
    }
    static int written;
    char kept[16];
    snprintf(kept, sizeof kept, "conf%d", written++);
    next_trace(kept);
    int fd = open(trace, O_WRONLY | O_CREAT, 0666);
    EXPECT(fd >= 0 && fchmod(fd, 0666) == 0);
    close(fd);
}

int open_board_of(uid_t uid, char *path, size_t size)
{
    char key[GP_BOARD_KEY_MAX];
    snprintf(key, sizeof key, "sim:%s:00", name);
    DIR *d = opendir(shared);
    int fd = -1;
    for (struct dirent *e; d && fd < 0 && (e = readdir(d));) {
        uid_t named;
        struct stat st;
        if (snprintf(path, size, "%s/%s", shared, e->d_name) >= (int)size)
            continue;
        if (gp_board_name_of(e->d_name, key, &named) && named == uid && lstat(path, &st) == 0 &&
            S_ISREG(st.st_mode) && st.st_uid == uid)
            fd = open(path, O_RDONLY | O_NONBLOCK);
    }
    if (d)
        closedir(d);
    return fd;
}

bool wait_for_queue_of(uid_t uid, uint64_t gate)
{
    /* Mapped as it is: this process's own reading of the configuration file (which decides the
     * mode a board must have) was made once, for the subtest's first run. */
    for (int tries = 0; tries < 10000; tries++) {
        bool found = false;
        char path[300];
        int fd = open_board_of(uid, path, sizeof path);
        struct gp_board_file *f =
            fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *f, PROT_READ, MAP_SHARED, fd, 0);
        for (unsigned i = 0; f != MAP_FAILED && i < GP_BOARD_SLOTS && !found; i++)
            found = GP_SLOT_STATE(atomic_load(&f->slots[i].owner)) == GP_SLOT_LIVE &&
                    (!gate || (atomic_load(&f->slots[i].st.gate) & gate));
        if (f != MAP_FAILED)
            munmap(f, sizeof *f);
        if (fd >= 0)
            close(fd);
        if (found)
            return true;
        usleep(1000);
    }
    return false;
}

void span_of(int tag, uint64_t *first, uint64_t *last)
{
    *first = UINT64_MAX;
    *last = 0;
    for (size_t i = 0; i < nk; i++)
        if (k[i].tag == tag) {
            *first = k[i].start < *first ? k[i].start : *first;
            *last = k[i].end > *last ? k[i].end : *last;
        }
}

void next_trace(const char *kept_as)
{
    char kept[sizeof trace + 32];
    snprintf(kept, sizeof kept, "%s.%s", trace, kept_as);
    if (getenv("BOARD_TEST_DEBUG") && rename(trace, kept) == 0)
        printf("  the trace kept as %s\n", kept);
    int fd = open(trace, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    close(fd);
}

pid_t fork_as(uid_t uid)
{
    fflush(stdout);
    pid_t child = fork();
    if (child == 0 && uid && (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0))
        _exit(126);
    if (child > 0 && n_watched < MAX_WATCHED)
        watched[n_watched++] = child;
    return child;
}
