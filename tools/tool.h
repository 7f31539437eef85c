/*
 * tool.h - what the parts of the gpuprio command share: the subcommands' entry points and
 * help texts, the exit statuses, finding the preload libraries, reading the boards, and
 * printing what they hold (top's table and JSON, metrics' exposition format).
 *
 * The command is a thin layer over src/sched/board.h (the boards shared between processes) and
 * src/sched/priority.h (the priority scale): it holds no scheduling logic of its own.
 */
#ifndef GPUPRIO_TOOL_H
#define GPUPRIO_TOOL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "board.h"
#include "board_screen.h"
#include "xqueue.h"

/* Exit statuses of the command's own failures (run returns the command's status instead). */
/* set: no such process on any board; top, metrics: boards unreadable; metrics: cannot write */
#define GP_EXIT_FAILURE 1
#define GP_EXIT_USAGE 2       /* a bad option or argument (set, top, metrics) */
#define GP_EXIT_RUN_ERROR 125 /* run: the tool itself failed (like env and nice) */
#define GP_EXIT_CANNOT_EXEC 126
#define GP_EXIT_NOT_FOUND 127

/* What a subcommand's parse() returns besides an exit status (GP_EXIT_USAGE): go on, or stop
 * with status 0 because --help was printed. Neither is an exit status. */
enum gp_parsed { GP_PARSED_GO = 0, GP_PARSED_HELP = -1 };

/* Subcommands: argv[0] is the subcommand's name. They return the exit status. */
int gp_cmd_run(int argc, char **argv);
int gp_cmd_top(int argc, char **argv);
int gp_cmd_set(int argc, char **argv);
int gp_cmd_metrics(int argc, char **argv);
int gp_cmd_doctor(int argc, char **argv);
int gp_cmd_cdi(int argc, char **argv);

/* ---- shim_path.c: the preload libraries ---- */

struct gp_shims {
    char hip[PATH_MAX];  /* absolute path of libgpuprio-hip.so, or "" */
    char cuda[PATH_MAX]; /* absolute path of libgpuprio-cuda.so, or "" when not installed */
    char dir[PATH_MAX];  /* where they were looked for, for messages */
};

/*
 * Finds the libraries: in GPUPRIO_LIBRARY_DIR when set, else next to the tool (../lib when
 * installed, the build tree's when run from it). 0 (each path set if the file exists), or -ENOENT
 * / -ENAMETOOLONG with out->dir saying where they were looked for.
 */
int gp_shims_find(struct gp_shims *out);

/* ---- queues.c: what the boards hold ---- */

/* A command name from a board, cleaned (gp_utf8_clean): 15 bytes, each up to 3. */
#define GP_COMM_MAX (15 * 3 + 1)

/* One live queue on a board, copied out of its slot. */
/* Where a row comes from: a slot of a board, and its owner. */
struct gp_slot_id {
    char board[256]; /* the board file (as long as board.h's struct gp_board keeps it) */
    char key[64];    /* the device identity (its PCI bus id) */
    unsigned slot;   /* index on the board: with the owner's identity, the row's identity */
    uint32_t pid;
    uint64_t owner_start, incarnation;
    /* The slot's command name (15 bytes) with each byte that is not valid UTF-8 as U+FFFD (3
     * bytes; gp_utf8_clean): what every output shows, so also what rows are sorted and told
     * apart by (two names that differ only in such bytes are one series for metrics). */
    char comm[GP_COMM_MAX];
    int32_t device; /* the owner's device index */
    uint32_t uid;   /* the board's owner (the user the processes run as), as checked at open */
};

struct gp_queue_row {
    struct gp_slot_id id;
    uint64_t stream, thread;
    int32_t priority; /* as other users take it: at most the cap of its user */
    bool capped;      /* the configuration file caps its user (gp_conf_file.h), at cap */
    int cap;
    bool active;
    uint64_t gate;
    bool mirrored; /* its owner's gates wait on a private copy of its line (devgate.h) */
    uint64_t submitted, completed, held_ns, suspensions;
    double submitted_per_s; /* since the previous sample of the same queue; -1 when unknown */
    struct xq_cus cus;
    /* The longest GPU time of a command it ran recently (board.h's longest_us), in microseconds,
     * at most GP_SLOT_LONGEST_MAX_US; 0 when not known. */
    uint32_t longest_us;
};

/* A process's record on a board (one per process and board): its queues there that never ran
 * (nor were named), which hold no slot and so have no row. */
struct gp_record_row {
    struct gp_slot_id id;
    uint32_t unused_queues;
    /* Its queues there that joined when the board was full: scheduled within the process only,
     * with no slot and so no row either. */
    uint32_t unslotted_queues;
    uint8_t mps;       /* enum gp_record_mps */
    uint8_t mps_share; /* the share of the device MPS lets it use, percent; 0: all */
    uint16_t mps_sms;  /* and the SMs that is */
    /* Its long GEMMs on the device (board.h's struct gp_record_gemm), each at most
     * GP_RECORD_GEMM_MAX: calls sliced, their slices, calls left whole by reason. */
    uint64_t gemm_sliced, gemm_slices, gemm_whole[GP_RECORD_GEMM_WHOLE_COUNT];
};
/* The labels of GP_RECORD_GEMM_WHOLE, by reason ("small", ...). */
extern const char *const gp_gemm_whole_labels[GP_RECORD_GEMM_WHOLE_COUNT];
/* a + b, at most GP_RECORD_GEMM_MAX. */
uint64_t gp_gemm_sum(uint64_t a, uint64_t b);
/* GEMM counts in words, after lead: "GEMMs 2 sliced (8 slices), 13 left whole: 12 unsupported,
 * 1 capturing" (each count at most GP_RECORD_GEMM_MAX); false, and "", when all are 0. */
bool gp_gemm_text(char *buf, size_t size, const char *lead, uint64_t sliced, uint64_t slices,
                  const uint64_t whole_by[GP_RECORD_GEMM_WHOLE_COUNT]);

struct gp_sample {
    struct gp_queue_row *rows;
    size_t n, cap;
    struct gp_record_row *records; /* sorted by device, then pid */
    size_t nrec, caprec;
    uint64_t taken_ns; /* CLOCK_MONOTONIC */
    unsigned boards;   /* boards read */
};
/* The records of s sorted by their owner (pid, image and board), for gp_sample_record: a binary
 * search per row, where a pass over every record per row made a sample of many rows cost their
 * number squared (an attacker's boards held a tool for seconds to minutes). free() it; NULL
 * when there are none or memory ran out. */
const struct gp_record_row **gp_sample_owners(const struct gp_sample *s);
/* The record of the process that owns row r on r's board, found in owners (gp_sample_owners;
 * NULL: a pass over every record); NULL when it has none there (a full board, or a library
 * before records). */
const struct gp_record_row *gp_sample_record(const struct gp_sample *s,
                                             const struct gp_record_row **owners,
                                             const struct gp_queue_row *r);

/*
 * The board directories a tool reads, each with what its listings keep from listing to listing
 * (board_screen.h): the caller's board directory (gp_board_dir(): the shared one for a user the
 * administrator's file admits, else GPUPRIO_BOARD_DIR or /dev/shm), and for root, where the file
 * names a shared directory that does not admit root, that one too, first: the administrator sees
 * and steers every admitted user's queues, and its own and every other user's boards outside it.
 * Start it with gp_tool_view_init, free it with gp_tool_view_free.
 */
#define GP_TOOL_DIRS 2
struct gp_tool_view {
    unsigned n;
    const char *dir[GP_TOOL_DIRS];
    bool shared[GP_TOOL_DIRS]; /* the administrator's shared directory: every user's boards there,
                                * of admitted users only */
    struct gp_screen screen[GP_TOOL_DIRS];
    unsigned at;                  /* the directory being listed (gp_tool_view_list) */
    char names[2 * PATH_MAX + 8]; /* the directories, for messages: "DIR" or "DIR and DIR" */
};
/* writable: boards are opened for writing too (gpuprio set). */
void gp_tool_view_init(struct gp_tool_view *v, bool writable);
void gp_tool_view_free(struct gp_tool_view *v);
/* Lists every directory of the view for the boards the caller may read (or write), calling fn
 * with each board taken, as gp_screen_list does. 0, or the first negative errno value (a
 * missing directory is no boards). */
int gp_tool_view_list(struct gp_tool_view *v, bool to_write,
                      int (*fn)(struct gp_board *b, void *arg), void *arg);

/*
 * Reads every board in the view's directories (the user's; every user's as root, or on the
 * shared directory) that its screens take (board_screen.h: the rules the library's readers apply: a
 * board's name agrees with its owner, a file hard-linked under many names is read once, a user
 * counts once against the limits however many files it makes): one row per live slot whose owner is
 * alive, sorted by device, priority (highest first), pid, stream and thread, then by the other
 * labels metrics gives them (so rows of the same labels are next to each other), and one record row
 * per process record whose owner is alive, sorted by device and pid, then so too. Files refused are
 * said on stderr as the screen says (once each, a few per owner), and skipped; the view remembers
 * them from sample to sample. 0, or a negative errno value (the directory cannot be read; a missing
 * directory is no boards).
 */
int gp_sample_take(struct gp_sample *s, struct gp_tool_view *view);
/* gp_sample_take for a command: a directory that cannot be read is reported on stderr as
 * "gpuprio COMMAND: ..."; 0 or GP_EXIT_FAILURE. */
int gp_sample_or_report(struct gp_sample *s, struct gp_tool_view *view, const char *command);
/* Sets each row's submitted_per_s from the same queue's row in prev (-1 where it has none). */
void gp_sample_rates(struct gp_sample *cur, const struct gp_sample *prev);
void gp_sample_free(struct gp_sample *s);

/* User names by uid, each looked up once per cache (a sample's printing), for every user the
 * sample has: root reading every device reads up to GP_SCREEN_USERS users of each, so a fixed
 * cache (33) left the others looked up for every row and every metrics family. A uid without a
 * name (a container without the user in /etc/passwd) is its number, as ls shows it. Start it
 * zeroed, free it with gp_users_free. */
struct gp_user;
struct gp_users {
    struct gp_user *table; /* by uid, open addressing, at most half full */
    size_t cap, n;
    char spare[64]; /* out of memory: looked up each time */
};
/* uid's name, valid until the next call. */
const char *gp_user_name(struct gp_users *u, uint32_t uid);
void gp_users_free(struct gp_users *u);

/* The uid whose boards the tool looks at: the caller's, or every user's ((uid_t)-1) as root, and
 * (unless it is to write them) on the shared board directory (gp_conf_file.h). */
uid_t gp_tool_board_uid(bool to_write);

/* ---- top_format.c: printing rows ---- */

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0: strict, as scrapers check it (no
 * overlong forms, surrogates, or code points above U+10FFFF). */
size_t gp_utf8_len(const unsigned char *s);
/* text into out (size bytes, NUL-terminated, cut only between characters) with each byte that
 * does not start a valid UTF-8 sequence replaced by U+FFFD. */
void gp_utf8_clean(char *out, size_t size, const char *text);
/* Whether the character at s, of n bytes (gp_utf8_len's; 0: an invalid byte), could steer a
 * terminal or what it shows: a C0 or C1 control (U+009B is CSI, as is a lone byte 0x9b to a
 * terminal in 8-bit mode), DEL, or a bidirectional embedding, override or isolate (U+202A to
 * U+202E, U+2066 to U+2069), which reorders the rest of the line. */
bool gp_char_steers(const unsigned char *s, size_t n);
/* A name from a board for a terminal, into out (size bytes, NUL-terminated, cut only between
 * characters): each character gp_char_steers as '?'. */
void gp_printable(char *out, size_t size, const char *in);

/* A duration for a person: "0", "850us", "12.3ms", "4.56s", "12m03s". */
void gp_duration_text(char *buf, size_t size, uint64_t ns);
/* "active" or "idle" */
const char *gp_row_state(const struct gp_queue_row *r);
/* The scheduler's decision for the queue: "suspended", "throttled", "tracked" or "none". */
const char *gp_row_gate(const struct gp_queue_row *r);
/* Where the queue is held back: 2 when on the device by gates (Level 2), else 1 (on the host). */
int gp_row_level(const struct gp_queue_row *r);
/* Whether the queue is held back for another's sake (suspended or throttled): a request of that
 * other queue waits for the command of it that runs, whole, so its longest command is a floor. */
bool gp_row_lower(const struct gp_queue_row *r);
/* The line (or lines, wrapped at width columns; 0: one line) naming every process with its
 * queues shown and its unused ones; returns how many lines it printed. */
size_t gp_print_processes(const struct gp_sample *s, size_t width);
/* The table top shows, at most max_rows rows (0: all); all: with a row per process and device
 * for its unused queues. */
void gp_print_table(const struct gp_sample *s, size_t max_rows, bool all);
/* One JSON document: an array with one object per row (and per record with unused queues, with
 * all). */
void gp_print_json(const struct gp_sample *s, bool all);

/* ---- metrics_format.c: the Prometheus text exposition format ---- */

/*
 * Writes every family of `gpuprio metrics` (docs/cli.md) for s to out, in the text exposition
 * format 0.0.4. Write errors are left for the caller to find (ferror, fflush).
 */
void gp_metrics_write(FILE *out, const struct gp_sample *s);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gp_tool_now_ns(void);
/* Parses a number of seconds (fractions allowed) from min to max into *out; false when text is
 * anything else. */
bool gp_parse_seconds(const char *text, double min, double max, double *out);

#endif /* GPUPRIO_TOOL_H */
