/*
 * board.c - see board.h.
 *
 * Nothing here trusts the file: it is checked before it is mapped, a slot's fields are only
 * ever used as numbers, and every wait is bounded. The decision lock is a futex word holding
 * the holder's library image (pid and incarnation): a waiter that finds the holder gone takes
 * the lock over (what the holder protected is recomputed by every decision anyway), and one that
 * waited GP_BOARD_LOCK_MAX_NS for a live holder gives the board up rather than stall the
 * application, until one look a second later finds the lock free (a process stopped while it
 * held the lock, and continued). A holder of this very image is one of our own threads, alive by
 * definition: it is waited for like any other. (Taking the lock over from our own pid once let a
 * reclaim on the board listener run inside another thread's decision, and its unlock opened the
 * lock to every process while the decider was still inside.) Sleepers wait on a separate futex
 * word, so the holder word can be 64 bits wide.
 */
#include "board.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gp_conf.h"
#include "gp_lockrank.h"
#include "gp_options.h"

/* The layout is the file format: a change here is a new GP_BOARD_VERSION. */
_Static_assert(sizeof(struct xq_state) == 48, "xq_state is part of the board's layout");
_Static_assert(sizeof(struct gp_board_slot) == 136, "board slot layout");
_Static_assert(sizeof(struct gp_board_header) == 256, "board header layout");
_Static_assert(sizeof(struct dg_line) == 64, "gate line layout");
_Static_assert(offsetof(struct gp_board_file, gates) == GP_BOARD_GATES_OFFSET &&
                   GP_BOARD_GATES_OFFSET % 4096 == 0,
               "the gates start a page of their own");

#define GP_BOARD_LOCK_MAX_NS 200000000ull
#define GP_BOARD_RETRY_NS 1000000000ull

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

const char *gp_board_dir(void)
{
    const char *shared = gp_conf_shared_dir();
    return shared ? shared : gp_opt_str(GP_OPT_BOARD_DIR);
}

bool gp_board_shared(void)
{
    return gp_conf_shared_dir() != NULL;
}

int gp_board_dir_fs(const char *dir, char *name, size_t size, bool *registrable)
{
    /* The magic numbers of linux/magic.h, for the types a board directory is commonly on. */
    static const struct {
        unsigned long magic;
        const char *name;
        bool registrable;
    } known[] = {
        {0x01021994, "tmpfs", true},  {0x958458f6, "hugetlbfs", true},
        {0xef53, "ext4", false},      {0x58465342, "xfs", false},
        {0x9123683e, "btrfs", false}, {0x794c7630, "overlayfs", false},
        {0x6969, "nfs", false},       {0x65735546, "fuse", false},
        {0x2fc12fc1, "zfs", false},   {0xff534d42, "cifs", false},
        {0x01021997, "9p", false},
    };
    struct statfs st;
    if (statfs(dir, &st) != 0)
        return -errno;
    const char *found = "unknown";
    *registrable = false;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if ((unsigned long)st.f_type == known[i].magic) {
            found = known[i].name;
            *registrable = known[i].registrable;
        }
    snprintf(name, size, "%s", found);
    return 0;
}

/* Whether c stands for itself in a device key in a file name (safe_key). */
static bool safe_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* The device key as it appears in file names. */
static void safe_key(const char *key, char safe[GP_BOARD_KEY_MAX])
{
    size_t i = 0;
    for (; key[i] && i < GP_BOARD_KEY_MAX - 1; i++)
        safe[i] = safe_char(key[i]) ? key[i] : '_';
    safe[i] = '\0';
}

int gp_board_path(const char *key, char *buf, size_t size)
{
    char safe[GP_BOARD_KEY_MAX];
    safe_key(key, safe);
    int n = snprintf(buf, size, "%s/gpuprio-%u-v%u-%s", gp_board_dir(), (unsigned)geteuid(),
                     GP_BOARD_VERSION, safe);
    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

bool gp_board_name_parse(const char *name, uid_t *uid, char *device, size_t size)
{
    if (strncmp(name, "gpuprio-", 8) != 0 || name[8] < '0' || name[8] > '9')
        return false;
    /* One spelling per uid (no leading zeros, no sign): a user's board has one name, and one
     * alternate at a time (gp_board_open). */
    if (name[8] == '0' && name[9] >= '0' && name[9] <= '9')
        return false;
    char *end;
    errno = 0;
    unsigned long id = strtoul(name + 8, &end, 10);
    if (errno || id > UINT32_MAX || end[0] != '-' || end[1] != 'v' || end[2] < '0' || end[2] > '9')
        return false;
    /* The device: "vVERSION-KEY", the key as safe_key writes it (never a '+'), then nothing or
     * an alternate's '+' and 16 lower-case hexadecimal digits. */
    const char *from = end + 1;
    size_t len = strcspn(from, "+");
    size_t digits = strspn(from + 1, "0123456789");
    if (from[1 + digits] != '-' || from[2 + digits] == '\0' || from[2 + digits] == '+')
        return false;
    for (size_t i = 2 + digits; i < len; i++)
        if (!safe_char(from[i]))
            return false;
    const char *rest = from + len;
    if (*rest == '+' && (strspn(rest + 1, "0123456789abcdef") != 16 || rest[17] != '\0'))
        return false;
    if (len >= size)
        return false;
    memcpy(device, from, len);
    device[len] = '\0';
    *uid = (uid_t)id;
    return true;
}

void gp_board_key_device(unsigned version, const char *key, char *device, size_t size)
{
    char safe[GP_BOARD_KEY_MAX];
    safe_key(key, safe);
    snprintf(device, size, "v%u-%s", version, safe);
}

bool gp_board_name_of(const char *name, const char *key, uid_t *uid)
{
    char want[GP_BOARD_DEVICE_MAX], device[GP_BOARD_DEVICE_MAX];
    gp_board_key_device(GP_BOARD_VERSION, key, want, sizeof want);
    uid_t named;
    if (!gp_board_name_parse(name, &named, device, sizeof device) || strcmp(device, want) != 0)
        return false;
    *uid = named;
    return true;
}

void gp_board_device_of(const struct gp_board_file *f, char *device, size_t size)
{
    char key[GP_BOARD_KEY_MAX];
    memcpy(key, f->h.key, sizeof key); /* a copy of another user's file: maybe unterminated */
    key[sizeof key - 1] = '\0';
    gp_board_key_device((unsigned)f->h.version, key, device, size);
}

bool gp_board_device_is(const struct gp_board_file *f, const char *device)
{
    char want[GP_BOARD_DEVICE_MAX];
    gp_board_device_of(f, want, sizeof want);
    return strcmp(want, device) == 0;
}

/* ---- who owns a slot ---- */

/* Reads the start of /proc file `name` of pid (0: /proc/self, which is right even where /proc is
 * another pid namespace's) into buf, terminated; 0, or -errno (-ENOENT: gone). */
static int read_proc(uint32_t pid, const char *name, char *buf, size_t size)
{
    char path[64];
    if (pid)
        snprintf(path, sizeof path, "/proc/%u/%s", pid, name);
    else
        snprintf(path, sizeof path, "/proc/self/%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return -EIO;
    buf[n] = '\0';
    return 0;
}

/* A process's state letter and start time from /proc/PID/stat (pid 0: the calling process's);
 * 0, or -errno (-ENOENT: gone). */
static int proc_stat(uint32_t pid, char *state, uint64_t *start)
{
    char buf[1024];
    int rc = read_proc(pid, "stat", buf, sizeof buf);
    if (rc != 0)
        return rc;
    /* The command name may hold anything, parentheses and spaces included: skip to its end. */
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 1, " %c", state) != 1)
        return -EIO;
    /* Fields are counted from 1 (the pid); the name is field 2 and starttime field 22. Each
     * step moves to the space before the next field, the first to the state's (field 3). */
    for (int field = 3; field <= 22; field++) {
        p = strchr(p + 1, ' ');
        if (!p)
            return -EIO;
    }
    *start = strtoull(p + 1, NULL, 10);
    return 0;
}

static uint32_t pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint32_t)st.st_ino : 0;
}

static struct gp_board_owner self;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_init(void)
{
    self.pid = (uint32_t)getpid();
    self.pid_ns = pid_namespace();
    char state;
    if (proc_stat(0, &state, &self.start) != 0)
        self.start = 0;
    if (getrandom(&self.incarnation, sizeof self.incarnation, GRND_NONBLOCK) !=
        (ssize_t)sizeof self.incarnation)
        self.incarnation = now_ns() ^ ((uint64_t)self.pid << 40) ^ (uintptr_t)&self;
    self.incarnation |= 1; /* never 0 */
    char comm[sizeof self.comm] = "?";
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, comm, sizeof comm - 1);
        close(fd);
        comm[n > 0 ? n : 0] = '\0';
        comm[strcspn(comm, "\n")] = '\0';
    }
    memcpy(self.comm, comm, sizeof self.comm);
}

const struct gp_board_owner *gp_board_self(void)
{
    pthread_once(&self_once, self_init);
    return &self;
}

static void already_known(void) {}

void gp_board_self_reset(void)
{
    self_init();
    pthread_once(&self_once, already_known); /* when the parent never asked */
}

/* Whether pid runs (a zombie does not); unknown counts as running. */
static bool pid_runs(uint32_t pid, uint64_t *start)
{
    char state = '?';
    uint64_t s = 0;
    int rc = proc_stat(pid, &state, &s);
    if (rc == -ENOENT || rc == -ESRCH)
        return false;
    if (rc == 0) {
        if (start)
            *start = s;
        return state != 'Z' && state != 'X' && state != 'x';
    }
    return !(kill((pid_t)pid, 0) != 0 && errno == ESRCH); /* no /proc: ask the kernel */
}

/* The liveness lock of slot s: its first byte in the board file. */
static struct flock slot_lock(const struct gp_board *b, const struct gp_board_slot *s, short type)
{
    return (struct flock){.l_type = type,
                          .l_whence = SEEK_SET,
                          .l_start = (off_t)((const char *)s - (const char *)b->f),
                          .l_len = 1};
}

/* 1 when another open file description holds the slot's liveness lock, 0 when none does, or
 * -errno when the kernel cannot tell. */
static int slot_locked(const struct gp_board *b, const struct gp_board_slot *s)
{
    struct flock l = slot_lock(b, s, F_WRLCK);
    if (b->fd < 0)
        return -EBADF;
    if (fcntl(b->fd, F_OFD_GETLK, &l) != 0)
        return -errno;
    return l.l_type != F_UNLCK;
}

bool gp_board_owner_alive(const struct gp_board *b, const struct gp_board_slot *s)
{
    const struct gp_board_owner *me = gp_board_self();
    uint64_t word = atomic_load(&s->owner);
    uint32_t pid = GP_SLOT_OWNER(word);
    if (!pid)
        return false;
    bool same_ns = s->pid_ns == me->pid_ns;
    if (same_ns && pid == me->pid && s->incarnation == me->incarnation)
        return true; /* our own: our lock does not conflict with itself, so it cannot tell */
    if (atomic_load(&s->liveness_lock)) {
        int locked = slot_locked(b, s);
        if (locked >= 0)
            return locked;
    }
    /* Another pid namespace: its pids mean nothing here. A copy is another user's board, or one
     * a tool reads: a slot there whose owner holds no lock on it could say anything, so it is
     * not alive (else a forged one was, for ever). On our own board, where only our user writes,
     * it is a slot of a library before the locks, which is never taken for dead (and freed). */
    if (!same_ns)
        return !b->copy;
    if (pid == me->pid)
        return false; /* an earlier image of this process, before an exec */
    uint64_t start = s->owner_start;
    if (!pid_runs(pid, &start))
        return false;
    return start == s->owner_start;
}

/* Whether /proc says pid runs with real or effective uid (0: yes, 1: no, -errno: cannot tell). */
static int pid_runs_as(uint32_t pid, uid_t uid)
{
    char buf[4096];
    int rc = pid ? read_proc(pid, "status", buf, sizeof buf) : -ENOENT; /* not /proc/self */
    if (rc != 0)
        return rc;
    const char *line = strstr(buf, "\nUid:");
    unsigned real, effective;
    if (!line || sscanf(line, "\nUid: %u %u", &real, &effective) != 2)
        return -EIO;
    return real == (unsigned)uid || effective == (unsigned)uid ? 0 : 1;
}

bool gp_board_slot_pid_true(const struct gp_board *b, const struct gp_board_slot *s)
{
    uint32_t pid = GP_SLOT_OWNER(atomic_load(&s->owner));
    if (s->pid_ns != gp_board_self()->pid_ns)
        return true; /* its pid is another namespace's: nothing to check it against here */
    char state = '?';
    uint64_t start = 0;
    int rc = pid ? proc_stat(pid, &state, &start) : -ESRCH;
    if (rc == -ENOENT || rc == -ESRCH) /* gone, or hidden from us (hidepid): then unknown */
        return pid && kill((pid_t)pid, 0) != 0 && errno == EPERM;
    if (rc != 0)
        return true; /* /proc cannot tell */
    if (state == 'Z' || state == 'X' || state == 'x' || start != s->owner_start)
        return false;
    /* A process the board's owner does not own is not its owner's. */
    return pid_runs_as(pid, b->uid) != 1;
}

bool gp_board_slot_is(const struct gp_board *b, const struct gp_board_slot *s, uint32_t pid)
{
    return GP_SLOT_OWNER(atomic_load(&s->owner)) == pid && s->pid_ns == gp_board_self()->pid_ns &&
           gp_board_owner_alive(b, s) && gp_board_slot_pid_true(b, s);
}

bool gp_board_claimer_gone(const struct gp_board *b, const struct gp_board_slot *s,
                           uint64_t claimed_ns)
{
    uint32_t pid = GP_SLOT_OWNER(atomic_load(&s->owner));
    int locked = slot_locked(b, s);
    if (locked > 0)
        return false;
    if (locked == 0 && claimed_ns >= GP_BOARD_CLAIM_MAX_NS)
        return true;
    return pid && s->pid_ns == gp_board_self()->pid_ns && !pid_runs(pid, NULL);
}

/* ---- opening ---- */

static const char *open_failure_text(int err)
{
    return err == ELOOP                    ? "is a symbolic link (refused)"
           : err == EACCES || err == EPERM ? "cannot be opened (permission denied)"
                                           : "cannot be opened or created";
}

/* Opens path without ever blocking (a FIFO planted at a board's path opens at once, and is then
 * refused by its type) and without following a symbolic link. */
static int open_board_file(const char *path, int flags)
{
    return open(path, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
}

/* Whether path names a file in the administrator's shared board directory (gp_conf.h), whichever
 * users the file admits: for the library of an admitted user, every board it opens; for root's
 * tools, which read it though root is not admitted (docs/cli.md), those they list there. Boards
 * there are readable by every user (mode 0644). The directory is compared by identity, however
 * either path spells it. */
static bool in_shared_dir(const char *path)
{
    if (gp_board_shared())
        return true; /* the board directory is the shared one */
    const struct gp_conf *conf = gp_conf_get();
    const char *slash = strrchr(path, '/');
    if (!conf || !conf->board_dir[0] || !slash)
        return false;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    struct stat a, b;
    return stat(dir, &a) == 0 && stat(conf->board_dir, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* The checks made on the open file at path before anything of it is read: its type, owner, mode
 * and size. own: the caller's own board (never another user's). */
static int check_file(int fd, const char *path, bool writable, bool own, struct stat *st,
                      const char **why)
{
    if (fstat(fd, st) != 0) {
        *why = "cannot be examined";
        return -errno;
    }
    if (!S_ISREG(st->st_mode)) {
        *why = "is not a regular file";
        return -EINVAL;
    }
    /* Root may look at every user's boards (gpuprio top), and everyone at every board of the
     * shared directory, but each uses only its own. */
    bool shared = in_shared_dir(path);
    if (st->st_uid != geteuid() && (own || (geteuid() != 0 && (writable || !shared)))) {
        *why = "belongs to another user";
        return -EPERM;
    }
    /* On the shared directory every admitted user reads every board: writable by its owner
     * only. */
    if (shared ? (st->st_mode & 022) != 0 : (st->st_mode & 077) != 0) {
        *why = shared ? "is writable by other users (its mode must be 0644)"
                      : "is open to other users (its mode must be 0600)";
        return -EPERM;
    }
    if (st->st_size != (off_t)sizeof(struct gp_board_file)) {
        *why = "has the wrong size (another gpuprio version, or not a board)";
        return -EINVAL;
    }
    return 0;
}

/* What is wrong with a board's header (owned by uid), or NULL. */
static const char *bad_header(const struct gp_board_header *h, uid_t uid)
{
    if (h->magic != GP_BOARD_MAGIC)
        return "is not a gpuprio board (bad magic number)";
    if (h->version != GP_BOARD_VERSION)
        return "has another board version (another gpuprio version uses it)";
    if (h->header_size != sizeof(struct gp_board_header) ||
        h->slot_size != sizeof(struct gp_board_slot) || h->slot_count != GP_BOARD_SLOTS)
        return "has another layout";
    if (h->uid != (uint32_t)uid)
        return "is inconsistent (its recorded owner is not the file's)";
    return NULL;
}

static int check_and_map(int fd, bool writable, bool own, struct gp_board *b, const char **why)
{
    struct stat st;
    int rc = check_file(fd, b->path, writable, own, &st, why);
    if (rc != 0)
        return rc;
    void *p = mmap(NULL, sizeof(struct gp_board_file), PROT_READ | (writable ? PROT_WRITE : 0),
                   MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        *why = "cannot be mapped";
        return -errno;
    }
    const char *bad = bad_header(p, st.st_uid);
    if (bad) {
        munmap(p, sizeof(struct gp_board_file));
        *why = bad;
        return -EINVAL;
    }
    b->f = p;
    b->live = p;
    b->fd = fd;
    b->dev = st.st_dev;
    b->ino = st.st_ino;
    b->uid = st.st_uid;
    atomic_store(&b->retry_at_ns, 0);
    return 0;
}

/* Reads exactly size bytes at offset; a shorter read means the file shrank. */
static int read_at(int fd, void *into, size_t size, off_t offset)
{
    for (size_t done = 0; done < size;) {
        ssize_t n = pread(fd, (char *)into + done, size - done, offset + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -ENODATA;
        done += (size_t)n;
    }
    return 0;
}

int gp_board_read(const struct gp_board *b, struct gp_board_file *into, const char **why)
{
    *why = "shrank or cannot be read (its owner truncated or rewrote it)";
    int rc = read_at(b->fd, &into->h, sizeof into->h, 0);
    if (rc != 0)
        return rc;
    const char *bad = bad_header(&into->h, b->uid);
    if (bad) {
        *why = bad;
        return -EINVAL;
    }
    /* Only the slots ever claimed, and their gate lines: what any scan looks at. The owner's
     * slot_limit is clamped to the board; below it, the copy is what the file held. */
    uint32_t n = atomic_load(&into->h.slot_limit);
    n = n < GP_BOARD_SLOTS ? n : GP_BOARD_SLOTS;
    atomic_store(&into->h.slot_limit, n);
    if (!n)
        return 0;
    rc = read_at(b->fd, into->slots, n * sizeof into->slots[0],
                 (off_t)offsetof(struct gp_board_file, slots));
    if (rc == 0)
        rc = read_at(b->fd, into->gates, n * sizeof into->gates[0], GP_BOARD_GATES_OFFSET);
    if (rc == 0)
        *why = NULL;
    return rc;
}

/* b emptied and named path, and path opened without blocking: the descriptor, or -errno with
 * *why. */
static int start_open(const char *path, bool writable, struct gp_board *b, const char **why)
{
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->squatter = -1;
    snprintf(b->path, sizeof b->path, "%s", path);
    int fd = open_board_file(path, writable ? O_RDWR : O_RDONLY);
    if (fd < 0) {
        *why = open_failure_text(errno);
        return -errno;
    }
    return fd;
}

static int open_copy(const char *path, bool writable, struct gp_board *b, const char **why)
{
    int fd = start_open(path, writable, b, why);
    if (fd < 0)
        return fd;
    struct stat st;
    int rc = check_file(fd, b->path, writable, false, &st, why);
    if (rc != 0)
        goto fail;
    rc = -ENOMEM;
    *why = "cannot be copied (out of memory)";
    /* calloc: the pages beyond what is read stay untouched. */
    struct gp_board_file *f = calloc(1, sizeof *f);
    if (!f)
        goto fail;
    /* The header's page, shared with the owner for its futex words alone: only the kernel ever
     * touches it (a futex on a page its owner truncated away fails with EFAULT, where a load
     * would kill this process with SIGBUS). */
    void *live = mmap(NULL, GP_BOARD_HEADER_PAGE, PROT_READ, MAP_SHARED, fd, 0);
    if (live == MAP_FAILED) {
        free(f);
        *why = "cannot be mapped";
        rc = -errno;
        goto fail;
    }
    b->fd = fd;
    b->uid = st.st_uid;
    b->dev = st.st_dev;
    b->ino = st.st_ino;
    b->f = f;
    b->live = live;
    b->copy = true;
    rc = gp_board_read(b, f, why);
    if (rc != 0) {
        gp_board_close(b);
        return rc;
    }
    return 0;
fail:
    close(fd);
    return rc;
}

int gp_board_open_copy(const char *path, struct gp_board *b, const char **why)
{
    return open_copy(path, false, b, why);
}

int gp_board_open_copy_writable(const char *path, struct gp_board *b, const char **why)
{
    return open_copy(path, true, b, why);
}

/* Builds a board in a private file and links it into place; 0, or -EEXIST when another
 * process was first (fine), or -errno. */
static int create(const char *path, const char *key)
{
    char tmp[320];
    const struct gp_board_owner *me = gp_board_self();
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path) : 0;
    snprintf(tmp, sizeof tmp, "%.*s/.%s.%u.%llx", dirlen, path, slash ? slash + 1 : path, me->pid,
             (unsigned long long)(now_ns() ^ me->incarnation));
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = 0;
    struct gp_board_file *f = MAP_FAILED;
    if (fchmod(fd, gp_board_shared() ? 0644 : 0600) != 0 || ftruncate(fd, sizeof *f) != 0) {
        rc = -errno;
        goto out;
    }
    f = mmap(NULL, sizeof *f, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (f == MAP_FAILED) {
        rc = -errno;
        goto out;
    }
    f->h.version = GP_BOARD_VERSION;
    f->h.header_size = sizeof f->h;
    f->h.slot_size = sizeof f->slots[0];
    f->h.slot_count = GP_BOARD_SLOTS;
    f->h.uid = (uint32_t)geteuid();
    snprintf(f->h.key, sizeof f->h.key, "%s", key);
    f->h.magic = GP_BOARD_MAGIC;
    munmap(f, sizeof *f);
    rc = link(tmp, path) == 0 ? 0 : -errno;
out:
    close(fd);
    unlink(tmp);
    return rc;
}

/* Opens and checks an existing board of ours at path. */
static int open_own(const char *path, struct gp_board *b, const char **why)
{
    snprintf(b->path, sizeof b->path, "%s", path);
    int fd = open_board_file(path, O_RDWR);
    if (fd < 0) {
        *why = open_failure_text(errno);
        return -errno;
    }
    int rc = check_and_map(fd, true, true, b, why);
    if (rc != 0)
        close(fd);
    return rc;
}

struct alternate_search {
    const char *name; /* the usual name's file name */
    struct gp_board *b;
    const char **why;
    bool found;
};

/* Whether the file name is an alternate name of the usual file name (board.h, gp_board_name_of)
 * and path a regular file of ours: another user may name a file like one, never used for us. */
static bool own_alternate(const char *path, const char *usual)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    size_t len = strlen(usual);
    struct stat st;
    return strncmp(name, usual, len) == 0 && name[len] == '+' &&
           strspn(name + len + 1, "0123456789abcdef") == 16 && name[len + 17] == '\0' &&
           lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
}

static int try_alternate(const char *path, void *arg)
{
    struct alternate_search *a = arg;
    if (!own_alternate(path, a->name) || open_own(path, a->b, a->why) != 0)
        return 0;
    a->found = true;
    return 1;
}

struct first_search {
    const char *name; /* the usual file name */
    char first[PATH_MAX];
};

static int note_first(const char *path, void *arg)
{
    struct first_search *f = arg;
    if (!own_alternate(path, f->name))
        return 0;
    snprintf(f->first, sizeof f->first, "%s", path);
    return 1;
}

bool gp_board_first(const struct gp_board *b)
{
    const char *slash = strrchr(b->path, '/'), *plus = strrchr(b->path, '+');
    if (!slash || !plus || plus < slash)
        return true; /* the usual name */
    char dir[sizeof b->path], usual[sizeof b->path];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - b->path), b->path);
    snprintf(usual, sizeof usual, "%.*s", (int)(plus - slash - 1), slash + 1);
    struct first_search f = {usual, ""};
    gp_board_list(dir, geteuid(), note_first, &f);
    return !f.first[0] || strcmp(f.first, b->path) == 0;
}

/* Opens the first (in name order) of this user's boards under an alternate name of path; 0, or
 * -ENOENT when there is none that opens. */
static int open_alternate(const char *path, struct gp_board *b, const char **why)
{
    const char *slash = strrchr(path, '/');
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    struct alternate_search a = {slash ? slash + 1 : path, b, why, false};
    const char *keep_why = *why;
    gp_board_list(dir, geteuid(), try_alternate, &a);
    if (a.found)
        return 0;
    *why = keep_why;
    return -ENOENT;
}

/* Removes this user's board at path if no process uses it (an alternate made at the same moment
 * as another process's, which won). */
static void remove_if_unused(const char *path)
{
    struct gp_board b = {.fd = -1};
    const char *why;
    if (open_own(path, &b, &why) != 0)
        return;
    if (gp_board_lock(&b) == 0) {
        gp_board_remove_unused(&b);
        gp_board_unlock(&b);
    }
    gp_board_close(&b);
}

int gp_board_open(const char *key, struct gp_board *b, const char **why)
{
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->squatter = -1;
    char usual[sizeof b->path];
    *why = "has a path that is too long";
    if (gp_board_path(key, usual, sizeof usual) != 0) {
        snprintf(b->path, sizeof b->path, "%s", usual);
        return -ENAMETOOLONG;
    }
    struct stat st;
    /* Once this user's processes meet under an alternate name (another user took the usual one),
     * they keep doing so for as long as that board exists, whatever happens to the usual name:
     * all of them on one board. */
    if (open_alternate(usual, b, why) == 0) {
        if (lstat(usual, &st) == 0 && st.st_uid != geteuid())
            b->squatter = (int64_t)st.st_uid;
        return 0;
    }
    int rc = open_own(usual, b, why);
    if (rc == -ENOENT) {
        rc = create(usual, key);
        if (rc != 0 && rc != -EEXIST) {
            *why = "cannot be created (is the board directory writable?)";
            return rc;
        }
        rc = open_own(usual, b, why);
    }
    if (rc == 0 || lstat(usual, &st) != 0 || st.st_uid == geteuid())
        return rc; /* ours, or our own file that is not a board: refused */
    /* Another user's file has our name (it created it before we did, and the sticky directory
     * keeps us from removing it): we meet under an alternate name, which no other user can guess
     * before it exists. Two of our processes making one at once each take the first in name
     * order, and the other's is removed while unused. */
    b->squatter = (int64_t)st.st_uid;
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = now_ns() ^ gp_board_self()->incarnation;
    char mine[sizeof b->path];
    int n = snprintf(mine, sizeof mine, "%s+%016llx", usual, (unsigned long long)r);
    const char *squatted = "belongs to another user, who created it first (and no board of this "
                           "user under another name could be made)";
    if (n < 0 || (size_t)n >= sizeof mine || create(mine, key) != 0) {
        *why = squatted;
        snprintf(b->path, sizeof b->path, "%s", usual);
        return -EPERM;
    }
    if (open_alternate(usual, b, why) != 0) {
        *why = squatted;
        snprintf(b->path, sizeof b->path, "%s", usual);
        return -EPERM;
    }
    if (strcmp(b->path, mine) != 0)
        remove_if_unused(mine);
    return 0;
}

int gp_board_open_file(const char *path, bool writable, struct gp_board *b, const char **why)
{
    int fd = start_open(path, writable, b, why);
    if (fd < 0)
        return fd;
    int rc = check_and_map(fd, writable, false, b, why);
    if (rc != 0)
        close(fd);
    return rc;
}

void gp_board_close(struct gp_board *b)
{
    if (!b->f)
        return;
    if (b->copy) {
        free(b->f);
        munmap(b->live, GP_BOARD_HEADER_PAGE);
    } else {
        munmap(b->f, sizeof *b->f);
    }
    close(b->fd);
    b->f = NULL;
    b->live = NULL;
    b->fd = -1;
}

/* A name of the listing, and its inode number as the directory gave it. */
struct listed {
    char *name;
    ino_t ino;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct listed *)a)->name, ((const struct listed *)b)->name);
}

/* The prefix of uid's board names ("gpuprio-" for every user's) into prefix; its length. */
static size_t name_prefix(uid_t uid, char prefix[32])
{
    int n = uid == (uid_t)-1 ? snprintf(prefix, 32, "gpuprio-")
                             : snprintf(prefix, 32, "gpuprio-%u-", (unsigned)uid);
    return (size_t)n;
}

/* Calls fn for name (an entry of dir, d on it), with its inode number and the directory's file
 * system. */
static int call_entry(const char *dir, dev_t dev, const char *name, ino_t ino,
                      int (*fn)(const struct gp_board_entry *e, void *arg), void *arg)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct gp_board_entry e = {path, dev, ino};
    return fn(&e, arg);
}

/* The file system of d's directory (0 when it cannot be told: no entry's inode number is then
 * taken for a file's). */
static dev_t dir_dev(DIR *d)
{
    struct stat st;
    return fstat(dirfd(d), &st) == 0 ? st.st_dev : 0;
}

int gp_board_list_entries(const char *dir, uid_t uid,
                          int (*fn)(const struct gp_board_entry *e, void *arg), void *arg)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    char prefix[32];
    size_t plen = name_prefix(uid, prefix);
    dev_t dev = dir_dev(d);
    struct listed *names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, plen) != 0)
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 16;
            struct listed *nn = realloc(names, c * sizeof *nn);
            if (!nn) {
                rc = -ENOMEM;
                goto out;
            }
            names = nn;
            cap = c;
        }
        names[n].ino = e->d_ino;
        if (!(names[n].name = strdup(e->d_name))) {
            rc = -ENOMEM;
            goto out;
        }
        n++;
    }
    if (n) /* names is NULL without any: not for qsort */
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n && !rc; i++)
        rc = call_entry(dir, dev, names[i].name, names[i].ino, fn, arg);
out:
    for (size_t i = 0; i < n; i++)
        free(names[i].name);
    free(names);
    closedir(d);
    return rc;
}

struct by_path {
    int (*fn)(const char *path, void *arg);
    void *arg;
};

static int path_only(const struct gp_board_entry *e, void *arg)
{
    const struct by_path *p = arg;
    return p->fn(e->path, p->arg);
}

int gp_board_list(const char *dir, uid_t uid, int (*fn)(const char *path, void *arg), void *arg)
{
    struct by_path p = {fn, arg};
    return gp_board_list_entries(dir, uid, path_only, &p);
}

int gp_board_cursor_open(struct gp_board_cursor *c, const char *dir)
{
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    if (!(c->d = opendir(dir)))
        return -errno;
    c->dev = dir_dev(c->d);
    return 0;
}

int gp_board_cursor_step(struct gp_board_cursor *c, unsigned budget,
                         int (*fn)(const struct gp_board_entry *e, void *arg), void *arg)
{
    char prefix[32];
    size_t plen = name_prefix((uid_t)-1, prefix);
    int rc = 0;
    for (unsigned i = 0; i < budget && !rc; i++) {
        errno = 0;
        struct dirent *e = readdir(c->d);
        if (!e) {
            rc = errno ? -errno : 1;
            break;
        }
        if (strncmp(e->d_name, prefix, plen) == 0)
            rc = call_entry(c->dir, c->dev, e->d_name, e->d_ino, fn, arg);
    }
    if (rc)
        gp_board_cursor_close(c);
    return rc;
}

void gp_board_cursor_close(struct gp_board_cursor *c)
{
    if (c->d)
        closedir(c->d);
    c->d = NULL;
}

/* ---- slots ---- */

static void clear_slot(struct gp_board_slot *s)
{
    s->stream = s->thread = 0;
    s->device = -1;
    s->flags = 0;
    s->cu_usable = s->cu_total = 0;
    s->cu_mask = 0;
    memset(s->comm, 0, sizeof s->comm);
    atomic_store(&s->request, 0);
    atomic_store(&s->request_seq, 0);
    atomic_store(&s->st.gate, 0);
    atomic_store(&s->st.priority, 0);
    atomic_store(&s->st.active, 0);
    atomic_store(&s->st.submitted, 0);
    atomic_store(&s->st.completed, 0);
    atomic_store(&s->st.held_ns, 0);
    atomic_store(&s->st.suspensions, 0);
    atomic_store(&s->unused_queues, 0);
    atomic_store(&s->liveness_lock, 0);
}

struct gp_board_slot *gp_board_claim(struct gp_board *b)
{
    const struct gp_board_owner *me = gp_board_self();
    uint64_t claimed = (uint64_t)me->pid << 32 | GP_SLOT_CLAIMED;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        uint64_t expected = 0;
        if (atomic_load(&s->owner) != 0)
            continue;
        /* Scans stop at the limit: raised before the claim, so that a claimer killed right after
         * it leaves a slot that others' scans see and reclaim. */
        uint32_t limit = atomic_load(&b->f->h.slot_limit);
        while (limit < i + 1 && !atomic_compare_exchange_weak(&b->f->h.slot_limit, &limit, i + 1))
            ;
        if (!atomic_compare_exchange_strong(&s->owner, &expected, claimed))
            continue;
        /* Then the lock and the identity: until the lock is held, the claimer can only be told
         * alive by its pid (in the pid namespace the slot names) or by how short a claim is
         * (gp_board_claimer_gone). One that stalled longer than that before it (stopped) may
         * find the slot reclaimed: it leaves it to its new owner. */
        struct flock l = slot_lock(b, s, F_RDLCK);
        bool locked = fcntl(b->fd, F_OFD_SETLK, &l) == 0;
        if (atomic_load(&s->owner) != claimed) {
            if (locked) {
                l.l_type = F_UNLCK;
                fcntl(b->fd, F_OFD_SETLK, &l);
            }
            continue;
        }
        s->owner_start = me->start;
        s->incarnation = me->incarnation;
        s->pid_ns = me->pid_ns;
        clear_slot(s);
        dg_reset(gp_board_gate(b, s));
        atomic_store(&s->liveness_lock, locked);
        memcpy(s->comm, me->comm, sizeof s->comm);
        return s;
    }
    return NULL;
}

void gp_board_publish(struct gp_board *b, struct gp_board_slot *s)
{
    (void)b;
    atomic_store(&s->owner, (uint64_t)gp_board_self()->pid << 32 | GP_SLOT_LIVE);
}

void gp_board_publish_record(struct gp_board *b, struct gp_board_slot *s)
{
    (void)b;
    atomic_store(&s->owner, (uint64_t)gp_board_self()->pid << 32 | GP_SLOT_PROCESS);
}

void gp_board_free(struct gp_board *b, struct gp_board_slot *s)
{
    uint64_t word = atomic_load(&s->owner);
    if (!word)
        return;
    /* Taken over first (a dead owner's, or back to claimed if ours), so that nobody claims it half
     * cleared, and nobody judges it by its lock once that is gone: a claimed slot is judged by
     * its pid alone. Ours is unlocked before it is free, so that a thread of ours claiming it
     * again keeps its new lock. */
    const struct gp_board_owner *me = gp_board_self();
    bool own = GP_SLOT_OWNER(word) == me->pid && s->incarnation == me->incarnation &&
               s->pid_ns == me->pid_ns;
    uint64_t mine = (uint64_t)me->pid << 32 | GP_SLOT_CLAIMED;
    if (word != mine && !atomic_compare_exchange_strong(&s->owner, &word, mine))
        return; /* someone else reclaimed it first */
    bool locked = own && atomic_load(&s->liveness_lock);
    clear_slot(s);
    dg_reset(gp_board_gate(b, s));
    if (locked) {
        struct flock l = slot_lock(b, s, F_UNLCK);
        fcntl(b->fd, F_OFD_SETLK, &l);
    }
    /* Still ours unless we stalled here past GP_BOARD_CLAIM_MAX_NS and someone reclaimed it:
     * then it is theirs, or free, or someone else's again. */
    atomic_compare_exchange_strong(&s->owner, &mine, 0);
}

bool gp_board_linked(const struct gp_board *b)
{
    struct stat st;
    return lstat(b->path, &st) == 0 && st.st_dev == b->dev && st.st_ino == b->ino;
}

bool gp_board_remove_unused(struct gp_board *b)
{
    for (unsigned i = 0; i < gp_board_slots_used(b); i++)
        if (atomic_load(&b->f->slots[i].owner))
            return false;
    return gp_board_linked(b) && unlink(b->path) == 0;
}

/* ---- lock and notification ---- */

/* Whether the holder named by a lock word can never unlock. It is judged by its slots when it
 * has one (it takes the lock after claiming its record), which tell a process of another pid
 * namespace with our pid from an earlier image of ours; else by its pid: gone, or ours (an earlier
 * image, before an exec). Our own image's holders are threads that run. */
static bool holder_gone(const struct gp_board *b, uint64_t word)
{
    const struct gp_board_owner *me = gp_board_self();
    uint32_t pid = GP_BOARD_LOCK_PID(word);
    if (word == GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation))
        return false;
    for (unsigned i = 0; i < gp_board_slots_used(b); i++) {
        const struct gp_board_slot *s = &b->f->slots[i];
        uint64_t owner = atomic_load(&s->owner);
        if (GP_SLOT_PUBLISHED(owner) && GP_SLOT_OWNER(owner) == pid &&
            GP_BOARD_LOCK_HOLDER(pid, s->incarnation) == word)
            return !gp_board_owner_alive(b, s);
    }
    return pid == me->pid || !pid_runs(pid, NULL);
}

static _Thread_local struct gp_board_wait last_wait;

struct gp_board_wait gp_board_last_wait(void)
{
    return last_wait;
}

bool gp_board_given_up(const struct gp_board *b)
{
    return atomic_load(&b->retry_at_ns) != 0;
}

/* On a board given up: whether the calling thread is the one to look at the lock again now. */
static bool time_to_retry(struct gp_board *b)
{
    uint64_t at = atomic_load(&b->retry_at_ns), now = now_ns();
    return now >= at &&
           atomic_compare_exchange_strong(&b->retry_at_ns, &at, now + GP_BOARD_RETRY_NS);
}

static int give_up(struct gp_board *b)
{
    atomic_store(&b->retry_at_ns, now_ns() + GP_BOARD_RETRY_NS);
    gp_rank_release(GP_RANK_BOARD);
    return -ETIMEDOUT;
}

int gp_board_lock(struct gp_board *b)
{
    bool retrying = gp_board_given_up(b);
    if (retrying && !time_to_retry(b))
        return -ETIMEDOUT;
    struct gp_board_header *h = &b->f->h;
    const struct gp_board_owner *me = gp_board_self();
    const uint64_t mine = GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation);
    uint64_t waiting_from = 0;
    gp_rank_acquire(GP_RANK_BOARD);
    last_wait = (struct gp_board_wait){0, 0};
    for (int spins = 0;; spins++) {
        uint64_t v = 0;
        if (atomic_compare_exchange_strong(&h->lock, &v, mine))
            break;
        uint64_t now = now_ns();
        if (!waiting_from) {
            waiting_from = now;
            last_wait.holder_pid = GP_BOARD_LOCK_PID(v);
        }
        if (retrying) { /* one look, no wait: the holder may still be stuck */
            if (holder_gone(b, v) && atomic_compare_exchange_strong(&h->lock, &v, mine))
                break;
            return give_up(b);
        }
        if (spins < 64) {
            sched_yield();
            continue;
        }
        if (holder_gone(b, v)) {
            if (atomic_compare_exchange_strong(&h->lock, &v, mine))
                break;
            continue;
        }
        if (now - waiting_from > GP_BOARD_LOCK_MAX_NS)
            return give_up(b);
        /* Counted as a sleeper before the holder word is read again: an unlock either sees the
         * count and bumps lock_wake, or happened before that read, which then sees it free. */
        uint32_t wake = atomic_load(&h->lock_wake);
        atomic_fetch_add(&h->lock_sleepers, 1);
        if (atomic_load(&h->lock) == v) {
            struct timespec ts = {0, 1000000};
            futex(&h->lock_wake, FUTEX_WAIT, wake, &ts);
        }
        atomic_fetch_sub(&h->lock_sleepers, 1);
    }
    if (waiting_from)
        last_wait.ns = now_ns() - waiting_from;
    if (retrying)
        atomic_store(&b->retry_at_ns, 0);
    return 0;
}

void gp_board_unlock(struct gp_board *b)
{
    struct gp_board_header *h = &b->f->h;
    const struct gp_board_owner *me = gp_board_self();
    uint64_t mine = GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation);
    /* Never frees a lock another holder took over (it judged this image gone: cannot happen
     * while this image runs). */
    bool held = atomic_compare_exchange_strong(&h->lock, &mine, 0);
    gp_rank_release(GP_RANK_BOARD);
    if (!held)
        return;
    if (atomic_load(&h->lock_sleepers)) {
        atomic_fetch_add(&h->lock_wake, 1);
        futex(&h->lock_wake, FUTEX_WAKE, INT_MAX, NULL);
    }
}

void gp_board_notify(struct gp_board *b)
{
    atomic_fetch_add(&b->f->h.seq, 1);
    futex(&b->f->h.seq, FUTEX_WAKE, INT_MAX, NULL);
}

void gp_board_poke(const struct gp_board *b)
{
    futex(&b->live->seq, FUTEX_WAKE, INT_MAX, NULL);
}

bool gp_board_set_summary(struct gp_board *b, uint64_t summary)
{
    if (atomic_load(&b->f->h.summary) == summary)
        return false;
    atomic_store(&b->f->h.summary, summary);
    atomic_fetch_add(&b->f->h.summary_seq, 1);
    return true;
}

void gp_board_summary_wake(struct gp_board *b)
{
    futex(&b->f->h.summary_seq, FUTEX_WAKE, INT_MAX, NULL);
}

uint32_t gp_board_wait(struct gp_board *b, uint32_t seen, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    if (atomic_load(&b->f->h.seq) == seen)
        futex(&b->f->h.seq, FUTEX_WAIT, seen, &ts);
    return atomic_load(&b->f->h.seq);
}

/* Whether slot s (the owner word seen as word) is one a request of pid goes to. */
static bool requested(uint64_t word, const struct gp_board_slot *s, uint32_t pid, bool stream_only,
                      uint64_t stream)
{
    bool record = GP_SLOT_STATE(word) == GP_SLOT_PROCESS;
    /* A record has no stream (its 0 is not the null stream's): asked for the process only. */
    return GP_SLOT_OWNER(word) == pid &&
           (record ? !stream_only
                   : GP_SLOT_STATE(word) == GP_SLOT_LIVE && (!stream_only || s->stream == stream));
}

/* Writes a 32-bit word of b's file at offset (never through a mapping); 0 or -errno. */
static int write_word(const struct gp_board *b, uint32_t value, size_t offset)
{
    ssize_t n = pwrite(b->fd, &value, sizeof value, (off_t)offset);
    return n == (ssize_t)sizeof value ? 0 : n < 0 ? -errno : -ENODATA;
}

int gp_board_request_copy(struct gp_board *b, uint32_t pid, bool stream_only, uint64_t stream,
                          int priority)
{
    uint64_t queues = 0;
    bool asked = false;
    for (unsigned i = 0; i < gp_board_copy_slots(b->f); i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        uint64_t word = atomic_load(&s->owner);
        if (!requested(word, s, pid, stream_only, stream) || !gp_board_slot_is(b, s, pid))
            continue;
        size_t at = offsetof(struct gp_board_file, slots) + i * sizeof *s;
        uint32_t seq;
        int rc = write_word(b, (uint32_t)priority, at + offsetof(struct gp_board_slot, request));
        if (rc == 0)
            rc = read_at(b->fd, &seq, sizeof seq,
                         (off_t)(at + offsetof(struct gp_board_slot, request_seq)));
        if (rc == 0)
            rc = write_word(
                b, ((seq + 1) & ~GP_REQUEST_PROCESS) | (stream_only ? 0 : GP_REQUEST_PROCESS),
                at + offsetof(struct gp_board_slot, request_seq));
        if (rc != 0)
            return rc;
        asked = true;
        queues += GP_SLOT_STATE(word) == GP_SLOT_PROCESS ? atomic_load(&s->unused_queues) : 1;
    }
    if (!asked)
        return -ESRCH;
    uint32_t seq;
    int rc = read_at(b->fd, &seq, sizeof seq, (off_t)offsetof(struct gp_board_header, seq));
    if (rc == 0)
        rc = write_word(b, seq + 1, offsetof(struct gp_board_header, seq));
    if (rc != 0)
        return rc;
    futex(&b->live->seq, FUTEX_WAKE, INT_MAX, NULL);
    return queues < INT_MAX ? (int)queues : INT_MAX;
}

int gp_board_request(struct gp_board *b, uint32_t pid, bool stream_only, uint64_t stream,
                     int priority)
{
    uint64_t queues = 0; /* the counts are the owners' word: summed wide, so garbage cannot wrap */
    bool asked = false;
    for (unsigned i = 0; i < gp_board_slots_used(b); i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        uint64_t word = atomic_load(&s->owner);
        bool record = GP_SLOT_STATE(word) == GP_SLOT_PROCESS;
        if (!requested(word, s, pid, stream_only, stream))
            continue;
        atomic_store(&s->request, priority);
        uint32_t seq = atomic_load(&s->request_seq), next;
        do
            next = ((seq + 1) & ~GP_REQUEST_PROCESS) | (stream_only ? 0 : GP_REQUEST_PROCESS);
        while (!atomic_compare_exchange_weak(&s->request_seq, &seq, next));
        asked = true;
        queues += record ? atomic_load(&s->unused_queues) : 1;
    }
    if (asked)
        gp_board_notify(b);
    return !asked ? -ESRCH : queues < INT_MAX ? (int)queues : INT_MAX;
}
