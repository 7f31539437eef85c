/*
 * board_tenants.c - users scheduling together on the shared board directory, and the
 * administrator's file that admits and caps them (gp_conf_file.h). Workers run as other uids, so as
 * root (skipped, 77, otherwise). ctest: tenant.two, tenant.two_disk, tenant.cap, tenant.alter,
 * tenant.admit, tenant.bad-conf, tenant.relist, tenant.root_view.
 */
#include "board_harness.h"

/* A bursting process of one user (the one measured, priority its_priority) next to a saturating
 * process of the other (at load_priority): the first's largest wait behind the other's kernels
 * (and into *typical, where not NULL, the median over its bursts of each one's largest), its
 * suspensions (into *suspended), and the load's priority as it ended with (into *load_at). */
static int users_side_by_side(const char *its_priority, const char *load_priority,
                              unsigned long long *suspended, int *load_at, int *typical)
{
    spawn_uid = USER_A;
    struct proc bursts = spawn_ready(its_priority, NULL, high_bursts);
    spawn_uid = USER_B;
    /* With the shared directory on disk (disk-tenant-two), the load says its gates are mirrored. */
    static const char *const info[] = {"GPUPRIO_LOG=info", NULL};
    stderr_to_file = on_disk;
    struct proc load = spawn_ready_env(on_disk ? info : NULL, load_priority, NULL, low_load);
    stderr_to_file = false;
    spawn_uid = 0;
    /* The bursts first, so that the load finds their queue there and is throttled from its first
     * command: another user's arrival reaches a running load only with its listener's wake-up,
     * a moment in which it may queue more than the window (docs/board.md, "Users sharing a
     * GPU"), however long a loaded host makes that moment; so the load starts once the bursts'
     * queue is on its board. */
    go(&bursts);
    EXPECT(wait_for_queue_of(USER_A, 0));
    go(&load);
    EXPECT(finish(&bursts, NULL) == 0);
    *suspended = last_suspensions;
    EXPECT(finish(&load, load_at) == 0);
    if (on_disk)
        EXPECT(stderr_of(&load, "mirrored: the runtime refused to register the board's"));
    read_trace();
    EXPECT(count_tag(TAG_HIGH) == 64);
    EXPECT(count_tag(TAG_LOW) == 500);
    int worst = most_overtaking(TAG_HIGH), burst_worst;
    if (typical)
        *typical = typical_overtaking(TAG_HIGH, &burst_worst);
    return worst;
}

/*
 * Two users: without the file each schedules alone (the high-priority bursts wait behind more
 * than the window of the other user's kernels); with it they schedule together (the bursts wait
 * behind the window, plus what the load puts in while its listener wakes up). That wake-up is the
 * host's: a burst lasts 2.4 ms, and on a loaded host a listener not run for as long lets the load
 * fill that burst as if unscheduled (8 of 8 in one run next to busy loops), so the bound is
 * asserted on the typical burst (the median over the 8) and the worst is printed.
 */
void tenant_two(void)
{
    tenants_setup();
    /* Without hardware stream priorities, which let the high-priority kernels past the other
     * user's queue on their own (the simulator grants slots by them). */
    setenv("GPUPRIO_HW_PRIORITY", "off", 1);
    unsigned long long suspended;
    int at, apart_typical, together_typical;
    write_conf(NULL);
    int apart = users_side_by_side("high", "low", &suspended, &at, &apart_typical);
    write_conf("");
    int together = users_side_by_side("high", "low", &suspended, &at, &together_typical);
    printf("users %u (high) and %u (low): a high-priority kernel waited behind at most %d of the "
           "other user's kernels without the configuration file (%d in the median burst), %d "
           "with it (%d in the median burst; window %d)\n",
           USER_A, USER_B, apart, apart_typical, together, together_typical, WINDOW);
    /* Across users, a burst's start reaches the load's process with its listener's wake-up, in
     * which the load may put a few more commands in (docs/board.md, "Users sharing a GPU"): the
     * worst burst 0-1 on a quiet host, up to 5 under TSan next to other tests, 8 once next to
     * busy loops. */
    EXPECT(apart_typical > WINDOW);
    EXPECT(together_typical <= WINDOW);
}

/* The gate words of the live slots on user uid's board, or-ed (0 when there is none). */
static uint64_t gates_on_board_of(uid_t uid)
{
    char path[300];
    uint64_t n = 0;
    int fd = open_board_of(uid, path, sizeof path);
    struct gp_board_file *f =
        fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *f, PROT_READ, MAP_SHARED, fd, 0);
    for (unsigned i = 0; f != MAP_FAILED && i < GP_BOARD_SLOTS; i++)
        if (GP_SLOT_STATE(atomic_load(&f->slots[i].owner)) == GP_SLOT_LIVE)
            n |= atomic_load(&f->slots[i].st.gate);
    if (f != MAP_FAILED)
        munmap(f, sizeof *f);
    if (fd >= 0)
        close(fd);
    return n;
}

/*
 * A board that appears without a poke, the directory's time unchanged (a poke lost while the
 * listener was busy; a file system whose directory times lag): the listener lists at least every
 * TN_SAFETY_RELIST_NS (2 s) whatever the directory's time says, so the other user's board is
 * found all the same. User B's high-priority load runs with a board directory of its own (its
 * own configuration file), poking nobody; its board is then linked into the shared directory,
 * whose time is set back to what it was, while user A's low-priority load runs there. A's queue
 * must be throttled or suspended for B's within the safety re-list's period and slack; without
 * the re-list it never is (not within 6 s).
 */
void tenant_relist(void)
{
    tenants_setup();
    setenv("GPUPRIO_HW_PRIORITY", "off", 1);
    write_conf("");
    char elsewhere[200], conf_b[200];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
    snprintf(conf_b, sizeof conf_b, "%s/gpuprio-b.conf", dir);
    EXPECT(mkdir(elsewhere, 0700) == 0 && chmod(elsewhere, 01777) == 0);
    FILE *f = fopen(conf_b, "w");
    EXPECT(f != NULL);
    if (f) {
        fprintf(f, "# written by board_test\nboard_dir = %s\n", elsewhere);
        fclose(f);
    }
    EXPECT(chmod(conf_b, 0644) == 0);

    /* Long enough for the whole subtest; both are killed at its end. */
    static const char *const long_load[] = {"3", "saturate", "200000", "300", NULL};
    static const char *const long_high[] = {"1", "saturate", "200000", "300", NULL};
    spawn_uid = USER_A;
    struct proc a = spawn_ready("low", NULL, long_load);
    go(&a);
    EXPECT(wait_for_queue_of(USER_A, 0));
    spawn_uid = USER_B;
    char config_b[240], board_dir_b[240];
    snprintf(config_b, sizeof config_b, "GPUPRIO_CONFIG=%s", conf_b);
    snprintf(board_dir_b, sizeof board_dir_b, "GPUPRIO_BOARD_DIR=%s", elsewhere);
    const char *const b_env[] = {config_b, board_dir_b, NULL};
    struct proc b = spawn_ready_env(b_env, "high", NULL, long_high);
    spawn_uid = 0;
    go(&b);

    /* B's board, in its own directory. */
    char from[512] = "", to[512] = "";
    for (int tries = 0; tries < 10000 && !from[0]; tries++) {
        DIR *d = opendir(elsewhere);
        for (struct dirent *e; d && (e = readdir(d));)
            if (!strncmp(e->d_name, "gpuprio-", 8)) {
                snprintf(from, sizeof from, "%s/%s", elsewhere, e->d_name);
                snprintf(to, sizeof to, "%s/%s", shared, e->d_name);
            }
        if (d)
            closedir(d);
        if (!from[0])
            usleep(1000);
    }
    EXPECT(from[0] != '\0');
    /* Past the listings that A's own board's arrival asked for, and any listing unsettled by it
     * (a directory time within a timestamp's granularity of the listing). */
    usleep(1000000);
    /* Alone as far as it knows, A's queue is neither throttled nor suspended. */
    EXPECT(!(gates_on_board_of(USER_A) & (XQ_GATE_THROTTLED | XQ_GATE_SUSPENDED)));
    struct stat st;
    EXPECT(stat(shared, &st) == 0);
    uint64_t linked = now_ns();
    EXPECT(link(from, to) == 0);
    struct timespec times[2] = {{0, UTIME_OMIT}, st.st_mtim};
    EXPECT(utimensat(AT_FDCWD, shared, times, 0) == 0);
    struct stat now_st;
    EXPECT(stat(shared, &now_st) == 0 && now_st.st_mtim.tv_sec == st.st_mtim.tv_sec &&
           now_st.st_mtim.tv_nsec == st.st_mtim.tv_nsec);

    /* The safety re-list comes within 2 s of the last listing; 6 s leaves a loaded host slack. */
    uint64_t seen = 0;
    while (!seen && now_ns() - linked < 6000000000ull) {
        if (gates_on_board_of(USER_A) & (XQ_GATE_THROTTLED | XQ_GATE_SUSPENDED))
            seen = now_ns();
        else
            usleep(5000);
    }
    if (seen)
        printf("user %u's low queue was held back for user %u's board %.0f ms after it was "
               "linked into the shared directory (no poke, the directory's time set back)\n",
               USER_A, USER_B, (double)(seen - linked) / 1e6);
    else
        printf("user %u's low queue was not held back within 6 s of user %u's board being linked "
               "into the shared directory: the listener did not list it again\n",
               USER_A, USER_B);
    EXPECT(seen != 0);
    kill(a.pid, SIGKILL);
    kill(b.pid, SIGKILL);
    int status;
    reap(a.pid, &status, 0);
    reap(b.pid, &status, 0);
    if (a.out)
        fclose(a.out);
    if (b.out)
        fclose(b.out);
    close(a.in);
    close(b.in);
}

struct forger {
    char path[256];
    _Atomic bool stop;
    int writes;
};

/* The capped user editing its own board: every queue of it says critical, every millisecond. */
static void *forge(void *arg)
{
    struct forger *f = arg;
    struct gp_board b;
    const char *why;
    while (!atomic_load(&f->stop)) {
        if (gp_board_open_file(f->path, true, &b, &why) == 0) {
            while (!atomic_load(&f->stop)) {
                for (unsigned i = 0; i < GP_BOARD_SLOTS; i++)
                    if (GP_SLOT_STATE(atomic_load(&b.f->slots[i].owner)) == GP_SLOT_LIVE) {
                        atomic_store(&b.f->slots[i].st.priority, GPUPRIO_PRIORITY_CRITICAL);
                        f->writes++;
                    }
                usleep(1000);
            }
            gp_board_close(&b);
        }
        usleep(1000);
    }
    return NULL;
}

/*
 * A user capped at low asks for critical: it runs at low (its own queue says so, and it says
 * why once), and the other user's normal-priority bursts are never suspended for it; without the
 * cap, they are. Writing critical into its own board gains it nothing: the other user's process
 * takes its priority within the cap of the board's owner, the file's.
 */
void tenant_cap(void)
{
    tenants_setup();
    stderr_to_file = true;
    unsigned long long uncapped, capped, forged;
    int uncapped_at, capped_at, forged_at;
    write_conf("");
    users_side_by_side("normal", "critical", &uncapped, &uncapped_at, NULL);
    write_conf("cap.default = high\ncap.4242 = low\n");
    int wait = users_side_by_side("normal", "critical", &capped, &capped_at, NULL);
    struct forger f = {.writes = 0};
    snprintf(f.path, sizeof f.path, "%s/gpuprio-%u-v%u-sim_%s_00", shared, USER_B, GP_BOARD_VERSION,
             name);
    atomic_store(&f.stop, false);
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, forge, &f) == 0);
    write_conf("cap.default = high\ncap.4242 = low\n");
    users_side_by_side("normal", "critical", &forged, &forged_at, NULL);
    atomic_store(&f.stop, true);
    pthread_join(t, NULL);
    printf("a user asking for critical next to another's normal-priority bursts: those were "
           "suspended %llu times uncapped (it ran at %d), %llu times capped at low (it ran at %d; "
           "the bursts waited behind at most %d of its kernels), %llu times with it writing "
           "critical into its own board %d times (it ran at %d)\n",
           uncapped, uncapped_at, capped, capped_at, wait, forged, f.writes, forged_at);
    EXPECT(uncapped_at == GPUPRIO_PRIORITY_CRITICAL && uncapped > 0);
    /* The wait is printed, not bound: across users it is the window plus what the load puts in
     * while its listener wakes (tenant.two). */
    EXPECT(capped_at == GPUPRIO_PRIORITY_LOW && capped == 0);
    EXPECT(f.writes > 0 && forged == 0);
}

/*
 * Neither user can change the other's board: not write it (it is the owner's, mode 0644), nor
 * remove or replace it (the shared directory is sticky).
 */
void tenant_alter(void)
{
    tenants_setup();
    write_conf("");
    static const char *const hold[] = {"1", "hold", "1000", NULL};
    spawn_uid = USER_A;
    struct proc owner = spawn_ready("high", NULL, hold);
    spawn_uid = 0;
    char path[256], other[256];
    snprintf(path, sizeof path, "%s/gpuprio-%u-v%u-sim_%s_00", shared, USER_A, GP_BOARD_VERSION,
             name);
    snprintf(other, sizeof other, "%s/forged", shared);
    struct stat st;
    EXPECT(stat(path, &st) == 0 && st.st_uid == USER_A && (st.st_mode & 0777) == 0644);
    pid_t child = fork();
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(USER_B) != 0 || setuid(USER_B) != 0)
            _exit(10);
        struct gp_board b;
        const char *why;
        int fd = open(path, O_RDWR);
        if (fd >= 0 || errno != EACCES)
            _exit(11);
        if (gp_board_open_file(path, true, &b, &why) == 0)
            _exit(12);
        if (unlink(path) == 0 || errno != EPERM)
            _exit(13);
        fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0)
            _exit(14);
        close(fd);
        if (rename(other, path) == 0 || errno != EPERM)
            _exit(15);
        unlink(other);
        /* Reading it is what the shared directory is for. */
        if (gp_board_open_file(path, false, &b, &why) != 0)
            _exit(16);
        gp_board_close(&b);
        _exit(0);
    }
    int status = -1;
    waitpid(child, &status, 0);
    printf("user %u on user %u's board: write, remove, replace refused; read allowed (status "
           "%d)\n",
           USER_B, USER_A, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT(stat(path, &st) == 0 && st.st_uid == USER_A);
    go(&owner); /* start, then launch */
    go(&owner);
    EXPECT(expect_line(&owner, "launched") == 0);
    EXPECT(finish(&owner, NULL) == 0);
}

/* A configuration file it cannot use: one message naming the file, the line and what is
 * accepted; the program runs as without it, on its own user's board (mode 0600). */
void tenant_bad_conf(void)
{
    static const struct {
        const char *text;
        mode_t mode;
        const char *says;
    } cases[] = {
        {"", 0666, "is writable by others (it must be owned by root and writable by root only)"},
        {"cap.4241 = urgent\n", 0644, "line 3: 'urgent' is not a valid cap (accepted: idle, low"},
        {"cap.nosuchuser = low\n", 0644, "line 3: 'nosuchuser' is not a user or group here"},
        {"speed = fast\n", 0644, "line 3: unknown key 'speed' (keys: board_dir, admit"},
        {"cap.default = low\ncap.default = high\n", 0644,
         "line 4: cap.default is set twice (first on line 3)"},
        {"admit\n", 0644, "line 3: 'admit' is not KEY = VALUE"},
    };
    static const char *const few[] = {"1", "saturate", "5", "100", NULL};
    tenants_setup();
    stderr_to_file = true;
    /* Each case also through wrappers, as a script runs a program: gpuprio run, which execs
     * timeout, which starts the worker; all three under the shim (LD_PRELOAD is inherited), the
     * worker the only one that uses a GPU and so the only one to say it, once (configuration.md).
     * Not timeout in sanitizer builds: the instrumented shim cannot be preloaded into a program
     * of the system without the sanitizer's runtime before it. */
    static char libdir[160];
    snprintf(libdir, sizeof libdir, "%s/bin", dir); /* copy_for_others put the shim there */
    char library_dir[200];
    snprintf(library_dir, sizeof library_dir, "GPUPRIO_LIBRARY_DIR=%s", libdir);
    const char *const env[] = {library_dir, NULL};
    const char *const wrappers[] = {tool,      "run", "--shim", "hip", "--",
#ifndef BOARD_TEST_SANITIZED
                                    "timeout", "120",
#endif
                                    NULL};
    for (int wrapped = 0; wrapped < 2; wrapped++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            write_conf(cases[i].text);
            EXPECT(chmod(conf, cases[i].mode) == 0);
            spawn_uid = USER_A;
            wrapper = wrapped ? wrappers : NULL;
            struct proc p = spawn_ready_env(env, "critical", NULL, few);
            wrapper = NULL;
            spawn_uid = 0;
            go(&p);
            int at;
            EXPECT(finish(&p, &at) == 0);
            EXPECT(at == GPUPRIO_PRIORITY_CRITICAL); /* no cap loosened or tightened: none used */
            int said_why = stderr_count(&p, cases[i].says),
                said_so = stderr_count(&p, "the file is not used");
            if (said_why != 1 || said_so != 1) {
                printf("  case %zu%s: expected '%s' and 'the file is not used' once each, said "
                       "%d and %d times:\n",
                       i, wrapped ? " (through gpuprio run and timeout)" : "", cases[i].says,
                       said_why, said_so);
                stderr_of(&p, ""); /* copied to the test's stderr */
            }
            EXPECT(said_why == 1 && said_so == 1);
        }
    }
    /* The shared directory itself must be root's and sticky: one that is not refuses the file. */
    write_conf("");
    EXPECT(chmod(shared, 0777) == 0);
    spawn_uid = USER_A;
    struct proc p = spawn_ready("high", NULL, few);
    spawn_uid = 0;
    go(&p);
    EXPECT(finish(&p, NULL) == 0);
    EXPECT(stderr_count(&p, "lets others remove files in it") == 1);
}

/*
 * A board of a user the file does not admit is ignored, with one warning: the admitted user's
 * bursts are not suspended for it, however high its priority; and gpuprio top, run by root and by
 * the admitted user, does not show its queues either (warning once), as nobody schedules with
 * them.
 */
void tenant_admit(void)
{
    tenants_setup();
    stderr_to_file = true;
    char all[200];
    snprintf(all, sizeof all, "%s/all.conf", dir);
    FILE *f = fopen(all, "w");
    if (f) {
        fprintf(f, "board_dir = %s\n", shared);
        fclose(f);
    }
    EXPECT(chmod(all, 0644) == 0);
    write_conf("admit = 4241\n"); /* not root: its tools still read the shared directory */
    spawn_uid = USER_A;
    struct proc bursts = spawn_ready("normal", NULL, high_bursts);
    char config_all[240]; /* the other user's own file admits everyone */
    snprintf(config_all, sizeof config_all, "GPUPRIO_CONFIG=%s", all);
    const char *const load_env[] = {config_all, NULL};
    spawn_uid = USER_B;
    struct proc load = spawn_ready_env(load_env, "critical", NULL, low_load);
    spawn_uid = 0;

    /* Both are on their boards in the shared directory (ready: their streams ran a kernel). */
    static const char *const top[] = {"top", "--once", "--json", NULL};
    char user_a[32], user_b[32];
    snprintf(user_a, sizeof user_a, "\"uid\": %u,", USER_A);
    snprintf(user_b, sizeof user_b, "\"uid\": %u,", USER_B);
    const uid_t readers[] = {0, USER_A};
    for (int i = 0; i < 2; i++) {
        struct tool_run t = run_tool_kept(readers[i], top, 10);
        int a_rows = occurrences(t.out, user_a), b_rows = occurrences(t.out, user_b);
        printf("  gpuprio top --once --json as uid %u: %d of user %u's queues, %d of user %u's "
               "(not admitted)\n",
               (unsigned)readers[i], a_rows, USER_A, b_rows, USER_B);
        EXPECT(t.ok && t.out && json_parses(t.out, strlen(t.out)));
        EXPECT(a_rows >= 1 && b_rows == 0);
        EXPECT(occurrences(t.err, "does not admit: it is ignored") == 1);
        free(t.out);
        free(t.err);
    }

    go(&load);
    go(&bursts);
    EXPECT(finish(&bursts, NULL) == 0);
    unsigned long long suspended = last_suspensions;
    EXPECT(finish(&load, NULL) == 0);
    printf("a user not admitted at critical next to an admitted user's bursts: suspended %llu "
           "times\n",
           suspended);
    EXPECT(suspended == 0);
    EXPECT(stderr_of(&bursts, "whom"));
    EXPECT(stderr_of(&bursts, "does not admit: it is ignored"));
}

/*
 * The administrator's view: a file whose admit list does not admit root (users A and B only),
 * and root's own board directory elsewhere (GPUPRIO_BOARD_DIR), with a process of root's there.
 * Root's gpuprio top --json and metrics show A's, B's and root's processes, and root's gpuprio
 * set steers A's (in the shared directory) and its own (before: top said "processes: none" but
 * for root's own, metrics had no rows of the users, and set said "no process PID on any board").
 */
void tenant_root_view(void)
{
    tenants_setup(); /* the gpuprio command too, where every user reaches it */
    stderr_to_file = true;
    write_conf("admit = 4241, 4242\n");
    char private_dir[200];
    snprintf(private_dir, sizeof private_dir, "%s/root", dir);
    EXPECT(mkdir(private_dir, 0700) == 0);
    static const char *const hold[] = {"1", "hold", "1000", NULL};
    struct proc p[3];
    const uid_t users[3] = {USER_A, USER_B, 0};
    setenv("GPUPRIO_BOARD_DIR", private_dir, 1); /* root's; A and B use the file's */
    for (int i = 0; i < 3; i++) {
        spawn_uid = users[i];
        p[i] = spawn_ready("normal", NULL, hold);
    }
    spawn_uid = 0;

    static const char *const top[] = {"top", "--once", "--json", NULL};
    static const char *const metrics[] = {"metrics", "--once", NULL};
    struct tool_run t = run_tool_kept(0, top, 10);
    char field[40];
    int rows[3];
    for (int i = 0; i < 3; i++) {
        snprintf(field, sizeof field, "\"pid\": %d,", (int)p[i].pid);
        rows[i] = occurrences(t.out, field);
    }
    printf("  root's gpuprio top --once --json: %d, %d and %d queues of users %u, %u and root\n",
           rows[0], rows[1], rows[2], USER_A, USER_B);
    EXPECT(t.ok && t.out && json_parses(t.out, strlen(t.out)));
    EXPECT(rows[0] == 1 && rows[1] == 1 && rows[2] == 1);
    free(t.out);
    free(t.err);
    t = run_tool_kept(0, metrics, 10);
    for (int i = 0; i < 3; i++) {
        snprintf(field, sizeof field, "pid=\"%d\"", (int)p[i].pid);
        rows[i] = occurrences(t.out, field) > 0;
    }
    printf("  root's gpuprio metrics --once: series of users %u, %u and root: %d, %d, %d\n", USER_A,
           USER_B, rows[0], rows[1], rows[2]);
    const char *why = "";
    EXPECT(t.ok && t.out && metrics_parse(t.out, strlen(t.out), &why));
    EXPECT(rows[0] && rows[1] && rows[2]);
    free(t.out);
    free(t.err);

    char said_set[4096], pid[16];
    const char *const priorities[3] = {"low", "high", "critical"};
    for (int i = 0; i < 3; i++) {
        snprintf(pid, sizeof pid, "%d", (int)p[i].pid);
        const char *const set[] = {"set", pid, priorities[i], NULL};
        int status = tool_status(0, set, said_set, sizeof said_set);
        printf("  root's gpuprio set %s %s: status %d, said: %s", pid, priorities[i], status,
               said_set);
        EXPECT(status == 0);
    }
    const int want[3] = {GPUPRIO_PRIORITY_LOW, GPUPRIO_PRIORITY_HIGH, GPUPRIO_PRIORITY_CRITICAL};
    for (int i = 0; i < 3; i++) {
        go(&p[i]);
        go(&p[i]);
        int at = 0;
        EXPECT(finish(&p[i], &at) == 0);
        EXPECT(at == want[i]);
    }
}
