/*
 * board_boards.c - processes of one user scheduling together through their board, claims and
 * liveness. ctest: board.two, board.three, board.unscheduled, board.kill-high, board.kill-low,
 * board.stopped, board.churn, board.full-of-dead, board.claim-left, board.log_info(_level1),
 * board.lock_stuck, sched.many_queues, tenant.namespace_two, tenant.namespace_kill-high;
 * gate.stopped, gate.killed and gate.level1_killed run stop-high and kill-high too.
 *
 * two, three    a high-priority process's bursts next to saturating normal and low ones: no
 *               kernel waits, between reaching the runtime and starting, behind more than the
 *               window's worth of kernels of any one lower-priority process (from the
 *               simulator's trace, whose clock all processes share); everyone finishes.
 * unscheduled   the same two processes with GPUPRIO_POLICY=passthrough break that bound, so
 *               the check can fail.
 * kill-high     the high-priority process is killed (SIGKILL) while it is active: the held
 *               low-priority process submits again within 100 ms, not after the 500 ms
 *               watchdog, because it notices the dead owner's slot and reclaims it.
 * kill-low      a low-priority process killed while suspended: the high-priority one does
 *               not notice (it finishes every burst within the bound).
 * stop-high     the high-priority process stopped (SIGSTOP) for 800 ms in the middle of its
 *               bursts: the low-priority one goes on after the watchdog (200 ms), not after the
 *               stop; once continued, the high-priority process holds it back again.
 * churn         200 short-lived processes of mixed priorities come and go next to two
 *               long-running ones: no slot is left behind, everyone finishes; prints how
 *               long the churn took.
 * claim-left    a process killed right after it claimed a slot (the slot still claimed, its
 *               identity not written): an idle process's listener frees it within 3 s.
 * many          two processes with 150 streams each, one of which runs (PyTorch creates its
 *               pools of streams whole): only the streams that ran hold board slots, and the
 *               high-priority process's bursts, each after 50 ms idle, keep the bound.
 * ns-two, ns-kill-high
 *               two and kill-high with each worker in a pid namespace of its own (`unshare
 *               --pid`, as containers sharing the board directory run), where each is pid 1 and
 *               none can see the others' pids: they schedule together, and a killed one is
 *               recognised as dead (by its slots' liveness locks) and reclaimed within 100 ms.
 *               Exits 77 (skipped) where pid namespaces cannot be created.
 */
#include "board_harness.h"

void bursts_next_to(int others, const char *policy)
{
    struct proc high = spawn_ready("high", policy, high_bursts);
    struct proc low = spawn_ready("low", policy, low_load);
    struct proc normal = {-1, NULL, -1};
    if (others == 2) {
        normal = spawn_ready("normal", policy, normal_load);
        go(&normal);
    }
    go(&low);
    go(&high);
    EXPECT(finish(&high, NULL) == 0);
    EXPECT(finish(&low, NULL) == 0);
    if (others == 2)
        EXPECT(finish(&normal, NULL) == 0);
    read_trace();
    EXPECT(count_tag(TAG_HIGH) == 64);
    EXPECT(count_tag(TAG_LOW) == 500);
    if (others == 2)
        EXPECT(count_tag(TAG_NORMAL) == 500);
    int high_wait = most_overtaking(TAG_HIGH), normal_wait = most_overtaking(TAG_NORMAL);
    printf("%s, %d processes: a high-priority kernel waited behind at most %d kernels of one "
           "lower-priority process; a normal-priority one behind at most %d (window %d)\n",
           policy ? policy : "hpf", others + 1, high_wait, normal_wait, WINDOW);
    if (policy) {
        EXPECT(high_wait > WINDOW);
    } else {
        EXPECT(high_wait <= WINDOW);
        EXPECT(normal_wait <= WINDOW);
    }
}

/* What a worker's stderr (stderr_to_file) said of its queue's suspensions at GPUPRIO_LOG=info:
 * lines saying it suspended ("suspended", now suspended; "suspended and resumed", suspended since
 * the last line and running again now) and the suspensions they count (a line may say "N times
 * since the last line"; "(counted already)" counts none), those naming who suspended it
 * (" by process "), and of those, how many name `by`; lines saying it resumed (both kinds).
 * Followed line by line, the states they say must fit the counts: how many resumptions they
 * imply (a line that finds it suspended again after one that said so implies one for each
 * suspension it counts, a line that says it resumed one more), and whether a line said it
 * resumed while the last one had said it was running, or a "counted already" one that it was
 * suspended while the last one had already said so (bad); and the state of the last line. */
struct said_switches {
    int lines, suspensions, resumed, naming, named;
    int implied_resumptions, bad;
    int suspended_lines; /* lines saying "suspended" (and not resumed) */
    int last_naming;     /* the last line counting suspensions names who suspended it */
    bool ends_suspended;
};

static struct said_switches switches_said(const struct proc *p, const char *by)
{
    struct said_switches s = {0};
    char path[128], line[1024];
    snprintf(path, sizeof path, "%s/%d.err", dir, (int)p->pid);
    FILE *f = fopen(path, "r");
    bool suspended = false; /* as the lines so far say */
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "gpuprio: info: resumed queue ")) {
            s.resumed++;
            s.bad += !suspended;
            s.implied_resumptions++;
            suspended = false;
            continue;
        }
        bool and_resumed = strstr(line, "gpuprio: info: suspended and resumed queue ") != NULL;
        if (!and_resumed && !strstr(line, "gpuprio: info: suspended queue "))
            continue;
        const char *times = strstr(line, " times since the last line");
        int n = strstr(line, "(counted already)") ? 0 : 1;
        if (times) {
            while (times > line && times[-1] >= '0' && times[-1] <= '9')
                times--;
            n = atoi(times);
        }
        s.lines++;
        s.suspensions += n;
        s.naming += strstr(line, " by process ") != NULL;
        s.named += strstr(line, by) != NULL;
        s.suspended_lines += !and_resumed;
        if (n)
            s.last_naming = strstr(line, " by process ") != NULL;
        if (n == 0) { /* its state only: suspended, its suspension said already */
            s.bad += suspended || and_resumed;
        } else {
            /* Each suspension counted followed a resumption, but the first when it was running. */
            s.implied_resumptions += suspended ? n : n - 1;
            if (and_resumed) {
                s.resumed++;
                s.implied_resumptions++;
            }
        }
        suspended = !and_resumed;
    }
    s.ends_suspended = suspended;
    if (f)
        fclose(f);
    return s;
}

/* Waits (up to 10 s) until no queue of process `high` on the board is active and none of `low`
 * is suspended; whether that came. */
static bool settled(struct gp_board *b, pid_t high, pid_t low)
{
    for (int tries = 0; tries < 10000; tries++) {
        bool busy = false;
        for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
            struct gp_board_slot *s = &b->f->slots[i];
            uint64_t owner = atomic_load(&s->owner);
            if (GP_SLOT_STATE(owner) != GP_SLOT_LIVE)
                continue;
            busy |= GP_SLOT_OWNER(owner) == (uint32_t)high && atomic_load(&s->st.active);
            busy |= GP_SLOT_OWNER(owner) == (uint32_t)low &&
                    (atomic_load(&s->st.gate) & XQ_GATE_SUSPENDED);
        }
        if (!busy)
            return true;
        usleep(1000);
    }
    return false;
}

/* The test plays a decider of a library from before suspended_by (devgate.h): it suspends
 * process pid's queues on board b (suspend), or resumes them and wakes the board's listeners, as
 * such a library's decisions did, writing nothing on their gate lines. Whether it held the lock. */
static bool old_library_decides(struct gp_board *b, pid_t pid, bool suspend)
{
    if (gp_board_lock(b) != 0)
        return false;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        uint64_t owner = atomic_load(&s->owner);
        if (GP_SLOT_STATE(owner) != GP_SLOT_LIVE || GP_SLOT_OWNER(owner) != (uint32_t)pid)
            continue;
        if (!suspend) {
            atomic_fetch_and(&s->st.gate, ~XQ_GATE_SUSPENDED);
        } else if (!(atomic_load(&s->st.gate) & XQ_GATE_SUSPENDED)) {
            atomic_fetch_add(&s->st.suspensions, 1); /* counted first, as every decider does */
            atomic_fetch_or(&s->st.gate, XQ_GATE_SUSPENDED);
        }
    }
    gp_board_unlock(b);
    if (!suspend)
        gp_board_notify(b);
    return true;
}

/*
 * GPUPRIO_LOG=info promises a line each time a queue is suspended or resumed: a low-priority
 * process that a high-priority process of its user suspends through the board (the decision
 * the high one writes into the low one's slot, not the low one's own) says so, naming the high
 * process, and says when it is resumed. It said nothing of those before (0 lines for 9
 * suspensions): only its own decisions were said. Every suspension its statistics count is in
 * its lines (said at its listener's next look, or as its queue leaves its slot, or at exit:
 * nothing is lost there), and what each line says of its state fits what came after. The high
 * one, at the default level, wakes nobody to suspend it: the board's sequence word moves about
 * once per resumption, not once more per suspension as when a decider woke a logging owner for
 * each (16 and more for 8). Both stay alive until the low one said everything (the high one's
 * name is read from its record on the board, gone with it), and the low one reads its
 * statistics once nothing suspends it any more. The bursts are 50 ms apart, so that the look that
 * each resumption wakes the low one's listener to comes before the next burst: each line that
 * says it suspended is followed by one that says it running again, while a look that found new
 * suspensions and its bit already clear said only "suspended" before (8 such lines, 1 resumed).
 * The high one's record names it with bytes a terminal would act on (as a hostile process of
 * the user can name itself), which the low one's lines show as '?' (they passed but for those
 * below 0x20 before). Last, the test suspends it as a library before suspended_by decided, which
 * leaves on its gate line the name of the high process, which did not suspend it this time: its
 * line for that one must name nobody (it named the high process before).
 */
void log_info(void)
{
    static const char *const spaced_bursts[] = {"1", "burst", "8", "8", "300", "50000", NULL};
    static const char *const linger[] = {"BOARD_WORKER_LINGER=1", NULL};
    static const char *const linger_info[] = {"BOARD_WORKER_LINGER=1", "GPUPRIO_LOG=info", NULL};
    struct proc high = spawn_ready_env(linger, "high", NULL, spaced_bursts);
    stderr_to_file = true;
    struct proc low = spawn_ready_env(linger_info, "low", NULL, low_load);
    stderr_to_file = false;
    struct gp_board b;
    bool board = open_board(&b) == 0;
    EXPECT(board);
    uint32_t seq = board ? atomic_load(&b.f->h.seq) : 0;
    /* The high one's name as a hostile process of the user could set it (prctl), on its record:
     * the low one says it in printable ASCII only (gp_log itself replaces bytes below 0x20). */
    static const char hostile[16] = "board\x1b\x9b\xc3worker";
    for (unsigned i = 0; board && i < GP_BOARD_SLOTS; i++) {
        struct gp_board_slot *s = &b.f->slots[i];
        uint64_t owner = atomic_load(&s->owner);
        if (GP_SLOT_STATE(owner) == GP_SLOT_PROCESS && GP_SLOT_OWNER(owner) == (uint32_t)high.pid)
            memcpy(s->comm, hostile, sizeof s->comm);
    }
    go(&low);
    go(&high);
    EXPECT(expect_line(&high, "worked") == 0); /* its bursts are over */
    EXPECT(expect_line(&low, "worked") == 0);
    EXPECT(board && settled(&b, high.pid, low.pid)); /* and its queue's grace: low resumed */
    uint32_t wakes = board ? atomic_load(&b.f->h.seq) - seq : 0;
    EXPECT(board && old_library_decides(&b, low.pid, true));
    usleep(100000); /* a look of its listener (every 20 ms: a queue throttled is held) says it */
    EXPECT(board && old_library_decides(&b, low.pid, false));
    if (board)
        gp_board_close(&b);
    go(&low);
    EXPECT(finish(&low, NULL) == 0);
    unsigned long long suspended = last_suspensions;
    go(&high);
    EXPECT(finish(&high, NULL) == 0);
    char by[64];
    snprintf(by, sizeof by, " by process %d (board???worker)", (int)high.pid);
    struct said_switches said = switches_said(&low, by);
    bool mirrored = stderr_count(&low, "mirrored") > 0; /* then deciders wake its listener */
    printf("GPUPRIO_LOG=info, level %s: the low-priority process was suspended %llu times and "
           "said %d suspensions in %d lines (%d naming who suspended it, %d the high-priority "
           "process %d, %s the last), %d of them saying it was still suspended, and %d "
           "resumptions in lines (%d implied, %d lines out of step, the last line %s); the "
           "board's listeners were woken %u times by the bursts%s\n",
           level(), suspended, said.suspensions, said.lines, said.naming, said.named, (int)high.pid,
           said.last_naming ? "including" : "not", said.suspended_lines, said.resumed,
           said.implied_resumptions, said.bad, said.ends_suspended ? "suspended" : "running", wakes,
           mirrored ? " (mirrored)" : "");
    EXPECT(suspended > 0);
    EXPECT(said.named >= 1);           /* suspended by the other process, which it names */
    EXPECT(said.naming == said.named); /* and nobody else: only the high one names itself */
    EXPECT(said.resumed >= 1);
    /* Each line that says it suspended is followed by one that says it resumed (above). */
    EXPECT(said.resumed >= said.suspended_lines);
    /* The last suspension, the old library's, is named nobody's (nor any before: said.named). */
    EXPECT(said.last_naming == 0);
    /* Each said once, none lost: the count it read once nothing suspended it any more. */
    EXPECT((unsigned long long)said.suspensions == suspended);
    /* Each resumed, and said so: it ended running. */
    EXPECT((unsigned long long)said.implied_resumptions == suspended);
    EXPECT(said.bad == 0 && !said.ends_suspended);
    /* A wake for each resumption (a few more for joins and idle queues), none for suspending. */
    if (!mirrored)
        EXPECT(wakes <= suspended + 4);
    if (failures)
        stderr_of(&low, "");
}

/* The process that runs worker p: p itself, or in a pid namespace of its own unshare's child. */
static pid_t worker_pid(const struct proc *p)
{
    char path[64];
    int child = -1;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)p->pid, (int)p->pid);
    FILE *f = in_namespaces ? fopen(path, "r") : NULL;
    if (f && fscanf(f, "%d", &child) != 1)
        child = -1;
    if (f)
        fclose(f);
    return child > 0 ? child : p->pid;
}

/* Whether pid has ended: a zombie or gone, its files closed (its locks dropped) either way. */
static bool has_ended(pid_t pid)
{
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *state = strrchr(stat, ')'); /* after the name, which may hold anything */
    return state && state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X');
}

/*
 * The high-priority process killed (SIGKILL) while the low-priority one is held: the low one
 * resumes within 100 ms, not after the watchdog (500 ms), as its listener finds the dead owner's
 * slots (every 20 ms) and frees them. Timed from the end of the killed process (until then its
 * lock on its slots stands: the kernel's teardown, which a loaded host delays, as it does with
 * unshare's child in a pid namespace, killed only once unshare is), or from the return of a
 * variant's at(KILL_ENDED), to the read of the low one's gate that let its next kernel through
 * (Level 1: that kernel's start), the simulator's dispatch left out.
 */
void kill_high(void)
{
    kill_high_as(0, NULL);
}

void kill_high_as(uid_t uid, void (*at)(enum kill_moment moment, pid_t high, pid_t low))
{
    static const char *const hold[] = {"1", "hold", "5000000", NULL};
    static const char *const low_args[] = {"3", "saturate", "100", "1000", NULL};
    spawn_uid = uid;
    struct proc high = spawn_ready("high", NULL, hold);
    struct proc low = spawn_ready("low", NULL, low_args);
    spawn_uid = 0;
    go(&high);
    go(&low);
    usleep(20000); /* the low process is busy */
    pid_t holder = worker_pid(&high), held = worker_pid(&low);
    if (at)
        at(KILL_BEFORE_LAUNCH, holder, held);
    go(&high);
    EXPECT(expect_line(&high, "launched") == 0);
    if (at)
        at(KILL_HELD, holder, held);
    usleep(100000); /* held behind the active high-priority process */
    if (at)
        at(KILL_KILLING, holder, held);
    uint64_t killed = now_ns();
    kill(high.pid, SIGKILL);
    while (!has_ended(holder) && now_ns() - killed < 5000000000u)
        usleep(200);
    uint64_t ended = now_ns();
    if (at)
        at(KILL_ENDED, holder, held);
    uint64_t dead = now_ns();
    EXPECT(finish(&high, NULL) == 128 + SIGKILL);
    EXPECT(finish(&low, NULL) == 0);
    read_trace();
    EXPECT(count_tag(TAG_LOW) == 100);
    /* Starts, not submissions: at Level 2 the low process submitted everything long before,
     * and its gate, closed by the high process, held it on the device. */
    uint64_t resumed = UINT64_MAX, let_through = UINT64_MAX;
    int during_hold = 0;
    for (size_t i = 0; i < nk; i++) {
        if (k[i].tag != TAG_LOW)
            continue;
        if (k[i].start >= killed && k[i].start < resumed) {
            resumed = k[i].start;
            let_through = strcmp(level(), "1") && k[i].waited >= killed ? k[i].waited : k[i].start;
        }
        during_hold += k[i].start >= killed - 80000000u && k[i].start < killed;
    }
    double ms = resumed == UINT64_MAX ? -1 : (double)(resumed - killed) / 1e6;
    double after_end = resumed == UINT64_MAX ? -1 : ((double)let_through - (double)dead) / 1e6;
    printf("kill -9 of the active high-priority process (level %s): the low-priority one started "
           "kernels again %.1f ms later (it had started %d kernels in the 80 ms before); the "
           "killed one ended %.1f ms after the kill, and the low one was let through %.1f ms "
           "after that\n",
           level(), ms, during_hold, (double)(ended - killed) / 1e6, after_end);
    EXPECT(during_hold <= WINDOW); /* it really was held */
    EXPECT(resumed != UINT64_MAX && after_end < 100);
}

/*
 * The high-priority process stopped (SIGSTOP) in the middle of its bursts, which keeps its queue
 * active: the low-priority process is held only until another process's listener finds the queue
 * stalled (GPUPRIO_WATCHDOG_MS, 200 here, plus its 20-ms look), not for the whole stop; and once
 * the high-priority process continues, its queue holds the low one back again (the stall mark is
 * cleared when it moves).
 */
void stop_high(void)
{
    /* Back to back: its queue is active throughout, the stop included. */
    static const char *const bursts[] = {"1", "burst", "40", "4", "1000", "0", NULL};
    /* A long grace keeps it active between its bursts however slow its host code is (TSan), so
     * that the stop finds it active. */
    static const char *const high_env[] = {"GPUPRIO_WATCHDOG_MS=200", "GPUPRIO_GRACE_US=50000",
                                           NULL};
    static const char *const low_env[] = {"GPUPRIO_WATCHDOG_MS=200", NULL};
    struct proc high = spawn_ready_env(high_env, "high", NULL, bursts);
    struct proc low = spawn_ready_env(low_env, "low", NULL, low_load);
    go(&low);
    go(&high);
    usleep(40000);
    uint64_t stopped = now_ns();
    kill(high.pid, SIGSTOP);
    usleep(800000);
    uint64_t resumed = now_ns();
    kill(high.pid, SIGCONT);
    EXPECT(finish(&high, NULL) == 0);
    EXPECT(finish(&low, NULL) == 0);
    read_trace();
    EXPECT(count_tag(TAG_HIGH) == 160);
    EXPECT(count_tag(TAG_LOW) == 500);
    uint64_t low_again = UINT64_MAX;
    int held_after = 0;
    for (size_t i = 0; i < nk; i++) {
        if (k[i].tag == TAG_LOW && k[i].start >= stopped && k[i].start < low_again)
            low_again = k[i].start;
        if (k[i].tag != TAG_HIGH || k[i].submit < resumed + 50000000u)
            continue;
        /* Submitted once the high process had run on for 50 ms: the low one is held again. */
        int overtaking = 0;
        for (size_t j = 0; j < nk; j++)
            overtaking +=
                k[j].tag == TAG_LOW && k[j].start >= k[i].submit && k[j].start < k[i].start;
        if (overtaking > held_after)
            held_after = overtaking;
    }
    double ms = low_again == UINT64_MAX ? -1 : (double)(low_again - stopped) / 1e6;
    printf("SIGSTOP of the high-priority process in its bursts (level %s): the low-priority one "
           "started kernels again %.1f ms later (watchdog 200 ms); after SIGCONT, a high-priority "
           "kernel waited behind at most %d of its kernels (window %d)\n",
           level(), ms, held_after, WINDOW);
    EXPECT(ms >= 150 && ms < 200 + 150);
    EXPECT(held_after <= WINDOW);
}

/*
 * A live process holds the board's lock for 500 ms (as one stopped while it held it would; the
 * test plays it, with its own pid): the workers give the board up after 200 ms (the high one
 * says so), decide for their own queues only meanwhile (reading the board without its lock), and
 * take the board back at their next look once the lock is free (once a second; the high one says
 * so): from then on the low one is suspended and resumed again. (Before, a process that gave the
 * board up decided as if alone: the high queue, left unscheduled, never decided again, and the
 * low one stayed suspended for good.)
 */
void lock_stuck(void)
{
    static const char *const bursts[] = {"1", "burst", "400", "2", "1000", "8000", NULL};
    static const char *const saturate[] = {"3", "saturate", "5000", "1000", NULL};
    stderr_to_file = true;
    /* Without the simulated device's priority dispatch, which alone keeps the high kernels
     * ahead when the processes schedule each on its own. */
    static const char *const no_hw[] = {"GPUPRIO_HW_PRIORITY=off", NULL};
    struct proc high = spawn_ready_env(no_hw, "high", NULL, bursts);
    struct proc low = spawn_ready_env(no_hw, "low", NULL, saturate);
    stderr_to_file = false;
    go(&low);
    go(&high);
    usleep(200000);
    struct gp_board b;
    EXPECT(open_board(&b) == 0);
    uint64_t held = GP_BOARD_LOCK_HOLDER((uint32_t)getpid(), 12345), none = 0;
    while (!atomic_compare_exchange_weak(&b.f->h.lock, &none, held))
        none = 0;
    uint64_t locked = now_ns();
    usleep(300000); /* both have given the board up by now */
    uint64_t given_up = suspensions_of(&b, low.pid);
    usleep(200000);
    uint64_t before = suspensions_of(&b, low.pid);
    atomic_store(&b.f->h.lock, 0);
    uint64_t freed = now_ns();
    usleep(2000000); /* each looks once a second; a loaded host (TSan) looks later */
    uint64_t after = suspensions_of(&b, low.pid);
    gp_board_close(&b);
    EXPECT(finish(&high, NULL) == 0);
    EXPECT(finish(&low, NULL) == 0);
    read_trace();
    EXPECT(count_tag(TAG_HIGH) == 800);
    EXPECT(count_tag(TAG_LOW) == 5000);
    EXPECT(stderr_of(&high, "stayed locked by another live process for too long"));
    EXPECT(stderr_of(&high, "is scheduled across processes again"));
    (void)stderr_of(&low, "");
    printf("level %s: the board's lock held %.0f ms by a live process: the low-priority queue "
           "was suspended %llu times meanwhile, and %llu times in the 2 s "
           "after it was freed; a high-priority kernel waited behind up to %d low-priority ones "
           "meanwhile and %d after (window %d)\n",
           level(), (double)(freed - locked) / 1e6, (unsigned long long)(before - given_up),
           (unsigned long long)(after - before),
           most_overtaking_within(TAG_HIGH, locked + 300000000u, freed),
           most_overtaking_within(TAG_HIGH, freed + 2000000000u, UINT64_MAX), WINDOW);
    EXPECT(after > before); /* decided on again (it stayed suspended for good before) */
}

void kill_low(void)
{
    struct proc high = spawn_ready("high", NULL, high_bursts);
    struct proc low = spawn_ready("low", NULL, low_load);
    go(&low);
    go(&high);
    usleep(40000);
    kill(low.pid, SIGKILL);
    EXPECT(finish(&low, NULL) == 128 + SIGKILL);
    EXPECT(finish(&high, NULL) == 0);
    read_trace();
    EXPECT(count_tag(TAG_HIGH) == 64);
    int wait = most_overtaking(TAG_HIGH);
    printf("kill -9 of a low-priority process: the high-priority one finished every burst, "
           "waiting behind at most %d of its kernels\n",
           wait);
    EXPECT(wait <= WINDOW);
}

void many_queues(void)
{
    static const char *const rare_bursts[] = {"1", "burst", "4", "8", "300", "50000", NULL};
    static const char *const idle_streams[] = {"BOARD_WORKER_IDLE_STREAMS=149", NULL};
    struct proc high = spawn_ready_env(idle_streams, "high", NULL, rare_bursts);
    struct proc low = spawn_ready_env(idle_streams, "low", NULL, low_load);
    struct board_use used = board_use(); /* both warmed up one stream each */
    go(&low);
    go(&high);
    EXPECT(finish(&high, NULL) == 0);
    EXPECT(finish(&low, NULL) == 0);
    read_trace();
    EXPECT(count_tag(TAG_HIGH) == 32);
    EXPECT(count_tag(TAG_LOW) == 500);
    int wait = most_overtaking(TAG_HIGH);
    printf("two processes of 150 streams, one of each running: %d board slots in use, %d of "
           "them the processes' records, which count %ld unused queues; a high-priority kernel, "
           "each burst after 50 ms idle, waited behind at most %d kernels of the low-priority "
           "process (window %d)\n",
           used.slots, used.records, used.unused, wait, WINDOW);
    EXPECT(used.slots - used.records == 2);
    EXPECT(used.records == 2);
    EXPECT(used.unused == 2 * 149);
    EXPECT(wait <= WINDOW);
}

/* A board full of a dead process's slots (a crash storm leaves this within one liveness
 * period): a process that needs a slot reclaims them at once, instead of being scheduled on its
 * own until its listener's next look. */
void full_of_dead(void)
{
    char key[GP_BOARD_KEY_MAX];
    snprintf(key, sizeof key, "sim:%s:00", name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        gp_board_self_reset();
        struct gp_board b;
        const char *why;
        if (gp_board_open(key, &b, &why) != 0)
            _exit(1);
        for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
            struct gp_board_slot *s = gp_board_claim(&b);
            if (!s)
                _exit(2);
            gp_board_publish(&b, s);
        }
        _exit(0);
    }
    int status;
    EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT(slots_in_use() == GP_BOARD_SLOTS);
    struct proc high = spawn_ready("high", NULL, high_bursts);
    struct board_use used = board_use(); /* its stream warmed up: it joined the board */
    go(&high);
    EXPECT(finish(&high, NULL) == 0);
    int left = slots_in_use();
    printf("a board full of a dead process's %u slots: a new process's first command left %d "
           "slots in use (%d of them records), and %d after it exited\n",
           GP_BOARD_SLOTS, used.slots, used.records, left);
    EXPECT(used.records == 1);
    EXPECT(used.slots == 2);
    EXPECT(left == 0);
}

/* A process killed right after it claimed a slot leaves it claimed, with none of its identity
 * written (no pid namespace, no liveness lock): judged by its pid alone, which needs the slot's
 * namespace, it held the slot for ever (chaos.short_lived under TSan). An idle process's
 * listener frees it: once nobody held its lock while it stayed claimed for
 * GP_BOARD_CLAIM_MAX_NS, at its next look after that, well within 3 s. */
void claim_left(void)
{
    static const char *const hold[] = {"1", "hold", "1000", NULL};
    struct proc idle = spawn_ready("high", NULL, hold);
    go(&idle); /* it waits for its next line now */
    int before = slots_in_use();
    char key[GP_BOARD_KEY_MAX];
    snprintf(key, sizeof key, "sim:%s:00", name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct gp_board b;
        const char *why;
        if (gp_board_open(key, &b, &why) != 0)
            _exit(1);
        for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
            struct gp_board_slot *s = &b.f->slots[i];
            uint64_t free_word = 0;
            if (atomic_load(&b.f->h.slot_limit) < i + 1)
                atomic_store(&b.f->h.slot_limit, i + 1);
            s->pid_ns = 0; /* a slot never used before */
            if (atomic_compare_exchange_strong(&s->owner, &free_word,
                                               (uint64_t)getpid() << 32 | GP_SLOT_CLAIMED))
                _exit(0); /* killed here */
        }
        _exit(2);
    }
    int status;
    EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    uint64_t from = now_ns();
    int left = slots_in_use();
    EXPECT(left == before + 1);
    while ((left = slots_in_use()) > before && now_ns() - from < 3000000000u)
        usleep(10000);
    unsigned ms = (unsigned)((now_ns() - from) / 1000000);
    go(&idle);
    EXPECT(finish(&idle, NULL) == 0);
    printf("a slot left claimed by a process killed right after claiming it: %s after %u ms "
           "(%d slots in use before it, %d then)\n",
           left > before ? "still held" : "freed", ms, before, left);
    EXPECT(left == before);
}

void churn(void)
{
    static const char *const longer[] = {"3", "saturate", "2000", "300", NULL};
    static const char *const bursts[] = {"1", "burst", "40", "4", "300", "10000", NULL};
    /* Brief processes tagged by priority (see most_overtaking). */
    static const char *const brief[][5] = {{"3", "saturate", "5", "100", NULL},
                                           {"2", "saturate", "5", "100", NULL},
                                           {"4", "saturate", "5", "100", NULL},
                                           {"3", "saturate", "5", "100", NULL}};
    struct proc low = spawn_ready("low", NULL, longer);
    struct proc high = spawn_ready("high", NULL, bursts);
    go(&low);
    go(&high);
    enum { TOTAL = 200, AT_ONCE = 8 };
    struct proc running[AT_ONCE];
    int started = 0, ok = 0;
    uint64_t t0 = now_ns();
    static const char *const levels[] = {"low", "normal", "high", "idle"};
    while (started < TOTAL) {
        int n = 0;
        for (; n < AT_ONCE && started < TOTAL; n++, started++)
            running[n] = spawn(levels[started % 4], NULL, brief[started % 4]);
        for (int i = 0; i < n; i++) {
            EXPECT(expect_line(&running[i], "ready") == 0);
            go(&running[i]);
        }
        for (int i = 0; i < n; i++)
            ok += finish(&running[i], NULL) == 0;
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    EXPECT(ok == TOTAL);
    EXPECT(finish(&high, NULL) == 0);
    EXPECT(finish(&low, NULL) == 0);
    read_trace();
    EXPECT(nk == 2000 + 40 * 4 + TOTAL * 5);
    int left = slots_in_use();
    /* Admission still keeps its bound while processes come and go. */
    int wait = most_overtaking(TAG_HIGH);
    printf("%d short-lived processes came and went in %.2f s (%.1f ms each, %d at a time) next "
           "to two long-running ones; %d slots left in use; a high-priority kernel waited "
           "behind at most %d kernels of one lower-priority process meanwhile\n",
           TOTAL, secs, secs * 1e3 / TOTAL, AT_ONCE, left, wait);
    EXPECT(left == 0);
    EXPECT(wait <= WINDOW);
}
