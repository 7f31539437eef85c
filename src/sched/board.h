/*
 * board.h - the board: one shared-memory segment per user and device, through which the
 * processes of that user schedule their queues on that device together (docs/board.md). No
 * daemon: the first process to need a board creates it.
 *
 * A board is a file, <dir>/gpuprio-<uid>-v<version>-<key> (dir: GPUPRIO_BOARD_DIR, default
 * /dev/shm; the version is GP_BOARD_VERSION, so that a board left by another gpuprio version,
 * which nothing removes, never stands in the way of this one; key:
 * the device's stable identity, its PCI bus id, with characters other than letters, digits,
 * '.', '_' and '-' replaced by '_'), of exactly sizeof(struct gp_board_file) bytes, mode 0600,
 * owned by the user. It is opened with O_NOFOLLOW and checked (owner, mode, size, magic,
 * version, layout) before it is mapped and used; anything else is refused with one message.
 * A new board is built in a private temporary file and linked into place, so nobody ever sees
 * half of one.
 *
 * One slot per queue. A process claims free slots for its queues; the slot holds the queue's
 * scheduling state (struct xq_state: the gate word, priority, activity, counters), which the
 * owner's threads use directly. A decision is made by whichever process changes something
 * (a queue becoming active or idle, a priority, a queue coming or going): it takes the board's
 * lock, runs the policy over every live slot and sets the decision bits in every slot's gate,
 * its own and other processes' alike. Suspending another process's queue is one atomic store
 * in its gate, so no lower-priority command anywhere is admitted after a higher-priority
 * queue became active. Then the decider bumps the board's sequence word (a futex) and wakes
 * every process waiting on it, so threads held in other processes look at their gates again.
 *
 * Besides its queues' slots, a process has one record slot on each board it uses (claimed when it
 * joins the board): no queue's, never decided on, it says that the process is there even when
 * none of its queues ran yet, counts its queues on the device that never joined scheduling, and
 * those that joined when the board had no free slot left (so `gpuprio top` and metrics can show
 * both without a slot each), and carries the process-wide priority
 * requests of `gpuprio set PID PRIORITY` to a process whose queues hold no slot.
 *
 * Slots of dead processes (killed, crashed) are reclaimed by whoever notices: a slot names
 * its owner by pid, process start time and a random incarnation number of the library image
 * (so a pid reused by another process, or the same process after exec, is not its owner).
 *
 * Everything a tool needs is here too: tools/gpuprio reads boards for `top` and asks owners
 * to change priorities (`set`) through a slot's request words.
 */
#ifndef GPUPRIO_BOARD_H
#define GPUPRIO_BOARD_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "devgate.h"
#include "xqueue.h"

#define GP_BOARD_MAGIC UINT64_C(0x64726f626f697270) /* "prioboard", little-endian, truncated */
#define GP_BOARD_VERSION 4u
#define GP_BOARD_SLOTS 512u
#define GP_BOARD_KEY_MAX 64

/* A slot's life: free -> claimed (its owner fills it in) -> live (a queue's) or process (the
 * owner's record) -> free. The owner word holds the owner's pid and the state together, so a
 * slot is claimed with one compare-and-swap. */
enum gp_slot_state {
    GP_SLOT_FREE = 0,
    GP_SLOT_CLAIMED = 1,
    GP_SLOT_LIVE = 2,
    /* The owner's record on this board (see above): decisions skip it; liveness is judged as for
     * a live slot. Libraries before it took it for a slot being filled in: harmless. */
    GP_SLOT_PROCESS = 3,
};
#define GP_SLOT_OWNER(word) ((uint32_t)((word) >> 32))
#define GP_SLOT_STATE(word) ((uint32_t)(word))
/* Filled in and owned by a running process (a queue's slot or a record), as opposed to free or
 * being filled in: its owner is judged alive or dead by its identity. */
#define GP_SLOT_PUBLISHED(word)                                                                    \
    (GP_SLOT_STATE(word) == GP_SLOT_LIVE || GP_SLOT_STATE(word) == GP_SLOT_PROCESS)
/* A record's st.priority until a process-wide request was applied (not a valid priority). */
#define GP_RECORD_NO_PRIORITY INT32_MIN

/* The request word's flag: the request is for every queue of the process, and its queues to
 * come (gpuprio set PID PRIORITY), not only this one. */
#define GP_REQUEST_PROCESS (UINT32_C(1) << 31)

/*
 * In a record: what became of the owner's long GEMMs on the device (docs/design.md, "Long
 * kernels: GEMM slices"): calls issued as slices, the slices, and calls left whole although a
 * higher priority would wait for them, by reason, those a user can act on or must know of (not
 * those left whole only because no higher priority was there to wait, nor short ones).
 * X(name, label, what a user reads): name is the reason's in gemm_plan.h's GEMM_WHOLE_REASONS,
 * label its name in `gpuprio top --json` and `gpuprio metrics`. The order is the file's layout.
 * Readers take the numbers as any other of a board: untrusted, clamped, never an index.
 */
#define GP_RECORD_GEMM_WHOLE(X)                                                                    \
    X(SMALL, "small", "too small to cut into slices that keep the device busy")                    \
    X(CAPTURING, "capturing", "captured into a graph, replayed whole")                             \
    X(UNSUPPORTED, "unsupported", "of a form that does not slice exactly")                         \
    X(CHECK_FAILED, "check_failed", "the library refused the algorithm on the call or a slice")
enum gp_record_gemm_whole {
#define GP_RECORD_GEMM_ENUM(name, label, what) GP_RECORD_GEMM_##name,
    GP_RECORD_GEMM_WHOLE(GP_RECORD_GEMM_ENUM)
#undef GP_RECORD_GEMM_ENUM
        GP_RECORD_GEMM_WHOLE_COUNT
};
struct gp_record_gemm {
    _Atomic uint64_t sliced; /* calls issued as slices */
    _Atomic uint64_t slices; /* the slices they were issued as */
    /* Calls left whole, by reason (modulo 2^32). */
    _Atomic uint32_t whole[GP_RECORD_GEMM_WHOLE_COUNT];
};
/* The most a reader takes a count of a record for (2^53 - 1: exact in a JSON number and in a
 * Prometheus sample); more is clamped to it, as are sums over records. */
#define GP_RECORD_GEMM_MAX ((UINT64_C(1) << 53) - 1)

/* The most a slot's longest_us says (an hour): the owner stores no more, and readers take any
 * greater number its owner wrote for it. */
#define GP_SLOT_LONGEST_MAX_US 3600000000u
/* ns as a slot's longest_us: rounded up (a command of 1 ns is not "none"), at most the maximum. */
static inline uint32_t gp_slot_longest_us(uint64_t ns)
{
    uint64_t us = ns / 1000 + (ns % 1000 != 0);
    return us < GP_SLOT_LONGEST_MAX_US ? (uint32_t)us : GP_SLOT_LONGEST_MAX_US;
}

struct gp_board_slot {
    _Atomic uint64_t owner; /* pid << 32 | enum gp_slot_state; 0 when free */
    /* The owner's identity, read by other processes while a slot changes hands (atomic). */
    _Atomic uint64_t owner_start; /* start time (clock ticks after boot, /proc/PID/stat) */
    _Atomic uint64_t incarnation; /* random per library image: a pid after exec is not it */
    uint64_t stream;              /* the application's stream handle, as in gpuprio_queue_stats */
    uint64_t thread;              /* the thread of a per-thread queue, or 0 */
    int32_t device;               /* the owner's device index (indices differ between processes) */
    union {
        uint32_t flags; /* in a queue's slot: the stream's creation flags */
        /* In a record: the owner's queues on this device that joined scheduling when the board
         * was full, which hold no slot and are scheduled within the process only (0 in records
         * of libraries before it, which did not count them). */
        _Atomic uint32_t unslotted_queues;
    };
    char comm[16]; /* the owner's command name */
    /* Priority requests (gpuprio set): the priority, then request_seq is incremented (low 31
     * bits) with GP_REQUEST_PROCESS or not; the owner applies each new sequence number once. */
    _Atomic int32_t request;
    _Atomic uint32_t request_seq;
    union {
        /* The queue's scheduling state (see xqueue.h); in a record, only st.priority is used: the
         * process-wide priority last requested and applied, or GP_RECORD_NO_PRIORITY. */
        struct xq_state st;
        /* In a record, the bytes of st's counters, unused there, hold the owner's GEMM counts on
         * the device (0 in records of libraries before them, which cleared them). */
        struct {
            uint8_t record_head[16]; /* st.gate, st.priority, st.active */
            struct gp_record_gemm gemm;
        };
    };
    _Atomic uint32_t pid_ns; /* the owner's pid namespace (inode): pids of another are not judged */
    union {
        /* In a record: the owner's queues on this device that never joined scheduling (created,
         * no command yet, not named), which hold no slot. */
        _Atomic uint32_t unused_queues;
        /* In a queue's slot: the longest GPU time of a command it ran recently, which a higher
         * priority arriving meanwhile waits for (xc_cost.h's struct xc_longest), in microseconds
         * (gp_slot_longest_us); 0 when none was learned, and from libraries before it (which
         * cleared these bytes at a claim, and read them in records only). */
        _Atomic uint32_t longest_us;
    };
    /* The compute units the stream's kernels may use (xqueue.h's struct xq_cus). In a record:
     * cu_usable is the SMs MPS lets the owner use when it limits it (xqueue.h's struct xq_mps),
     * else 0, and the others are 0. */
    uint16_t cu_usable, cu_total;
    uint8_t cu_mask; /* enum xq_cu_mask */
    /* In a record: whether the owner is an MPS client on the device (enum gp_record_mps), and the
     * share of the device MPS lets it use, in percent (0: all). 0 in a queue's slot, and in
     * records of libraries before them (unknown). */
    uint8_t mps, mps_share;
    /* How the owner proves it lives (enum gp_liveness_lock, gp_board_owner_alive). */
    _Atomic uint8_t liveness_lock;
};

/* A slot's liveness_lock: which open-file-description lock its owner holds on the slot's first
 * byte for as long as it owns the slot. Only a write lock proves it: anyone who can read the
 * board can take read locks. Any other value is judged as GP_LIVENESS_PID. */
enum gp_liveness_lock {
    GP_LIVENESS_PID = 0,        /* none (refused, or a library before the locks): judged by pid */
    GP_LIVENESS_READ_LOCK = 1,  /* a read lock, from a library before write locks */
    GP_LIVENESS_WRITE_LOCK = 2, /* a write lock, taken through the owner's O_RDWR descriptor */
};

enum gp_record_mps { GP_MPS_UNKNOWN = 0, GP_MPS_NOT_CLIENT = 1, GP_MPS_CLIENT = 2 };

struct gp_board_header {
    uint64_t magic;
    uint32_t version;
    uint32_t header_size; /* sizeof(struct gp_board_header) */
    uint32_t slot_size;   /* sizeof(struct gp_board_slot) */
    uint32_t slot_count;  /* GP_BOARD_SLOTS */
    uint32_t uid;
    uint32_t reserved0;
    char key[GP_BOARD_KEY_MAX]; /* the device identity, as given (not sanitized) */
    /* Changes on every state change: processes wait on it (a futex) to look at their gates
     * again. */
    _Atomic uint32_t seq;
    /* The decision lock's futex: bumped by an unlock that finds lock_sleepers non-zero. */
    _Atomic uint32_t lock_wake;
    /* The decision lock: its holder (GP_BOARD_LOCK_HOLDER), 0 when free. The holder names a
     * library image, not only a process, so a second thread of the holder's process waits like
     * any other process's, and the image that a pid exec'd away from is seen gone. */
    _Atomic uint64_t lock;
    _Atomic uint32_t lock_sleepers; /* threads asleep on lock_wake (a dead one stays counted) */
    /* Every slot ever claimed is below it: scans stop there, so they cost what the most queues
     * that ran at once take, not the board's size. Only grows. */
    _Atomic uint32_t slot_limit;
    /* For other users reading this board (gp_board_shared): the highest priority of its live
     * queues and of its active ones (GP_BOARD_SUMMARY), as its last decision saw them, and a
     * futex bumped whenever that changes, which their listeners wait on. Only the maxima matter
     * to a decision elsewhere: a queue is held by any higher one that is there or active. */
    _Atomic uint64_t summary;
    _Atomic uint32_t summary_seq;
    uint8_t reserved[124];
};
#define GP_BOARD_SUMMARY(top_live, top_active)                                                     \
    ((uint64_t)(uint32_t)(top_live) << 32 | (uint32_t)(top_active))
/* The lock word of the library image with this pid and incarnation (gp_board_owner). The
 * incarnation is odd, so the word is never 0. */
#define GP_BOARD_LOCK_HOLDER(pid, incarnation) ((uint64_t)(pid) << 32 | (uint32_t)(incarnation))
#define GP_BOARD_LOCK_PID(word) ((uint32_t)((word) >> 32))

/* Where the gate lines start: on a page of their own, so that each process can register them
 * with its runtime (devgate.h) without the slots. */
#define GP_BOARD_GATES_OFFSET 73728u

struct gp_board_file {
    struct gp_board_header h;
    struct gp_board_slot slots[GP_BOARD_SLOTS];
    uint8_t to_gates[GP_BOARD_GATES_OFFSET - sizeof(struct gp_board_header) -
                     GP_BOARD_SLOTS * sizeof(struct gp_board_slot)];
    /* Level 2: slot i's gate is gates[i] (opened by whoever claims the slot). */
    struct dg_line gates[GP_BOARD_SLOTS];
};

/* The first page of the file: the header's futex words (seq, summary_seq) are there. */
#define GP_BOARD_HEADER_PAGE 4096u

/*
 * An open board: a mapping of the file (our own user's boards, which only our user can change),
 * or a private copy of it (gp_board_open_copy: every board this process does not write), read
 * again with gp_board_read. Another user can truncate its own board at any moment, and a load
 * from a mapping past the file's end kills the reader with SIGBUS: nothing of a copy's file is
 * ever loaded through a mapping.
 */
struct gp_board {
    struct gp_board_file *f; /* the mapping, or the copy */
    /* The header as the file's owner sees it, for futex calls only: f's for a mapping; for a
     * copy, a read-only mapping of the first page that only the kernel touches (a futex call on
     * a page its owner truncated away fails with EFAULT, it does not kill us). */
    struct gp_board_header *live;
    bool copy;
    int fd;    /* the file, kept open for its slots' liveness locks (gp_board_owner_alive) */
    uid_t uid; /* its owner (the file's, which its header must agree with) */
    /* gp_board_open: the uid that owns the file at this user's usual path when it is not this
     * user (another user took the name first; we use an alternate name), else -1. */
    int64_t squatter;
    char path[256];
    dev_t dev; /* the file's identity, to tell whether path still names it */
    ino_t ino;
    /* 0, or the board is given up (gp_board_given_up) and this is when gp_board_lock looks at
     * the lock again. */
    _Atomic uint64_t retry_at_ns;
};

/* A queue's identity on its device, the same in every process and unique across the users'
 * boards: its board's owner and its slot. */
#define GP_BOARD_QUEUE_IDENTITY(uid, slot) ((uint64_t)(uid) << 32 | (uint32_t)(slot))

/* The gate line of slot s of board b. */
static inline struct dg_line *gp_board_gate(const struct gp_board *b, const struct gp_board_slot *s)
{
    return &b->f->gates[s - b->f->slots];
}

/* The board directory: the configuration file's shared one (gp_conf_file.h) where it admits the
 * user, else GPUPRIO_BOARD_DIR, or /dev/shm. */
const char *gp_board_dir(void);
/* Whether the board directory is the shared one: boards there are readable by every user (mode
 * 0644), and each user's processes read the other admitted users' boards. */
bool gp_board_shared(void);
/*
 * What lets another user split the calling user's processes in the board directory dir (rename
 * or remove their boards, so that later processes meet on another), in words, into what: owned
 * by a user other than the caller and root, writable by group or others without the sticky bit;
 * and a relative path (each working directory its own boards). "" when none of these. 0, or a
 * negative errno value (dir cannot be examined: what stays "").
 */
int gp_board_dir_exposure(const char *dir, char *what, size_t size);
/*
 * The filesystem dir is on, in a word ("tmpfs", "hugetlbfs", "ext4", ... or "unknown" for a type
 * this does not name), into name; and whether the runtimes can register a shared mapping of a
 * file there for the device to read (Level 2's gates): only on tmpfs and hugetlbfs, as Linux
 * refuses long-term pinning of other files' pages. 0, or a negative errno value (dir unreadable).
 */
int gp_board_dir_fs(const char *dir, char *name, size_t size, bool *registrable);
/* The board's path for the calling user and device key, into buf. 0 or -ENAMETOOLONG. */
int gp_board_path(const char *key, char *buf, size_t size);

/*
 * Opens the calling user's board for device key, creating it if there is none. 0, or a
 * negative errno value with *why saying in words what was wrong (a symlink, a wrong size or
 * version, garbage...), for the caller's one warning.
 *
 * Where another user's file has taken the board's usual name (made before this user's first
 * process: the sticky directory keeps this user from removing it), the user's processes meet on
 * a board under an alternate name instead, the usual one followed by '+' and 16 random
 * hexadecimal digits, which nobody can guess before it exists and which other users' readers
 * take too (b->squatter says whose the file is). Once one exists, it is used first, whatever
 * became of the usual name, so that all of the user's processes meet on one board.
 */
int gp_board_open(const char *key, struct gp_board *b, const char **why);
/* Whether b is the board the user's processes meet on: its usual name, or the first (in name
 * order) of the user's boards under an alternate name. Two processes that made one each at the
 * same moment may each have taken its own: the one that is not first leaves it for the first
 * (sched_board.c, once its record is claimed). */
bool gp_board_first(const struct gp_board *b);
/* Opens an existing board file, mapped (tools). writable: for priority requests. Only for
 * boards whose owner the caller trusts not to truncate them under it: else gp_board_open_copy. */
int gp_board_open_file(const char *path, bool writable, struct gp_board *b, const char **why);
/*
 * Opens any board for reading without ever mapping its slots: b->f is a private copy, made at
 * open (the file checked first as gp_board_open_file does: type, owner, mode, size, header) and
 * again by each gp_board_read. The open never blocks (O_NONBLOCK: a FIFO at the path is refused,
 * not waited on) and never follows a link. 0, or a negative errno value with *why.
 */
int gp_board_open_copy(const char *path, struct gp_board *b, const char **why);
/* The same, opened for writing too (gpuprio set: the caller's own boards, or root's), for
 * gp_board_request_copy. */
int gp_board_open_copy_writable(const char *path, struct gp_board *b, const char **why);
/* Reads b's file again into `into` (a copy's f, or a spare of the same size): the header, then
 * the slots below its slot_limit and their gate lines, the bounded work a scan needs. 0, or a
 * negative errno value with *why when the file is no longer a board (its owner shrank, rewrote
 * or replaced the header): the caller drops it. A field the owner writes while it is read may
 * be torn: everything in a copy is a number to check, never trusted. */
int gp_board_read(const struct gp_board *b, struct gp_board_file *into, const char **why);
void gp_board_close(struct gp_board *b);

/*
 * Calls fn for every board file in dir that belongs to uid (every user's when uid is
 * (uid_t)-1), in name order; stops when fn returns non-zero and returns that.
 */
int gp_board_list(const char *dir, uid_t uid, int (*fn)(const char *path, void *arg), void *arg);
/* An entry of a board directory, as its listing gives it: what a reader can tell of a file before
 * it looks at it (board_screen.h skips a name of a file it knows without an lstat). */
struct gp_board_entry {
    const char *path;
    dev_t dev; /* the directory's file system (0: unknown) */
    ino_t ino; /* the inode number the directory gives for the name (d_ino) */
};
/* gp_board_list, with each name's entry. */
int gp_board_list_entries(const char *dir, uid_t uid,
                          int (*fn)(const struct gp_board_entry *e, void *arg), void *arg);
/*
 * A listing of every user's board names in dir in steps, in the order the directory gives them
 * (not sorted, which needs every name first): each step reads at most a given number of entries,
 * whatever they are named, so that a directory of any size costs a reader bounded work per step
 * (tenants.c). A name added or removed during the listing may or may not be given; every other
 * name is given once.
 */
struct gp_board_cursor {
    DIR *d; /* NULL: closed */
    dev_t dev;
    char dir[PATH_MAX];
};
/* Opens the listing: 0 or -errno. */
int gp_board_cursor_open(struct gp_board_cursor *c, const char *dir);
/* Calls fn for each board name among the next `budget` entries of the directory (fn returns 0, or
 * a negative errno value, which ends the listing). 0: entries are left for the next step; 1: the
 * directory is listed to its end; else a negative errno value. The cursor is closed unless 0. */
int gp_board_cursor_step(struct gp_board_cursor *c, unsigned budget,
                         int (*fn)(const struct gp_board_entry *e, void *arg), void *arg);
void gp_board_cursor_close(struct gp_board_cursor *c);

/* The calling process's identity as slots record it. */
struct gp_board_owner {
    uint32_t pid;
    uint32_t pid_ns;
    uint64_t start;
    uint64_t incarnation;
    char comm[16];
};
/* This library image's identity (computed once; again in the child of fork). */
const struct gp_board_owner *gp_board_self(void);
void gp_board_self_reset(void);
/*
 * Whether a live slot's owner still runs. An owner holds a lock on its slot's first byte (an
 * open file description's lock on the board file, taken through b->fd) for as long as it owns
 * the slot, which the kernel drops when the process dies or execs (the file is close-on-exec): a
 * slot that says its owner holds a write lock is alive exactly while someone holds one, from any
 * pid namespace (read locks of others prove nothing: any reader of the file can take them); one
 * that says a read lock (a library before write locks) while anyone holds any lock. Otherwise (a
 * library before the locks, a lock the kernel refused, or a value it does not know) the owner is
 * judged by pid and start time, which only its own pid namespace can do: from another, it is
 * alive on our own board (never freed), and dead on a copy (another user's board, a tool's
 * reading: it could be forged). This image's own slots are alive; those of an earlier image of
 * this pid are not.
 */
bool gp_board_owner_alive(const struct gp_board *b, const struct gp_board_slot *s);
/*
 * Whether the pid a live slot names is the process it says it is, as far as this reader can
 * tell, for the readers that name processes by pid (gpuprio top, metrics, set): of this pid
 * namespace, the pid must run, as the board's owner (its real or effective uid), since the slot's
 * start time. Any user can write any pid into its own board, and keep the slot alive with a lock
 * of its own: a slot that names a process its board's owner does not own is not that process's.
 * A slot of another pid namespace has nothing here to be checked against: true (its owner must
 * still hold its lock to be alive at all, gp_board_owner_alive).
 */
bool gp_board_slot_pid_true(const struct gp_board *b, const struct gp_board_slot *s);
/* Whether slot s is of the process pid of this pid namespace (gpuprio set PID): its owner alive,
 * and the pid true (above). */
bool gp_board_slot_is(const struct gp_board *b, const struct gp_board_slot *s, uint32_t pid);

/* How many slots from the first a scan must look at (slot_limit, trusted only up to the
 * board's size). */
static inline unsigned gp_board_copy_slots(const struct gp_board_file *f)
{
    uint32_t n = atomic_load(&((struct gp_board_header *)&f->h)->slot_limit);
    return n < GP_BOARD_SLOTS ? n : GP_BOARD_SLOTS;
}
static inline unsigned gp_board_slots_used(const struct gp_board *b)
{
    return gp_board_copy_slots(b->f);
}

/* Claims a free slot for the calling process and fills in its identity; NULL when the board
 * is full. The slot is not yet live: fill it in, then gp_board_publish (a queue's slot) or
 * gp_board_publish_record (the process's record). Its liveness lock is taken right after the
 * claim, before anything else is written. */
struct gp_board_slot *gp_board_claim(struct gp_board *b);
/* Claiming, filling in and freeing take microseconds: a slot claimed this long by the same owner
 * word, its liveness lock held by nobody, was left so by a process that died. */
#define GP_BOARD_CLAIM_MAX_NS 500000000ull
/*
 * Whether the process that claimed slot s (being filled in or freed) is gone. Its identity in the
 * slot is written after the claim, so it may still be the previous owner's: the claimer is judged
 * by the slot's liveness lock, which it takes right after claiming, and by its pid. Alive while
 * anyone holds a write lock on it. A read lock (a library before write locks, or any reader of the
 * file) is judged by the pid where the slot says it is of this namespace. Otherwise gone once no
 * write lock was held while the slot stayed claimed by the same owner word for
 * GP_BOARD_CLAIM_MAX_NS (claimed_ns: how long the caller has seen it so, 0 when it cannot tell),
 * whatever the pid says (a killed claimer not yet reaped, its pid reused, or of another pid
 * namespace), or when its pid no longer runs in this pid namespace (a zombie included), where the
 * slot says it is of this namespace.
 */
bool gp_board_claimer_gone(const struct gp_board *b, const struct gp_board_slot *s,
                           uint64_t claimed_ns);
void gp_board_publish(struct gp_board *b, struct gp_board_slot *s);
void gp_board_publish_record(struct gp_board *b, struct gp_board_slot *s);
/* Frees a slot (the caller's own, or a dead owner's that it checked). */
void gp_board_free(struct gp_board *b, struct gp_board_slot *s);

/*
 * The decision lock, exclusive between every thread of every process. 0, or -ETIMEDOUT when a
 * live holder kept it for too long (the board is then given up). A holder found gone (its
 * process dead, or an earlier image of this pid, before an exec) is replaced. On a board given
 * up it fails at once, except for one look per GP_BOARD_RETRY_NS, which takes the lock (and the
 * board back) if it is free or its holder gone, and never waits.
 */
int gp_board_lock(struct gp_board *b);
/* Whether b is given up: its lock was held too long by a live process (stopped while it held it,
 * say), and this process goes on without it until a look finds the lock free. */
bool gp_board_given_up(const struct gp_board *b);
void gp_board_unlock(struct gp_board *b);
/* What the calling thread's latest gp_board_lock waited for: how long, and the holder's pid when
 * the wait began (both 0: the lock was free). For GPUPRIO_LOG=debug reports. */
struct gp_board_wait {
    uint64_t ns;
    uint32_t holder_pid;
};
struct gp_board_wait gp_board_last_wait(void);

/*
 * The last process to leave a board removes its file (board.md, "The file"), so that nothing is
 * left behind once nobody uses the device. Both calls need the lock. gp_board_remove_unused
 * unlinks the file when no slot is in use and its path still names it; true when it did. A
 * process that joins checks gp_board_linked once it holds a slot (its record), and opens the
 * board again if the file was removed in between: after that, the slot keeps it linked.
 */
bool gp_board_remove_unused(struct gp_board *b);
bool gp_board_linked(const struct gp_board *b);

/* Something changed: bumps the sequence word and wakes every process waiting on it. */
void gp_board_notify(struct gp_board *b);
/* Wakes whoever waits on b's sequence word without changing it (b may be mapped read-only: another
 * user's board), so that they look for what is new: a board of another user appeared. */
void gp_board_poke(const struct gp_board *b);
/* With the lock held: stores the board's summary; true when it changed, and the summary futex
 * must then be woken (gp_board_summary_wake, after unlocking). */
bool gp_board_set_summary(struct gp_board *b, uint64_t summary);
void gp_board_summary_wake(struct gp_board *b);

/* Whether name (a file name in the board directory) is a board of device key, and whose its
 * name says: its uid into *uid (the file's owner must agree, which the caller checks). A
 * user's board is named gpuprio-UID-vVERSION-KEY, or, where another user's file took that name,
 * the same followed by '+' and 16 hexadecimal digits (gp_board_open). */
bool gp_board_name_of(const char *name, const char *key, uid_t *uid);
/* Whether name is a board's of any device and version (gpuprio-UID-vVERSION-KEY, or an
 * alternate), for readers of every device (gpuprio top): its uid into *uid, and the rest that
 * tells its device and version, "vVERSION-KEY", into device (size bytes; false when longer). */
bool gp_board_name_parse(const char *name, uid_t *uid, char *device, size_t size);
/* Whether f's header (version and device key) is of device, as gp_board_name_parse gives it from
 * a name: a board's name must say its device, as it must say its owner. */
bool gp_board_device_is(const struct gp_board_file *f, const char *device);
/* The device as a name says it ("vVERSION-KEY", what gp_board_name_parse gives): of a board of
 * version and device key, and of f's header. GP_BOARD_DEVICE_MAX bytes hold any. */
#define GP_BOARD_DEVICE_MAX (GP_BOARD_KEY_MAX + 16)
void gp_board_key_device(unsigned version, const char *key, char *device, size_t size);
void gp_board_device_of(const struct gp_board_file *f, char *device, size_t size);
/* Waits until the sequence word differs from seen, or timeout_ns passed; returns the word. */
uint32_t gp_board_wait(struct gp_board *b, uint32_t seen, uint64_t timeout_ns);

/*
 * Asks pid's owners to change priority: of the queue of stream (stream_only: its queue slots), or
 * of every queue of pid and those it creates later (its queue slots and its record, through which
 * the owner gives it to its queues that hold no slot too). Returns how many queues were asked (the
 * queue slots, plus the unused queues the record counts; 0 when a record is all pid has here), or
 * -ESRCH when pid has nothing here to ask.
 */
int gp_board_request(struct gp_board *b, uint32_t pid, bool stream_only, uint64_t stream,
                     int priority);
/*
 * gp_board_request for a board opened with gp_board_open_copy_writable, which its owner may
 * truncate at any moment (another user's, for root): the slots are chosen from the copy, and the
 * request words and the sequence word written with pwrite, never through a mapping, then the
 * sequence futex woken (a syscall: a truncated page fails, it does not kill us). The sequence
 * increment is a read and a write, not a compare-and-swap: two requests at the same moment may
 * count once, which still makes the owner apply the request word, the later one's. Only the
 * slots that are pid's (gp_board_slot_is) are asked. Returns as gp_board_request does, or
 * another negative errno when the file could not be written (it shrank, or stopped being a
 * board).
 */
int gp_board_request_copy(struct gp_board *b, uint32_t pid, bool stream_only, uint64_t stream,
                          int priority);

#endif /* GPUPRIO_BOARD_H */
