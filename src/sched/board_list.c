/*
 * board_list.c - listing the boards of a directory, sorted by name and screened (board_screen.h),
 * whole or a bounded number of entries at a time (the cursor).
 */
#include "board_impl.h"

/* ---- listing ---- */

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
