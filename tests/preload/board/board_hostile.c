/*
 * board_hostile.c - hostile neighbours (docs/board.md, "Threat model"): a third local user attacks
 * two users' processes and the gpuprio tools through the shared directory, and they must neither
 * hang, crash nor be blinded. ctest: tenant.hostile_fifo, _truncate, _flood, _squat, _unlisted,
 * _mutate, _set, _links, _dirflood, _forged, _wakes, _rdlock, _rdlock_claim.
 */
#include "board_harness.h"

/* A worker or tool that hangs is killed, and the subtest fails, rather than stalling until
 * ctest's timeout. */
static void on_hang(int sig)
{
    (void)sig;
    hung = 1;
    for (int i = 0; i < n_watched; i++)
        if (!reaped[i]) /* still our child, whose pid nobody else can have */
            kill(watched[i], SIGKILL);
}

static void hang_bound(unsigned seconds)
{
    signal(SIGALRM, on_hang);
    alarm(seconds);
}

/* The board file of uid for the subtest's device with a name of the attacker's choosing: made by
 * the attacker, as uid C (root chowns what it made: the same file). */
static void plant(const char *file, const char *what, uid_t named)
{
    char path[300];
    snprintf(path, sizeof path, "%s/gpuprio-%u-v%u-sim_%s_00%s", shared, (unsigned)named,
             GP_BOARD_VERSION, name, file);
    if (!strcmp(what, "fifo")) {
        EXPECT(mkfifo(path, 0666) == 0);
    } else {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        EXPECT(fd >= 0);
        if (fd >= 0)
            close(fd);
    }
    EXPECT(lchown(path, USER_C, USER_C) == 0 && chmod(path, 0666) == 0);
}

/* What two users' processes did side by side: user A's high-priority bursts, user B's low load. */
struct pair {
    int high_status, low_status;
    unsigned long long low_suspended;  /* how often the load yielded to the other user */
    unsigned long long high_suspended; /* and the bursts, to anyone */
    int high_kernels, low_kernels;
    int tools_failed; /* runs of gpuprio top, metrics and set meanwhile that failed */
    /* What each said on stdout after "ready", the priority it ended with, and its pid (whose
     * stderr is DIR/PID.err). */
    char high_out[1024], low_out[1024];
    int high_at, low_at;
    pid_t high_pid, low_pid;
};

static const char *const long_bursts[] = {"1", "burst", "30", "8", "300", "10000", NULL};
static const char *const long_load[] = {"3", "saturate", "2000", "300", NULL};

/* How many of the bursts (TAG_HIGH, each numbered in its tag) ran wholly while the load
 * (TAG_LOW) had work on the device: from its first kernel's submission to its last one's end. */
static int bursts_within_load(void)
{
    enum { MAX_BURSTS = 64 };
    uint64_t from = UINT64_MAX, until = 0, first[MAX_BURSTS], last[MAX_BURSTS];
    for (int b = 0; b < MAX_BURSTS; b++)
        first[b] = UINT64_MAX, last[b] = 0;
    for (size_t i = 0; i < nk; i++) {
        int b = k[i].burst;
        if (k[i].tag == TAG_LOW) {
            from = k[i].submit < from ? k[i].submit : from;
            until = k[i].end > until ? k[i].end : until;
        } else if (k[i].tag == TAG_HIGH && b > 0 && b < MAX_BURSTS) {
            first[b] = k[i].submit < first[b] ? k[i].submit : first[b];
            last[b] = k[i].end > last[b] ? k[i].end : last[b];
        }
    }
    int n = 0;
    for (int b = 1; b < MAX_BURSTS; b++)
        n += last[b] && first[b] >= from && last[b] <= until;
    return n;
}

/* A's bursts and B's load, both under a bound on hangs (90 s: they take about 1 s), with
 * tool_rounds rounds of the tools (tools_fail) while they run. */
static struct pair pair_under_attack(int tool_rounds)
{
    struct pair r = {.high_status = -1, .low_status = -1};
    hung = 0;
    hang_bound(90);
    spawn_uid = USER_A;
    struct proc bursts = spawn_ready("high", NULL, long_bursts);
    spawn_uid = USER_B;
    struct proc load = spawn_ready("low", NULL, long_load);
    spawn_uid = 0;
    go(&bursts);
    EXPECT(wait_for_queue_of(USER_A, 0)); /* the load finds the bursts' queue there (tenant.two) */
    go(&load);
    r.tools_failed = tools_fail(tool_rounds);
    r.high_status = finish(&bursts, &r.high_at);
    r.high_suspended = last_suspensions;
    snprintf(r.high_out, sizeof r.high_out, "%s", last_output);
    r.low_status = finish(&load, &r.low_at);
    r.low_suspended = last_suspensions;
    snprintf(r.low_out, sizeof r.low_out, "%s", last_output);
    r.high_pid = bursts.pid;
    r.low_pid = load.pid;
    alarm(0);
    read_trace();
    r.high_kernels = count_tag(TAG_HIGH);
    r.low_kernels = count_tag(TAG_LOW);
    int within = bursts_within_load();
    printf("  user %u's bursts exit %d (%d kernels), user %u's load exit %d (%d kernels, "
           "suspended %llu times for the bursts, %d of them wholly within it); %d of %d runs of "
           "gpuprio top/metrics/set failed%s\n",
           USER_A, r.high_status, r.high_kernels, USER_B, r.low_status, r.low_kernels,
           r.low_suspended, within, r.tools_failed, tool_runs, hung ? "; HUNG: killed" : "");
    return r;
}

/* The victims ran to their end as without the attacker, scheduling together (the load yielded
 * to the other user's bursts), and every tool run answered. */
/* text with every run of digits as one '#' (what differs between runs: times, counts, pids). */
static void masked(const char *text, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < size; p++)
        if (*p < '0' || *p > '9')
            out[n++] = *p;
        else if (!n || out[n - 1] != '#')
            out[n++] = '#';
    out[n] = '\0';
}

/* What a victim said on stdout after "ready": its stream's time held and suspensions, then its
 * priority, exactly as without an attacker (board_worker.c); the priority it ran at, at. */
static bool output_as_expected(const char *who, const char *out, int priority, int at)
{
    char got[1024];
    masked(out, got, sizeof got);
    bool ok = !strcmp(got, "held # us, suspended # times\ndone #\n") ||
              !strcmp(got, "held # us, suspended # times\ndone -#\n");
    if (!ok || at != priority)
        printf("  %s said '%s' (priority %d), not its output of a run at priority %d\n", who, out,
               at, priority);
    return ok && at == priority;
}

/* The lines of a victim's stderr (pid) that its run without the attacker (base_pid) did not say,
 * digits masked, other than warnings about the attacker's files (which name its uid): the
 * attacker may cost a victim a warning about the attacker, nothing else. */
static int stderr_beyond(pid_t pid, pid_t base_pid)
{
    char path[128], line[1024], m[1024], attacker[32];
    snprintf(attacker, sizeof attacker, "user %u", USER_C);
    size_t cap = 0, n_base = 0;
    char **base = NULL;
    snprintf(path, sizeof path, "%s/%d.err", dir, (int)base_pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        char **grown =
            n_base == cap ? realloc(base, (cap = cap ? 2 * cap : 16) * sizeof *base) : base;
        if (!grown)
            break;
        base = grown;
        masked(line, m, sizeof m);
        base[n_base++] = strdup(m);
    }
    if (f)
        fclose(f);
    int beyond = 0;
    snprintf(path, sizeof path, "%s/%d.err", dir, (int)pid);
    f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        masked(line, m, sizeof m);
        bool known = strstr(line, attacker) != NULL;
        for (size_t i = 0; i < n_base && !known; i++)
            known = base[i] && !strcmp(base[i], m);
        if (!known) {
            if (beyond++ < 3)
                printf("  process %d said what it did not without the attacker: %s", (int)pid,
                       line);
        }
    }
    if (f)
        fclose(f);
    for (size_t i = 0; i < n_base; i++)
        free(base[i]);
    free(base);
    return beyond;
}

/* The victims ran to their end as without the attacker, scheduling together (the load yielded
 * to the other user's bursts), said on stdout what a run says (and, given their run without the
 * attacker, base, nothing on stderr that it did not, but about the attacker), and every tool run
 * answered. */
static void expect_unharmed(const struct pair *r, const struct pair *base)
{
    EXPECT(!hung);
    EXPECT(r->high_status == 0 && r->low_status == 0);
    EXPECT(r->high_kernels == 30 * 8 && r->low_kernels == 2000);
    EXPECT(r->low_suspended > 0);
    EXPECT(r->tools_failed == 0);
    EXPECT(output_as_expected("the bursts", r->high_out, GPUPRIO_PRIORITY_HIGH, r->high_at));
    EXPECT(output_as_expected("the load", r->low_out, GPUPRIO_PRIORITY_LOW, r->low_at));
    if (base) {
        EXPECT(stderr_beyond(r->high_pid, base->high_pid) == 0);
        EXPECT(stderr_beyond(r->low_pid, base->low_pid) == 0);
    }
}

static void hostile_setup(void)
{
    tenants_setup();
    stderr_to_file = true;
    setenv("GPUPRIO_HW_PRIORITY", "off", 1);
    write_conf("");
}

/* Attack 1: FIFOs at the victims' board names, and at the attacker's own, made before anyone
 * started: an open for reading blocked for ever (the victims in hipStreamCreate, or at exit; the
 * tools at once). */
void hostile_fifo(void)
{
    hostile_setup();
    plant("", "fifo", USER_A);
    plant("", "fifo", USER_B);
    plant("", "fifo", USER_C);
    struct pair r = pair_under_attack(2);
    expect_unharmed(&r, NULL);
}

static uint64_t start_of(pid_t pid);
static pid_t hold_liveness_locks(const char *path, unsigned slots);

struct flapper {
    char path[300];
    void *board; /* the attacker's board as it was, to write back */
    size_t size;
};

/* Attack 2: the attacker's own board, truncated to nothing and written back, over and over, as
 * the attacker (a board of its own, read by everyone through a mapping, killed the readers with
 * SIGBUS). */
static pid_t start_flapping(struct flapper *f, unsigned gone_us, unsigned there_us)
{
    pid_t child = fork_as(USER_C);
    if (child != 0)
        return child;
    int fd = open(f->path, O_RDWR);
    if (fd < 0)
        _exit(10);
    /* Every slot a live queue of the flapper's (judged by its pid, with no liveness lock): each
     * costs a reader a look in /proc, so a reader of the mapping is still at it when the file
     * goes. */
    struct gp_board_file *b = f->board;
    unsigned live = 0;
    while (live < GP_BOARD_SLOTS && GP_SLOT_STATE(b->slots[live].owner) != GP_SLOT_LIVE)
        live++;
    if (live == GP_BOARD_SLOTS)
        _exit(13);
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        memcpy(&b->slots[i], &b->slots[live], sizeof b->slots[i]);
        b->slots[i].owner = (uint64_t)getpid() << 32 | GP_SLOT_LIVE;
        b->slots[i].owner_start = start_of(getpid()); /* its own: gpuprio set asks it */
        b->slots[i].liveness_lock = 0;
    }
    b->h.slot_limit = GP_BOARD_SLOTS;
    for (;;) {
        if (ftruncate(fd, 0) != 0)
            _exit(11);
        usleep(gone_us);
        if (pwrite(fd, f->board, f->size, 0) != (ssize_t)f->size)
            _exit(12);
        usleep(there_us);
    }
}

/* The attacker's board as a process of its own made it (then killed: it would die of its own
 * truncations too), with a queue that outranks the load on it, into f. The process waits, its
 * kernel queued, until it is killed: one that ended on its own (mode hold) removed its board at
 * exit, before a test slowed by a loaded host had read it. */
static void attackers_board(struct flapper *f)
{
    static const char *const queue_one[] = {"5", "exit", "1", "1000", NULL};
    spawn_uid = USER_C;
    struct proc attacker = spawn_ready("high", NULL, queue_one);
    spawn_uid = 0;
    go(&attacker);
    EXPECT(expect_line(&attacker, "queued") == 0);
    f->size = sizeof(struct gp_board_file);
    int fd = open_board_of(USER_C, f->path, sizeof f->path);
    f->board = malloc(f->size);
    EXPECT(fd >= 0 && f->board && pread(fd, f->board, f->size, 0) == (ssize_t)f->size);
    if (fd >= 0)
        close(fd);
    kill(attacker.pid, SIGKILL);
    finish(&attacker, NULL);
}

/* Mutator: the attacker keeps replacing its own board (as the attacker, which may: its file in
 * the sticky directory) with a board, then the board truncated, extended, rewritten with
 * garbage, a FIFO, a symbolic link to a victim's board, a directory and an empty file, over
 * and over, each for half a millisecond. */
static pid_t start_mutating(struct flapper *f, const char *victims)
{
    pid_t child = fork_as(USER_C);
    if (child != 0)
        return child;
    struct gp_board_file *b = f->board;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) { /* every queue active at critical */
        b->slots[i].owner = (uint64_t)getpid() << 32 | GP_SLOT_LIVE;
        b->slots[i].liveness_lock = 0;
        b->slots[i].st.priority = GPUPRIO_PRIORITY_CRITICAL;
        b->slots[i].st.active = 1;
    }
    b->h.slot_limit = GP_BOARD_SLOTS;
    char garbage[4096];
    memset(garbage, 0xa5, sizeof garbage);
    for (unsigned round = 0;; round++) {
        rmdir(f->path);
        unlink(f->path);
        int fd = open(f->path, O_RDWR | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || pwrite(fd, b, f->size, 0) != (ssize_t)f->size || fchmod(fd, 0644) != 0)
            _exit(10);
        usleep(500);
        if (ftruncate(fd, 100) != 0)
            _exit(11);
        usleep(500);
        if (ftruncate(fd, 2 * (off_t)f->size) != 0)
            _exit(12);
        usleep(500);
        if (ftruncate(fd, (off_t)f->size) != 0 ||
            pwrite(fd, garbage, sizeof garbage, (round % 4) * sizeof garbage) != sizeof garbage)
            _exit(13);
        usleep(500);
        close(fd);
        unlink(f->path);
        if (mkfifo(f->path, 0644) != 0)
            _exit(14);
        usleep(500);
        unlink(f->path);
        if (symlink(victims, f->path) != 0)
            _exit(15);
        usleep(500);
        unlink(f->path);
        if (mkdir(f->path, 0755) != 0)
            _exit(16);
        usleep(500);
        rmdir(f->path);
        fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0)
            _exit(17);
        close(fd);
        usleep(500);
    }
}

/* Ends an attacker that runs until it is killed (one that ended on its own failed to attack), and
 * frees the copy of its board. */
static void stop_attacker(pid_t attacker, struct flapper *f)
{
    set_target = 0;
    kill(attacker, SIGKILL);
    int status = 0;
    reap(attacker, &status, 0);
    if (!WIFSIGNALED(status))
        printf("  the attacker ended on its own, with status %d\n", WEXITSTATUS(status));
    EXPECT(WIFSIGNALED(status));
    free(f->board);
}

/* The mutator next to two users' processes, capped at low (so that its forged critical queues,
 * taken at its cap, hold nobody above low back): the high-priority bursts are never suspended,
 * both run to their end scheduling together, saying what they said in a run without the
 * mutator (stdout's shape, and nothing more on stderr but warnings about the attacker's files),
 * and 40 runs of the tools, by root and by a bystander, all answer promptly and parse. */
void hostile_mutate(void)
{
    hostile_setup();
    /* The victims' run without the attacker first: what they say then is what they must say. */
    write_conf("cap.4243 = low\n");
    struct pair base = pair_under_attack(0);
    expect_unharmed(&base, NULL);
    write_conf("cap.4243 = low\n"); /* and a fresh trace */
    struct flapper f;
    attackers_board(&f);
    char victims[300];
    snprintf(victims, sizeof victims, "%s/gpuprio-%u-v%u-sim_%s_00", shared, USER_A,
             GP_BOARD_VERSION, name);
    pid_t mutating = start_mutating(&f, victims);
    set_target = mutating;
    struct pair r = pair_under_attack(10);
    stop_attacker(mutating, &f);
    expect_unharmed(&r, &base);
    EXPECT(r.high_suspended == 0);
}

void hostile_truncate(void)
{
    hostile_setup();
    struct flapper f;
    attackers_board(&f);
    pid_t flapping = start_flapping(&f, 300, 700);
    set_target = flapping;
    struct pair r = pair_under_attack(10);
    stop_attacker(flapping, &f);
    expect_unharmed(&r, NULL);
}

/* Root's gpuprio set of a process of the attacker's, whose board the attacker truncates every
 * 170 ms (for 20 ms) while set waits (a second) for the request to be applied: set wrote and read
 * through a mapping of the board, and died of SIGBUS. It must end, with status 0 or 1, and say that
 * the board changed under it. */
void hostile_set(void)
{
    hostile_setup();
    struct flapper f;
    attackers_board(&f);
    pid_t flapping = start_flapping(&f, 20000, 150000);
    set_target = flapping;
    hung = 0;
    hang_bound(120);
    int failed = 0, dropped = 0;
    for (int i = 0; i < 10; i++) {
        failed += tools_fail(1);
        dropped += strstr(set_said, "while it was being asked; dropped") != NULL;
    }
    alarm(0);
    stop_attacker(flapping, &f);
    printf("  %d of %d runs of the tools failed; gpuprio set saw the board shrink under it in %d "
           "of 10 runs%s\n",
           failed, 10 * tool_runs, dropped, hung ? "; HUNG: killed" : "");
    EXPECT(!hung && failed == 0);
    EXPECT(dropped > 0);
}

/* Attack 3: the attacker's board copied under 40 names of other users that sort before the
 * victims' (the readers took the first 32 in name order, whoever owned them): each is one
 * warning naming the file and its owner (for the first few), and ignored; the victims still
 * schedule together. */
void hostile_flood(void)
{
    hostile_setup();
    static const char *const hold[] = {"5", "hold", "1000", NULL};
    spawn_uid = USER_C;
    struct proc attacker = spawn_ready("low", NULL, hold);
    spawn_uid = 0;
    char own[300];
    int fd = open_board_of(USER_C, own, sizeof own);
    EXPECT(fd >= 0);
    if (fd >= 0)
        close(fd);
    for (unsigned uid = 1000; uid < 1040; uid++) {
        char path[300];
        snprintf(path, sizeof path, "%s/gpuprio-%u-v%u-sim_%s_00", shared, uid, GP_BOARD_VERSION,
                 name);
        copy_file(own, path, 0644);
        EXPECT(chown(path, USER_C, USER_C) == 0);
    }
    struct pair r = pair_under_attack(1);
    go(&attacker);
    go(&attacker);
    finish(&attacker, NULL);
    expect_unharmed(&r, NULL);
    /* Every process that reads the others' boards says each forged file it looked at once, for
     * the first GP_SCREEN_SAID_PER_USER it looked at (in the directory's order). */
    char says[200];
    snprintf(says, sizeof says, "_00 is named as user 10");
    char owner[64];
    snprintf(owner, sizeof owner, "board but belongs to user %u: it is ignored", USER_C);
    /* And of the attacker's 40 files, GP_SCREEN_SAID_PER_USER are said, then one line for the
     * others, once (it was said again for each later file: 36 times). */
    char others[sizeof shared + 64];
    snprintf(others, sizeof others, "user %u's files in %s were refused as boards", USER_C, shared);
    int n = 0, most = 0, again = 0, summed = 0, most_summed = 0;
    for (int i = 0; i < n_watched; i++) {
        char path[128], line[512];
        snprintf(path, sizeof path, "%s/%d.err", dir, (int)watched[i]);
        FILE *e = fopen(path, "r");
        int here = 0, summed_here = 0;
        bool said_of[40] = {false};
        while (e && fgets(line, sizeof line, e)) {
            const char *at = strstr(line, says);
            if (at && strstr(line, owner)) {
                unsigned uid = (unsigned)strtoul(at + strlen(says) - 2, NULL, 10);
                if (uid >= 1000 && uid < 1040) {
                    again += said_of[uid - 1000];
                    said_of[uid - 1000] = true;
                }
                here++;
            }
            summed_here += strstr(line, others) != NULL;
        }
        if (e)
            fclose(e);
        n += here;
        most = here > most ? here : most;
        summed += summed_here;
        most_summed = summed_here > most_summed ? summed_here : most_summed;
    }
    printf("  warnings about forged boards: %d, at most %d by one process, %d of a file said "
           "before by its process; the line for the attacker's other files %d times, at most %d "
           "by one\n",
           n, most, again, summed, most_summed);
    EXPECT(n >= 1 && most <= GP_SCREEN_SAID_PER_USER && again == 0);
    EXPECT(summed >= 1 && most_summed == 1);
}

/*
 * The attacker's full board (every slot a live queue, of a pid namespace of its own, its liveness
 * lock held by a process of the attacker's, so that every reader takes them for alive; the locks
 * are the file's, so its links' too) hard-linked 150 times and copied 150 times under alternate
 * names of its own uid, hard-linked under 40 made-up devices' names, and copied under user B's
 * name, next to a queue of user A's: root's and the bystander's gpuprio top --once --json and
 * metrics --once each answer within TOOL_PROMPT_NS (killed after 10 s) with what parses, and show
 * the attacker's queues from its first GP_SCREEN_PER_USER boards of the device only, nothing from
 * the made-up devices' links (the same file) nor from the copy named as B's, and A's queue. Before:
 * the tools read every name, and matched rows pairwise (root's top took 4, 16 and 66 s for 100, 200
 * and 400 links).
 */
void hostile_links(void)
{
    hostile_setup();
    struct flapper f;
    attackers_board(&f);
    struct gp_board_file *b = f.board;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        struct gp_board_slot *slot = &b->slots[i];
        slot->owner = (uint64_t)(100000 + i) << 32 | GP_SLOT_LIVE;
        slot->pid_ns = gp_board_self()->pid_ns + 1; /* not our pids */
        slot->liveness_lock = 1;
        slot->incarnation = 1;
        slot->stream = 0x1000 + i;
        slot->thread = 0;
        slot->st.priority = GPUPRIO_PRIORITY_LOW;
        slot->st.active = 0;
        snprintf(slot->comm, sizeof slot->comm, "forged");
    }
    b->h.slot_limit = GP_BOARD_SLOTS;
    int fd = open(f.path, O_WRONLY);
    EXPECT(fd >= 0 && pwrite(fd, b, f.size, 0) == (ssize_t)f.size);
    if (fd >= 0)
        close(fd);
    pid_t locker = hold_liveness_locks(f.path, GP_BOARD_SLOTS);
    char path[sizeof f.path + 32];
    for (unsigned i = 0; i < 150; i++) { /* links first in name order, then copies */
        snprintf(path, sizeof path, "%s+%016x", f.path, i);
        EXPECT(link(f.path, path) == 0);
        snprintf(path, sizeof path, "%s+1%015x", f.path, i);
        copy_file(f.path, path, 0644);
        EXPECT(chown(path, USER_C, USER_C) == 0);
    }
    for (unsigned i = 0; i < 40; i++) {
        snprintf(path, sizeof path, "%s/gpuprio-%u-v%u-made_up_%02u", shared, USER_C,
                 GP_BOARD_VERSION, i);
        EXPECT(link(f.path, path) == 0);
    }
    snprintf(path, sizeof path, "%s/gpuprio-%u-v%u-sim_%s_00", shared, USER_B, GP_BOARD_VERSION,
             name);
    copy_file(f.path, path, 0644);
    EXPECT(chown(path, USER_C, USER_C) == 0);
    free(f.board);

    static const char *const queue_one[] = {"6", "retire", "keep", "1", "1000", NULL};
    spawn_uid = USER_A;
    struct proc a = spawn_ready("high", NULL, queue_one);
    spawn_uid = 0;
    go(&a);
    EXPECT(expect_line(&a, "queued") == 0);

    static const char *const top[] = {"top", "--once", "--json", NULL};
    static const char *const metrics[] = {"metrics", "--once", NULL};
    char attacker[32], user_a[32], forged[64], boards[32];
    snprintf(attacker, sizeof attacker, "\"uid\": %u,", USER_C);
    snprintf(user_a, sizeof user_a, "\"uid\": %u,", USER_A);
    snprintf(forged, sizeof forged, "/gpuprio-%u-", USER_B);
    /* A's board, and the attacker's usual one and first copy (its links are that file). */
    snprintf(boards, sizeof boards, "\ngpuprio_boards %d\n", 1 + GP_SCREEN_PER_USER);
    const uid_t readers[] = {0, USER_D};
    for (int i = 0; i < 2; i++) {
        struct tool_run t = run_tool_kept(readers[i], top, 10);
        int queues = occurrences(t.out, attacker), a_queues = occurrences(t.out, user_a);
        printf("  gpuprio top --once --json as uid %u: %s in %.2f s, %d of "
               "the attacker's queues, %d of user A's\n",
               (unsigned)readers[i], t.ok ? "answered" : "FAILED", t.seconds, queues, a_queues);
        EXPECT(t.ok && t.out && json_parses(t.out, strlen(t.out)));
        EXPECT(queues >= (int)GP_BOARD_SLOTS && queues <= GP_SCREEN_PER_USER * (int)GP_BOARD_SLOTS);
        EXPECT(a_queues == 1);
        EXPECT(t.out && !strstr(t.out, forged) && !strstr(t.out, "made_up"));
        /* The file named as B's is said once, and the links not at all: they are one file. */
        EXPECT(occurrences(t.err, "is named as user 4242's board but belongs to user 4243") == 1);
        free(t.out);
        free(t.err);
        t = run_tool_kept(readers[i], metrics, 10);
        printf("  gpuprio metrics --once as uid %u: %s in %.2f s\n", (unsigned)readers[i],
               t.ok ? "answered" : "FAILED", t.seconds);
        const char *why = "";
        EXPECT(t.ok && t.out && metrics_parse(t.out, strlen(t.out), &why) && strstr(t.out, boards));
        EXPECT(t.out && !strstr(t.out, "made_up"));
        if (t.out && !strstr(t.out, boards)) {
            const char *at = strstr(t.out, "\ngpuprio_boards ");
            printf("  expected%.*s, got%.*s\n", (int)strlen(boards) - 1, boards,
                   at ? (int)strcspn(at + 1, "\n") + 1 : 0, at ? at : "");
        }
        free(t.out);
        free(t.err);
    }
    EXPECT(write(a.in, "go\n", 3) == 3);
    EXPECT(finish(&a, NULL) == 0);
    kill(locker, SIGKILL);
    reap(locker, NULL, 0);
}

/*
 * Attack 6: a directory flooded with names (docs/board.md, "Threat model"). The attacker's board,
 * its header's device changed to one nobody uses, hard-linked DIRFLOOD_ALTERNATES times under
 * alternate names of the victims' device (each opened and read for every name past the 256
 * refused names remembered, at every look of every victim's listener: 10,000 links took 170 ms a
 * listing, and the load then yielded to the bursts once in 30), and DIRFLOOD_MADE_UP times under
 * made-up devices' names that sort before it (opened by every gpuprio top and metrics: 5.3 s for
 * root's top over 150,000): the pair still schedules together, the load yielding to the bursts
 * at least half as often as in its run before the flood, and the tools answer within
 * TOOL_PROMPT_NS.
 */
#define DIRFLOOD_ALTERNATES 30000u
#define DIRFLOOD_MADE_UP 170000u
void hostile_dirflood(void)
{
    hostile_setup();
    struct pair base = pair_under_attack(0);
    expect_unharmed(&base, NULL);
    write_conf(""); /* and a fresh trace */
    struct flapper f;
    attackers_board(&f);
    struct gp_board_file *b = f.board;
    snprintf(b->h.key, sizeof b->h.key, "elsewhere");
    int fd = open(f.path, O_WRONLY);
    EXPECT(fd >= 0 && pwrite(fd, b, f.size, 0) == (ssize_t)f.size);
    if (fd >= 0)
        close(fd);
    free(f.board);
    uint64_t from = now_ns();
    char path[sizeof f.path + 32];
    bool linked = true;
    for (unsigned i = 0; i < DIRFLOOD_ALTERNATES && linked; i++) {
        snprintf(path, sizeof path, "%s+%016x", f.path, i);
        linked = link(f.path, path) == 0;
    }
    for (unsigned i = 0; i < DIRFLOOD_MADE_UP && linked; i++) {
        snprintf(path, sizeof path, "%s/gpuprio-%u-v%u-a%06u", shared, USER_C, GP_BOARD_VERSION, i);
        linked = link(f.path, path) == 0;
    }
    EXPECT(linked);
    printf("  %u links to the attacker's board made in %.2f s\n",
           DIRFLOOD_ALTERNATES + DIRFLOOD_MADE_UP, (double)(now_ns() - from) / 1e9);
    struct pair r = pair_under_attack(1);
    printf("  the load yielded %llu times to the bursts (%llu before the flood); the slowest "
           "tool run took %.2f s, not counting its waits for a CPU\n",
           r.low_suspended, base.low_suspended, (double)tool_slowest_ns / 1e9);
    expect_unharmed(&r, &base);
    EXPECT(r.low_suspended * 2 >= base.low_suspended);
}

/* Attack 4: the name user A's board will have, taken by the attacker before A starts (a file
 * A cannot remove from the sticky directory): A still schedules with B, and says whose the
 * file is and what the administrator should do. */
void hostile_squat(void)
{
    hostile_setup();
    plant("", "empty", USER_A);
    struct pair r = pair_under_attack(1);
    expect_unharmed(&r, NULL);
    char says[300];
    snprintf(says, sizeof says,
             "gpuprio-%u-v%u-sim_%s_00, this user's board for device 0, is a "
             "file of user %u, who made it first",
             USER_A, GP_BOARD_VERSION, name, USER_C);
    bool said = false;
    for (int i = 0; i < n_watched && !said; i++) {
        struct proc p = {watched[i], NULL, -1};
        said = stderr_of(&p, says) && stderr_of(&p, "the administrator should remove");
    }
    EXPECT(said);
}

/* Attack 5: a shared directory that admitted users cannot list (root's, sticky, mode 1733):
 * scheduling across users was off without a word. The file is refused, with one message naming
 * the file, the line and the mode. */
void hostile_unlisted(void)
{
    hostile_setup();
    EXPECT(chmod(shared, 01733) == 0);
    static const char *const few[] = {"1", "saturate", "5", "100", NULL};
    hang_bound(60);
    spawn_uid = USER_A;
    struct proc p = spawn_ready("high", NULL, few);
    spawn_uid = 0;
    go(&p);
    EXPECT(finish(&p, NULL) == 0);
    alarm(0);
    char says[300];
    snprintf(says, sizeof says, "line 2: the board directory %s has mode 1733", shared);
    EXPECT(stderr_of(&p, says));
    EXPECT(stderr_of(&p, "the file is not used"));
    /* A process that uses no GPU (true, sh, timeout in a script) says nothing of it: the
     * worker without arguments, which says its usage and ends before any runtime call (a
     * program of the system would need the sanitizers' runtimes preloaded in their builds). */
    pid_t child = fork_as(0);
    if (child == 0) {
        char err[128];
        snprintf(err, sizeof err, "%s/%d.err", dir, (int)getpid()); /* as stderr_of reads */
        int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0 || setgroups(0, NULL) != 0 || setgid(USER_A) != 0 ||
            setuid(USER_A) != 0)
            _exit(120);
        setenv("LD_PRELOAD", shim, 1);
        execl(worker, worker, (char *)NULL);
        _exit(127);
    }
    int status = -1;
    reap(child, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 2);
    struct proc nogpu = {child, NULL, -1};
    EXPECT(stderr_of(&nogpu, "usage"));
    EXPECT(!stderr_of(&nogpu, "configuration file"));
}

/* A process of the attacker's that holds the liveness locks of the first `slots` slots of the
 * board file at path (as their owners would), until it is killed. */
static pid_t hold_liveness_locks(const char *path, unsigned slots)
{
    int ready[2];
    EXPECT(pipe(ready) == 0);
    pid_t child = fork_as(USER_C);
    if (child == 0) {
        int fd = open(path, O_RDONLY);
        for (unsigned i = 0; i < slots; i++) {
            struct flock l = {.l_type = F_RDLCK,
                              .l_whence = SEEK_SET,
                              .l_start = (off_t)(offsetof(struct gp_board_file, slots) +
                                                 i * sizeof(struct gp_board_slot)),
                              .l_len = 1};
            if (fd < 0 || fcntl(fd, F_OFD_SETLK, &l) != 0)
                _exit(11);
        }
        if (write(ready[1], "r", 1) != 1)
            _exit(12);
        for (;;)
            pause();
    }
    char c = 0;
    close(ready[1]);
    EXPECT(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    return child;
}

/* Whether every thread of process pid is stopped (state T in /proc/PID/task/TID/stat) within ms. */
static bool all_stopped(pid_t pid, unsigned ms)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    for (unsigned waited = 0; waited < ms; waited += 2) {
        DIR *d = opendir(path);
        bool stopped = d != NULL;
        for (struct dirent *e; d && stopped && (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char stat_path[400], buf[512];
            snprintf(stat_path, sizeof stat_path, "%s/%s/stat", path, e->d_name);
            int fd = open(stat_path, O_RDONLY);
            ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
            if (fd >= 0)
                close(fd);
            buf[n > 0 ? n : 0] = '\0';
            const char *end = strrchr(buf, ')');
            stopped = end && end[1] == ' ' && end[2] == 'T';
        }
        if (d)
            closedir(d);
        if (stopped)
            return true;
        usleep(2000);
    }
    return false;
}

/* The start time of process pid as /proc/PID/stat gives it (field 22), as slots record it. */
static uint64_t start_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Whether a queue of process pid on user uid's board has priority within ms. */
static bool priority_within(uid_t uid, pid_t pid, int priority, unsigned ms)
{
    struct gp_board_file *f = malloc(sizeof *f);
    bool found = false;
    for (unsigned waited = 0; f && !found && waited < ms; waited += 2) {
        char path[300];
        int fd = open_board_of(uid, path, sizeof path);
        if (fd >= 0 && pread(fd, f, sizeof *f, 0) == (ssize_t)sizeof *f)
            for (unsigned i = 0; i < GP_BOARD_SLOTS && !found; i++)
                found = f->slots[i].owner == ((uint64_t)pid << 32 | GP_SLOT_LIVE) &&
                        f->slots[i].st.priority == priority;
        if (fd >= 0)
            close(fd);
        if (!found)
            usleep(2000);
    }
    free(f);
    return found;
}

/*
 * Forged slots: the attacker writes into its own board 20 queues and a record (100 unused queues)
 * that name user A's process (its pid and start time, this pid namespace), holding their liveness
 * locks itself, and 20 queues that name it from another pid namespace without a lock (which
 * counted as alive for ever). Root's and a bystander's gpuprio top --json show A's process with
 * its one queue (before: 41); root's gpuprio set of it asks its own slots only (before: it wrote
 * into the attacker's board too, and said "40 of its 141 queues did not take priority") and
 * succeeds; and set of it while it is stopped (it cannot apply the request) exits 1, saying so,
 * and the process takes the priority once it runs again.
 */
void hostile_forged(void)
{
    hostile_setup();
    struct flapper f;
    attackers_board(&f);
    static const char *const hold[] = {"1", "hold", "1000", NULL};
    spawn_uid = USER_A;
    struct proc victim = spawn_ready("high", NULL, hold);
    spawn_uid = 0;
    uint64_t victim_start = start_of(victim.pid);
    EXPECT(victim_start != 0);

    enum { LOCKED = 20, UNLOCKED = 20 };
    struct gp_board_file *b = f.board;
    for (unsigned i = 0; i <= LOCKED + UNLOCKED; i++) {
        struct gp_board_slot *slot = &b->slots[i];
        memset(slot, 0, sizeof *slot);
        bool record = i == LOCKED;
        slot->owner = (uint64_t)victim.pid << 32 | (record ? GP_SLOT_PROCESS : GP_SLOT_LIVE);
        slot->owner_start = victim_start;
        slot->incarnation = 0x5eed0001u + 2 * i;
        slot->stream = record ? 0 : 0x7000 + i;
        snprintf(slot->comm, sizeof slot->comm, "board_worker");
        slot->st.priority = GPUPRIO_PRIORITY_HIGH;
        slot->unused_queues = record ? 100 : 0;
        slot->pid_ns = gp_board_self()->pid_ns + (i > LOCKED ? 1 : 0);
        slot->liveness_lock = i <= LOCKED;
    }
    b->h.slot_limit = LOCKED + UNLOCKED + 1;
    int fd = open(f.path, O_WRONLY);
    EXPECT(fd >= 0 && pwrite(fd, b, f.size, 0) == (ssize_t)f.size);
    if (fd >= 0)
        close(fd);
    pid_t attacker = hold_liveness_locks(f.path, LOCKED + 1);

    static const char *const top[] = {"top", "--once", "--json", NULL};
    char pid_field[32];
    snprintf(pid_field, sizeof pid_field, "\"pid\": %d,", (int)victim.pid);
    const uid_t readers[] = {0, USER_D};
    for (int i = 0; i < 2; i++) {
        struct tool_run t = run_tool_kept(readers[i], top, 10);
        int rows = occurrences(t.out, pid_field);
        printf("  gpuprio top --once --json as uid %u: %d queues of process %d (it has 1)\n",
               (unsigned)readers[i], rows, (int)victim.pid);
        EXPECT(t.ok && t.out && json_parses(t.out, strlen(t.out)));
        EXPECT(rows == 1);
        free(t.out);
        free(t.err);
    }

    char pid[16], said_set[4096], want[96];
    snprintf(pid, sizeof pid, "%d", (int)victim.pid);
    const char *const set_normal[] = {"set", pid, "normal", NULL};
    int status = tool_status(0, set_normal, said_set, sizeof said_set);
    printf("  gpuprio set %s normal: status %d, said: %s", pid, status, said_set);
    snprintf(want, sizeof want, "%s (board_worker): priority 0 on 1 queue", pid);
    EXPECT(status == 0 && strstr(said_set, want));
    /* The attacker's board was not asked: its forged slots' request words are as it wrote them. */
    struct gp_board_file *now = malloc(sizeof *now);
    fd = open(f.path, O_RDONLY);
    EXPECT(now && fd >= 0 && pread(fd, now, sizeof *now, 0) == (ssize_t)sizeof *now);
    unsigned asked = 0;
    for (unsigned i = 0; now && i <= LOCKED + UNLOCKED; i++)
        asked += now->slots[i].request_seq != 0;
    printf("  forged slots asked by gpuprio set: %u\n", asked);
    EXPECT(asked == 0);
    free(now);
    if (fd >= 0)
        close(fd);

    /* Stopped, the process cannot take the priority: set says so, and exits 1. Every thread
     * stopped first: a loaded host may leave the one the signal went to waiting for a CPU while
     * another (its board listener) still runs. */
    kill(victim.pid, SIGSTOP);
    EXPECT(all_stopped(victim.pid, 10000));
    const char *const set_low[] = {"set", pid, "low", NULL};
    status = tool_status(0, set_low, said_set, sizeof said_set);
    printf("  gpuprio set %s low (the process stopped): status %d, said: %s", pid, status,
           said_set);
    EXPECT(status == 1 && strstr(said_set, "did not take priority -10"));
    kill(victim.pid, SIGCONT);
    /* The request stayed: its listener applies it once it runs (before the worker's end reads
     * its priority, which a loaded host may otherwise bring first). */
    EXPECT(priority_within(USER_A, victim.pid, GPUPRIO_PRIORITY_LOW, 10000));
    go(&victim); /* its work: one line to start it, one for hold's kernel */
    go(&victim);
    int at = 0;
    EXPECT(finish(&victim, &at) == 0);
    EXPECT(at == GPUPRIO_PRIORITY_LOW); /* the request stayed, and was applied once it ran */
    stop_attacker(attacker, &f);
}

/* The CPU time every thread of process pid has had so far, in ns (the first field of each
 * /proc/PID/task/TID/schedstat: exact, not sampled at ticks). */
static uint64_t cpu_ns_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    uint64_t sum = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char stat_path[320];
        unsigned long long ns = 0;
        snprintf(stat_path, sizeof stat_path, "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
        FILE *f = fopen(stat_path, "r");
        if (f && fscanf(f, "%llu", &ns) == 1)
            sum += ns;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return sum;
}

/* The CPU time each of the n processes had over the next ms milliseconds, into ns. */
static void cpu_over(const pid_t *pids, int n, unsigned ms, uint64_t *ns)
{
    for (int i = 0; i < n; i++)
        ns[i] = cpu_ns_of(pids[i]);
    usleep(ms * 1000);
    for (int i = 0; i < n; i++)
        ns[i] = cpu_ns_of(pids[i]) - ns[i];
}

/*
 * FUTEX_WAKE floods: anyone who can read a board can wake its futex words (a wake needs no
 * write). The attacker wakes the sequence and summary words of users A's and B's boards in a
 * loop, next to their two idle processes (A's high, B's low: each one's listener waits on its own
 * board's sequence and the other's summary). Before, each wake cost a listener a full look (every
 * other board read again; a wake of its own board, a listing): B's process burned about a quarter
 * of a core. Now a word that wakes a listener with nothing changed more than a few times in a
 * window is left out of its waits for a while and its value looked at every 2 ms instead: the
 * CPU time each victim spends beyond its own idle run is bounded by that, a few ms a second
 * whatever the rate of wakes, so at most 5% of the flood's time is asked (the bound the mechanism
 * gives, with room for a loaded host: the old code spent 25% on an idle one).
 */
#define WAKES_MS 3000u
void hostile_wakes(void)
{
    hostile_setup();
    static const char *const hold[] = {"1", "hold", "1000", NULL};
    spawn_uid = USER_A;
    struct proc high = spawn_ready("high", NULL, hold);
    spawn_uid = USER_B;
    struct proc low = spawn_ready("low", NULL, hold);
    spawn_uid = 0;
    char paths[2][300];
    const uid_t owners[2] = {USER_A, USER_B};
    for (int i = 0; i < 2; i++) {
        int fd = open_board_of(owners[i], paths[i], sizeof paths[i]);
        EXPECT(fd >= 0);
        if (fd >= 0)
            close(fd);
    }
    usleep(500000); /* each one's listener has the other's board (the newcomer poked it) */
    const pid_t victims[2] = {high.pid, low.pid};
    uint64_t idle[2], flooded[2];
    cpu_over(victims, 2, WAKES_MS, idle);

    int counted[2];
    EXPECT(pipe(counted) == 0);
    pid_t waker = fork_as(USER_C);
    if (waker == 0) {
        struct gp_board_header *h[2];
        for (int i = 0; i < 2; i++) {
            int fd = open(paths[i], O_RDONLY);
            h[i] = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
            if (h[i] == MAP_FAILED)
                _exit(10);
        }
        uint64_t woken = 0, until = now_ns() + (WAKES_MS + 500) * 1000000ull;
        while (now_ns() < until)
            for (int i = 0; i < 2; i++) {
                long n = syscall(SYS_futex, &h[i]->summary_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
                woken += n > 0 ? (uint64_t)n : 0;
                n = syscall(SYS_futex, &h[i]->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
                woken += n > 0 ? (uint64_t)n : 0;
            }
        _exit(write(counted[1], &woken, sizeof woken) == sizeof woken ? 0 : 11);
    }
    close(counted[1]);
    usleep(250000);
    cpu_over(victims, 2, WAKES_MS, flooded);
    uint64_t woken = 0;
    EXPECT(read(counted[0], &woken, sizeof woken) == sizeof woken);
    close(counted[0]);
    int status = -1;
    reap(waker, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *const who[2] = {"A's high", "B's low"};
    for (int i = 0; i < 2; i++) {
        double extra = ((double)flooded[i] - (double)idle[i]) / 1e6;
        printf("  %s process: %.1f ms of CPU in %u ms idle, %.1f ms in %u ms of wakes (%.1f%% "
               "more)\n",
               who[i], (double)idle[i] / 1e6, WAKES_MS, (double)flooded[i] / 1e6, WAKES_MS,
               100 * extra / WAKES_MS);
        EXPECT(extra <= 0.05 * WAKES_MS);
    }
    printf("  the attacker's wakes found %llu waiters\n", (unsigned long long)woken);
    /* They still run, and schedule together. */
    for (int i = 0; i < 2; i++) {
        struct proc *p = i ? &low : &high;
        go(p);
        go(p);
        EXPECT(finish(p, NULL) == 0);
    }
}

/* The offset in a board file of slot i's first byte: its liveness lock's. */
static off_t liveness_byte(unsigned i)
{
    return (off_t)(offsetof(struct gp_board_file, slots) + i * sizeof(struct gp_board_slot));
}

struct byte_waiter {
    int fd;
    off_t at;
};

/* Waits until it can read-lock a byte that someone write-locks, and holds it. */
static void *wait_for_byte(void *arg)
{
    struct byte_waiter *w = arg;
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = w->at, .l_len = 1};
    while (fcntl(w->fd, F_OFD_SETLKW, &l) != 0 && errno == EINTR)
        ;
    return NULL;
}

/*
 * A process of the attacker's that opens user uid's board read-only, as anyone may where boards
 * are readable (mode 0644), and holds a read lock on every slot's liveness byte: at once where it
 * can, and where a write lock stands (a live owner's), from the moment its holder lets go (a
 * thread for each, waiting in F_OFD_SETLKW), until it is killed.
 */
static pid_t hold_read_locks_of(uid_t uid)
{
    int ready[2];
    EXPECT(pipe(ready) == 0);
    pid_t child = fork_as(USER_C);
    if (child == 0) {
        char path[300];
        int fd = open_board_of(uid, path, sizeof path);
        if (fd < 0)
            _exit(10);
        static struct byte_waiter waiters[GP_BOARD_SLOTS];
        unsigned waiting = 0;
        for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
            struct flock l = {
                .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = liveness_byte(i), .l_len = 1};
            if (fcntl(fd, F_OFD_SETLK, &l) == 0)
                continue;
            pthread_t t;
            waiters[i] = (struct byte_waiter){fd, liveness_byte(i)};
            if (errno != EAGAIN || pthread_create(&t, NULL, wait_for_byte, &waiters[i]) != 0)
                _exit(11);
            waiting++;
        }
        char said[32];
        int n = snprintf(said, sizeof said, "%u\n", waiting);
        if (write(ready[1], said, (size_t)n) != n)
            _exit(12);
        for (;;)
            pause();
    }
    close(ready[1]);
    char said[32] = "";
    ssize_t n = read(ready[0], said, sizeof said - 1);
    close(ready[0]);
    EXPECT(n > 0);
    printf("  the attacker holds read locks on user %u's board, %s of its slots' bytes "
           "write-locked by their owners (waited for)\n",
           (unsigned)uid, n > 0 ? strtok(said, "\n") : "?");
    return child;
}

/* The rdlock subtests' state, for their moments (rdlock_at). */
static struct {
    bool before_claim;
    pid_t attacker;
    int fd; /* user A's board, read-only */
    int high_slots[GP_BOARD_SLOTS];
    unsigned n_high;
    int killed_slots[GP_BOARD_SLOTS]; /* the high process's, while it ran */
    unsigned n_killed;
    pid_t killed_pid;
} rd;

/* The slots of process pid on the board that rd.fd reads, into rd.high_slots; with the liveness
 * of its queue's slot into *queue_liveness (-1: none). */
static void slots_of(pid_t pid, int *queue_liveness)
{
    struct gp_board_file *f = malloc(sizeof *f);
    rd.n_high = 0;
    *queue_liveness = -1;
    if (!f || pread(rd.fd, f, sizeof *f, 0) != (ssize_t)sizeof *f) {
        free(f);
        return;
    }
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        uint64_t word = f->slots[i].owner;
        if (word && GP_SLOT_OWNER(word) == (uint32_t)pid) {
            rd.high_slots[rd.n_high++] = (int)i;
            if (GP_SLOT_STATE(word) == GP_SLOT_LIVE)
                *queue_liveness = f->slots[i].liveness_lock;
        }
    }
    free(f);
}

/* How many of the killed process's slots' bytes a read lock is on (the attacker's: nobody else
 * reads the board). */
static unsigned killed_bytes_locked(void)
{
    unsigned held = 0;
    for (unsigned i = 0; i < rd.n_killed; i++) {
        struct flock l = {.l_type = F_WRLCK,
                          .l_whence = SEEK_SET,
                          .l_start = liveness_byte((unsigned)rd.killed_slots[i]),
                          .l_len = 1};
        held += fcntl(rd.fd, F_OFD_GETLK, &l) == 0 && l.l_type == F_RDLCK;
    }
    return held;
}

static void rdlock_at(enum kill_moment moment, pid_t high, pid_t low)
{
    char path[300];
    int liveness;
    switch (moment) {
    case KILL_BEFORE_LAUNCH:
        rd.fd = open_board_of(USER_A, path, sizeof path);
        EXPECT(rd.fd >= 0);
        break;
    case KILL_HELD:
        slots_of(high, &liveness);
        /* Its queue's slot: claimed where the attacker held the byte, the write lock refused, it
         * is judged by pid; else it holds its write lock (its record too). */
        printf("  the high-priority process holds %u slots, its queue's with liveness %d\n",
               rd.n_high, liveness);
        EXPECT(rd.n_high == 2);
        EXPECT(liveness == (rd.before_claim ? GP_LIVENESS_PID : GP_LIVENESS_WRITE_LOCK));
        memcpy(rd.killed_slots, rd.high_slots, sizeof rd.killed_slots);
        rd.n_killed = rd.n_high;
        rd.killed_pid = high;
        if (!rd.before_claim)
            rd.attacker = hold_read_locks_of(USER_A);
        break;
    case KILL_KILLING:
        /* The low process does not look until the attacker has the killed one's bytes, which it
         * takes once the write locks are gone: else a loaded host may run its look first. */
        if (!rd.before_claim) {
            kill(low, SIGSTOP);
            EXPECT(all_stopped(low, 10000));
        }
        break;
    case KILL_ENDED: {
        uint64_t from = now_ns();
        unsigned held;
        while ((held = killed_bytes_locked()) < rd.n_killed && now_ns() - from < 2000000000u)
            usleep(1000);
        printf("  the attacker holds read locks on %u of the %u bytes of the killed process's "
               "slots, %.1f ms after its end\n",
               held, rd.n_killed, (double)(now_ns() - from) / 1e6);
        EXPECT(rd.n_killed > 0 && held == rd.n_killed);
        if (!rd.before_claim)
            kill(low, SIGCONT);
        break;
    }
    }
}

/*
 * Another user's read locks keep no dead process's slots alive. The attacker (user C) opens user
 * A's board read-only, as anyone may where boards are readable (mode 0644: the shared directory),
 * and holds a read lock on every slot's liveness byte, each write-locked one from the moment its
 * owner lets go. Then A's active high-priority process is killed as in board.kill-high: A's held
 * low-priority process is let through within 100 ms of its end, and the killed process's slots
 * are freed. tenant.hostile_rdlock: the locks are taken once both processes hold their slots
 * (write-locked), so the killed one's bytes are the attacker's once it is gone; the low process
 * is stopped from just before the kill until the attacker holds them (its 100 ms count from
 * then), so that it cannot look first. tenant.hostile_rdlock_claim (before_claim): they are
 * taken before both processes claim their slots (an idle process of A's made the board), whose
 * write locks are then refused: the slots are judged by pid instead, and each process says so
 * once. Before, owners held read locks, which the attacker's shared: both held the low process
 * until the watchdog, and left the killed process's slots on the board for ever.
 */
void hostile_rdlock(bool before_claim)
{
    hostile_setup();
    rd.before_claim = before_claim;
    rd.attacker = 0;
    rd.fd = -1;
    rd.n_killed = 0;
    /* An idle process of A's makes A's board, for the attacker to lock before the others claim. */
    static const char *const hold[] = {"1", "hold", "1000", NULL};
    struct proc idle = {-1, NULL, -1};
    if (before_claim) {
        spawn_uid = USER_A;
        idle = spawn_ready("low", NULL, hold);
        spawn_uid = 0;
        rd.attacker = hold_read_locks_of(USER_A);
    }
    kill_high_as(USER_A, rdlock_at);
    /* Freed by the low process before it ended (at its end, it frees only its own). */
    int liveness;
    slots_of(rd.killed_pid, &liveness);
    printf("  the killed process's slots left on the board: %u\n", rd.n_high);
    EXPECT(rd.n_high == 0);
    struct proc killed = {rd.killed_pid, NULL, -1};
    EXPECT(stderr_count(&killed, "the liveness lock of a slot on") == (before_claim ? 1 : 0));
    if (before_claim) {
        go(&idle);
        go(&idle);
        EXPECT(finish(&idle, NULL) == 0);
    }
    EXPECT(rd.attacker > 0);
    if (rd.attacker > 0) {
        kill(rd.attacker, SIGKILL);
        int status = 0;
        reap(rd.attacker, &status, 0);
        EXPECT(WIFSIGNALED(status)); /* it attacked until the end */
    }
    if (rd.fd >= 0)
        close(rd.fd);
}
