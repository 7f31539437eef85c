/*
 * board_open.c - opening a board: checking the file before it is mapped (owner, mode, size,
 * header), creating this user's own board or taking an alternate name, the private copies of
 * boards whose lines cannot be registered (on disk), and closing.
 */
#include "board_impl.h"

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

/* Whether path names a file in the administrator's shared board directory (gp_conf_file.h),
 * whichever users the file admits: for the library of an admitted user, every board it opens; for
 * root's tools, which read it though root is not admitted (docs/cli.md), those they list there.
 * Boards there are readable by every user (mode 0644). The directory is compared by identity,
 * however either path spells it. */
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

int gp_board_read_at(int fd, void *into, size_t size, off_t offset)
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
    int rc = gp_board_read_at(b->fd, &into->h, sizeof into->h, 0);
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
    rc = gp_board_read_at(b->fd, into->slots, n * sizeof into->slots[0],
                          (off_t)offsetof(struct gp_board_file, slots));
    if (rc == 0)
        rc = gp_board_read_at(b->fd, into->gates, n * sizeof into->gates[0], GP_BOARD_GATES_OFFSET);
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
             (unsigned long long)(gp_now_ns() ^ me->incarnation));
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
        r = gp_now_ns() ^ gp_board_self()->incarnation;
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
