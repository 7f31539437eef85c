/*
 * board_owner.c - who owns a slot, and whether it still lives: this library image's identity
 * (pid, incarnation, pid namespace), /proc, and the slots' liveness locks (fcntl locks on the
 * board file, which the kernel drops when a process dies, whatever pid namespace it is in). Only a
 * write lock proves an owner alive: any user who can read the board can take read locks, and keep
 * them past the owner's death.
 */
#include "board_impl.h"

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
        self.incarnation = gp_now_ns() ^ ((uint64_t)self.pid << 40) ^ (uintptr_t)&self;
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

bool gp_board_pid_runs(uint32_t pid, uint64_t *start)
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

struct flock gp_board_slot_lock(const struct gp_board *b, const struct gp_board_slot *s, short type)
{
    return (struct flock){.l_type = type,
                          .l_whence = SEEK_SET,
                          .l_start = (off_t)((const char *)s - (const char *)b->f),
                          .l_len = 1};
}

/* 1 when another open file description holds a lock on the slot's liveness byte that conflicts
 * with a lock of type probe, 0 when none does, or -errno when the kernel cannot tell. Probed with
 * F_RDLCK, only a write lock is found, which only the board's writers can take (it needs the file
 * open for writing); probed with F_WRLCK, any lock, read locks included, which anyone who can
 * read the file can take and keep. */
static int slot_locked(const struct gp_board *b, const struct gp_board_slot *s, short probe)
{
    struct flock l = gp_board_slot_lock(b, s, probe);
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
    uint8_t liveness = atomic_load(&s->liveness_lock);
    /* A library before write locks holds a read lock, and took any lock for its owner's: such a
     * slot is judged so still (a neighbour's read locks keep it alive; we never write 1). */
    if (liveness == GP_LIVENESS_WRITE_LOCK || liveness == GP_LIVENESS_READ_LOCK) {
        int locked = slot_locked(b, s, liveness == GP_LIVENESS_WRITE_LOCK ? F_RDLCK : F_WRLCK);
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
    if (!gp_board_pid_runs(pid, &start))
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
    bool ours = pid && s->pid_ns == gp_board_self()->pid_ns; /* a pid this namespace can judge */
    int written = slot_locked(b, s, F_RDLCK);
    if (written > 0)
        return false;
    /* A read lock alone is a library's before write locks, or anyone's who reads the file: its
     * pid tells, where it can; else it counts for nothing, as no lock. */
    int any = written == 0 ? slot_locked(b, s, F_WRLCK) : written;
    if (any > 0 && ours)
        return !gp_board_pid_runs(pid, NULL);
    if (any >= 0 && claimed_ns >= GP_BOARD_CLAIM_MAX_NS)
        return true;
    return ours && !gp_board_pid_runs(pid, NULL);
}
