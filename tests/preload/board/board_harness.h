/*
 * board_harness.h - what the board tests share (board_harness.c, board_tools.c): starting
 * board_worker processes under the shim and talking to them, reading the simulator's trace and
 * the subtest's board, the users of the tenant tests, and running the gpuprio command. One
 * program, board_test, so these names carry no prefix: they are the tests' vocabulary.
 */
#ifndef GPUPRIO_BOARD_HARNESS_H
#define GPUPRIO_BOARD_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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
#include <poll.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "board.h"
#include "board_screen.h"
#include "gpuprio.h"
#include "../../expect.h"

#define WINDOW 2
#define TAG_HIGH 1
#define TAG_NORMAL 2
#define TAG_LOW 3

/* ---- the workers (board_harness.c) ---- */

extern const char *worker, *shim;
extern const char *tool;    /* the gpuprio command (GPUPRIO_TOOL), copied where users reach it */
extern bool stderr_to_file; /* workers write stderr to DIR/PID.err (stderr_of) */
extern bool in_namespaces;  /* each worker in a pid namespace of its own (ns-*) */
extern bool on_disk;        /* the board directory on a disk filesystem (disk-*) */
extern uid_t spawn_uid;     /* workers run as this user (0: as the test) */
/* Programs that run the worker (each execs or starts the next), under the shim themselves as a
 * script's would be: NULL-terminated, or NULL for none. */
extern const char *const *wrapper;
extern char dir[64], name[32], trace[128];
/* Every worker started, so that a hung one can be killed (hang_bound). */
#define MAX_WATCHED 256
extern pid_t watched[MAX_WATCHED];
extern volatile sig_atomic_t reaped[MAX_WATCHED]; /* watched[i] was waited for */
extern volatile sig_atomic_t n_watched, hung;

/* waitpid, and the pid is no longer watched once reaped (another process may get the number
 * then): with SIGALRM (hang_bound) held off in between. */
pid_t reap(pid_t pid, int *status, int flags);

uint64_t now_ns(void);

struct proc {
    pid_t pid;
    FILE *out; /* the worker's stdout */
    int in;    /* its stdin */
};

/* Starts a worker with priority (and policy, or NULL) and the given arguments; env
 * ("NAME=VALUE" each, NULL-terminated; or NULL) is added to its environment alone. */
struct proc spawn_env(const char *const *env, const char *priority, const char *policy,
                      const char *const *args);
struct proc spawn(const char *priority, const char *policy, const char *const *args);

/* Whether the stderr a worker wrote (with stderr_to_file) has `says` in it; also copies it to
 * this test's stderr. */
bool stderr_of(const struct proc *p, const char *says);

/* How many lines of the stderr a worker wrote (with stderr_to_file) have `says` in them. */
int stderr_count(const struct proc *p, const char *says);

/* Reads the worker's next line; 0 when it says what was expected. */
int expect_line(struct proc *p, const char *want);

/* Whether the worker's next line says `want` and comes within ms milliseconds. */
bool line_within(struct proc *p, const char *want, long ms);

/* Starts a worker (spawn_env) and waits until its stream exists (it then waits for go()): the one
 * way the subtests start a worker with extra environment. */
struct proc spawn_ready_env(const char *const *env, const char *priority, const char *policy,
                            const char *const *args);
struct proc spawn_ready(const char *priority, const char *policy, const char *const *args);

/* Lets a ready worker start its work. */
void go(struct proc *p);

/* Reads the worker's lines until it ends; the number in the last that matches format (one %ld),
 * or -1. */
long said(struct proc *p, const char *format);

/* Waits for the worker; its exit status, or 128 + signal. */
/* What a worker said at its end: its stream's time held on the host and suspensions. */
extern unsigned long long last_held_us, last_suspensions;
/* BOARD_WORKER_MARKERS=1: the worker's markers, commands and commands seen completed. */
extern unsigned long long last_markers, last_commands, last_completed, last_submitted;
/* Everything the worker said from there on, as it said it. */
extern char last_output[1024];

int finish(struct proc *p, int *priority);

struct kernel {
    int pid;
    int tag;
    uint64_t start, end, submit;
    int burst;       /* the tag's low bits: the burst's number (board_worker burst), or 0 */
    uint64_t waited; /* when its stream's last gate before it began the read that let it pass */
};
extern struct kernel *k;
extern size_t nk;

void read_trace(void);

int count_tag(int tag);

/*
 * The most kernels one process of a lower tag started while a kernel of tag waited between
 * reaching the runtime and starting. Once it was submitted its queue was active, and every
 * lower queue on the device, in any process, was suspended: only what each had in flight, at
 * most the window, could start ahead of it. Tags are priorities: 1 high, 2 normal, 3 low (4: a
 * high-priority process that is not the one measured, so not lower). Over the kernels of tag
 * submitted from `from` until `until`.
 */
int most_overtaking_within(int tag, uint64_t from, uint64_t until);

int most_overtaking(int tag);

/* most_overtaking burst by burst (the tag's kernels of one burst number): the median over the
 * bursts, and the most in any (*worst). */
int typical_overtaking(int tag, int *worst);

/* What is on the subtest's board: slots in use, of which records, and the unused queues the
 * records count in all. */
struct board_use {
    int slots, records;
    long unused;
};

struct board_use board_use(void);

/* The subtest's board, opened writable (the test plays a process that holds its lock); 0. */
int open_board(struct gp_board *b);

/* How often the queues of process pid on board b were suspended (their slots' count). */
uint64_t suspensions_of(struct gp_board *b, pid_t pid);

/* Slots in use on the subtest's board (0 when there is none). */
int slots_in_use(void);

extern const char *const high_bursts[];
extern const char *const normal_load[];
extern const char *const low_load[];

/* GPUPRIO_LEVEL as the workers get it. */
const char *level(void);

/* Two users without accounts: the tests run as root, which may become any uid. */
#define USER_A 4241u
#define USER_B 4242u
extern char conf[160], shared[160];

/* Whether a child of this process can become the tenants' users. */
bool can_become_others(void);

/* Copies from to to, with mode. */
void copy_file(const char *from, const char *to, mode_t mode);

/* The shared directory (root's, sticky, as the file requires), the simulated device shared by
 * every user, and the trace, the subtest's directory and the programs open to them. */
void tenants_setup(void);

/* The configuration file: the shared directory and text; NULL: no file. A fresh trace too. */
void write_conf(const char *text);

/* Opens user uid's board of the subtest's device for reading (its usual name, or the alternate
 * it uses where another user took that: board.h), path into path; -1 when there is none. */
int open_board_of(uid_t uid, char *path, size_t size);

/* Waits up to 10 s until user uid's board of the subtest's device holds a queue whose gate word
 * has one of the bits of gate (0: any queue). */
bool wait_for_queue_of(uid_t uid, uint64_t gate);

/* When tag's first kernel started and its last ended. */
void span_of(int tag, uint64_t *first, uint64_t *last);

/* An empty trace for the next run; with BOARD_TEST_DEBUG the last one is kept as trace.NAME. */
void next_trace(const char *kept_as);

/* The attacker: a third local user, admitted or not, with nothing but its own files. */
#define USER_C 4243u
/* A bystander, neither a victim nor the attacker: any user of the machine, running the tools. */
#define USER_D 4244u

/* Forks a child that becomes uid (0: stays root); 0 in the child. */
pid_t fork_as(uid_t uid);

/* ---- the gpuprio command (board_tools.c) ---- */

/* Whether text is one JSON value, an object or an array (top's answer), and nothing else. */
bool json_parses(const char *text, size_t n);

/* Whether text is a Prometheus text exposition (version 0.0.4) of what metrics says: HELP and
 * TYPE lines, each family's TYPE before its samples, samples with well-formed names, labels
 * (escapes: \\, \", \n) and values, every line ended; why not into *why. */
bool metrics_parse(const char *text, size_t n, const char **why);

/* Whether child ended: then reaped, its status in *status; *delay_ns its run-queue wait so far
 * (read before it is reaped, while its /proc entry stays). */
bool tool_ended(pid_t child, int *status, uint64_t *delay_ns);

extern char set_said[4096];      /* what the latest run of gpuprio set wrote, stdout and stderr */
extern uint64_t tool_slowest_ns; /* the longest run since tools_fail began (less CPU waits) */

/* A process of the attacker's whose board changes under it, which root's gpuprio set asks in
 * each round of tools_fail to lower its queues (it wrote through a mapping of the board: SIGBUS);
 * 0: none. Nobody applies the request, so set watches the board for its second. */
extern pid_t set_target;
extern int tool_runs;

/* gpuprio top --once --json and gpuprio metrics --once, by root and by user D (neither a victim
 * nor the attacker: anyone on the machine), and root's gpuprio set of set_target, rounds times:
 * how many runs failed (hung, slow, crashed, or said what does not parse). */
int tools_fail(int rounds);

/* What a run of the tool did: its output and errors, and how long it took. */
struct tool_run {
    bool ok;         /* it ended within the bound, with status 0, and within TOOL_PROMPT_NS */
    double seconds;  /* not counting its wait for a CPU (run_tool's) */
    char *out, *err; /* NUL-terminated, at most TOOL_OUT_MAX bytes each */
};
#define TOOL_OUT_MAX (16u << 20)

/* Runs `gpuprio ARGS` as uid (0: root) for at most bound seconds, keeping all it wrote. */
struct tool_run run_tool_kept(uid_t uid, const char *const *args, unsigned bound);

int occurrences(const char *text, const char *what);

/* Runs `gpuprio ARGS` as uid (0: root), killed after 20 s, what it wrote on stdout and stderr
 * into said: its exit status, or -1 (killed by a signal, or by the bound). */
int tool_status(uid_t uid, const char *const *args, char *said, size_t size);

/* ---- the subtests, by file (board_tests.def calls them) ---- */

/* board_boards.c */
void bursts_next_to(int others, const char *policy);
void log_info(void);
void kill_high(void);
/* kill_high's moments, at which a variant acts. */
enum kill_moment {
    KILL_BEFORE_LAUNCH, /* both processes run (ready), the high one not launched yet */
    KILL_HELD,          /* the high one's kernel launched: the low one is held behind it */
    KILL_KILLING,       /* the high one is about to be killed */
    KILL_ENDED,         /* the high one killed, and ended: the low one's time counts from the
                         * return (a variant may hold it until then) */
};
/* kill_high with both processes run as uid (0: as the test), calling at(moment, the high
 * process's pid, the low one's) at each moment (NULL: nothing). */
void kill_high_as(uid_t uid, void (*at)(enum kill_moment moment, pid_t high, pid_t low));
void kill_low(void);
void stop_high(void);
void churn(void);
void many_queues(void);
void full_of_dead(void);
void claim_left(void);
void lock_stuck(void);
/* board_gates.c */
void gate_deep(void);
void gate_capture(void);
void gate_shared(void);
void gate_sparse(void);
void gate_destroy_failed(void);
void gate_sticky(void);
void gate_sticky_null(void);
void exit_gates(void);
void stopped_owner(void);
void refused_gate(const char *how);
void retired_gate(const char *how, bool stop);
void inversion(void);
void inheritance(void);
/* board_watchdog.c */
void watchdog_next_to(bool other_user, bool higher, bool suspended);
void tenant_held(void);
/* board_tenants.c */
void tenant_two(void);
void tenant_cap(void);
void tenant_alter(void);
void tenant_admit(void);
void tenant_bad_conf(void);
void tenant_relist(void);
void tenant_root_view(void);
/* board_shares.c */
void share_weights(void);
void share_min(void);
void tenant_shares(void);
/* board_hostile.c */
void hostile_fifo(void);
void hostile_truncate(void);
void hostile_flood(void);
void hostile_squat(void);
void hostile_unlisted(void);
void hostile_mutate(void);
void hostile_set(void);
void hostile_links(void);
void hostile_dirflood(void);
void hostile_forged(void);
void hostile_wakes(void);
void hostile_rdlock(bool before_claim);

#endif /* GPUPRIO_BOARD_HARNESS_H */
