/*
 * board_screen.c - see board_screen.h.
 *
 * A listing's counts live in one hash table keyed by strings (a file's identity, a user's boards
 * of a device, a device's users, a user's devices): a directory of any size costs a look per file,
 * never a pass over what was taken before it (root's gpuprio top once took a minute over a few
 * hundred links to one board).
 */
#include "board_screen.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gp_conf.h"
#include "gp_log.h"

struct gp_screen_count {
    uint64_t hash;
    char *key; /* NULL: a free entry */
    unsigned n;
};

/* A device as a board's name says it (part of a file name), and the keys of counts: a kind's
 * letter, then numbers and a device. */
#define DEVICE_MAX (NAME_MAX + 1)
#define KEY_MAX (DEVICE_MAX + 48)

static uint64_t hash_of(const char *key)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 1099511628211ull;
    return h;
}

/* The entry of key in s's table (only free ones past it, so a look ends at the first free one). */
static struct gp_screen_count *entry_of(struct gp_screen_count *table, size_t cap, uint64_t hash,
                                        const char *key)
{
    for (size_t i = hash & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!table[i].key || (table[i].hash == hash && strcmp(table[i].key, key) == 0))
            return &table[i];
}

/* Makes room for one more entry: the table at most half full. */
static int make_room(struct gp_screen *s)
{
    if ((s->used + 1) * 2 <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 64;
    struct gp_screen_count *table = calloc(cap, sizeof *table);
    if (!table)
        return -ENOMEM;
    for (size_t i = 0; i < s->cap; i++)
        if (s->counts[i].key)
            *entry_of(table, cap, s->counts[i].hash, s->counts[i].key) = s->counts[i];
    free(s->counts);
    s->counts = table;
    s->cap = cap;
    return 0;
}

static unsigned count(const struct gp_screen *s, const char *key)
{
    if (!s->cap)
        return 0;
    const struct gp_screen_count *c = entry_of(s->counts, s->cap, hash_of(key), key);
    return c->key ? c->n : 0;
}

/* Adds one to key's count; the count before, or -ENOMEM. */
static long add(struct gp_screen *s, const char *key)
{
    if (make_room(s) != 0)
        return -ENOMEM;
    uint64_t hash = hash_of(key);
    struct gp_screen_count *c = entry_of(s->counts, s->cap, hash, key);
    if (!c->key) {
        if (!(c->key = strdup(key)))
            return -ENOMEM;
        c->hash = hash;
        c->n = 0;
        s->used++;
    }
    return c->n++;
}

static void identity_key(char *key, dev_t dev, ino_t ino, uid_t uid)
{
    snprintf(key, KEY_MAX, "i %ju %ju %u", (uintmax_t)dev, (uintmax_t)ino, (unsigned)uid);
}

static void boards_key(char *key, uid_t uid, const char *device)
{
    snprintf(key, KEY_MAX, "b %u %s", (unsigned)uid, device);
}

static void users_key(char *key, const char *device)
{
    snprintf(key, KEY_MAX, "u %s", device);
}

static void devices_key(char *key, uid_t uid)
{
    snprintf(key, KEY_MAX, "d %u", (unsigned)uid);
}

/* Forgets what the listing took. */
static void forget_listing(struct gp_screen *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->counts[i].key);
    free(s->counts);
    s->counts = NULL;
    s->cap = 0;
    s->used = 0;
    s->users_full = false;
}

void gp_screen_begin(struct gp_screen *s)
{
    forget_listing(s); /* a listing left unended */
}

void gp_screen_end(struct gp_screen *s)
{
    if (s->users_full && !s->said_users)
        gp_log(GP_LOG_WARN,
               "more than %d other users have boards of one device in %s: the boards of those "
               "after the first %d in name order are ignored",
               GP_SCREEN_USERS, gp_board_dir(), GP_SCREEN_USERS);
    s->said_users |= s->users_full;
    forget_listing(s);
}

/* The uid and device that a board's file name says, for a reader of s's device (or of every
 * device); false when the name is no board's for it. */
static bool named(const struct gp_screen *s, const char *path, uid_t *uid, char device[DEVICE_MAX])
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    if (!gp_board_name_parse(name, uid, device, DEVICE_MAX))
        return false;
    uid_t again;
    return !s->key || gp_board_name_of(name, s->key, &again);
}

/* Counts a board taken (or held): its identity, and its user's boards of the device, and, for
 * its user's first there, the device's users (the reader not among them) and the user's devices. */
static int count_board(struct gp_screen *s, dev_t dev, ino_t ino, uid_t uid, const char *device)
{
    char key[KEY_MAX];
    identity_key(key, dev, ino, uid);
    if (add(s, key) < 0)
        return -ENOMEM;
    boards_key(key, uid, device);
    long before = add(s, key);
    if (before != 0)
        return before < 0 ? -ENOMEM : 0;
    users_key(key, device);
    if (uid != geteuid() && add(s, key) < 0)
        return -ENOMEM;
    devices_key(key, uid);
    return add(s, key) < 0 ? -ENOMEM : 0;
}

int gp_screen_hold(struct gp_screen *s, const struct gp_board *b)
{
    uid_t uid;
    char device[DEVICE_MAX];
    if (!named(s, b->path, &uid, device))
        return 0; /* not a name this reader takes: it does not stand for one */
    return count_board(s, b->dev, b->ino, b->uid, device);
}

/* The file name in path. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Whether a file of this identity was refused before, under any name or under the name of path. */
static bool refused_before(const struct gp_screen *s, dev_t dev, ino_t ino, uid_t uid,
                           const char *path)
{
    for (unsigned i = 0; i < s->n_refused; i++)
        if (s->refused[i].dev == dev && s->refused[i].ino == ino && s->refused[i].uid == uid &&
            (!s->refused[i].name || strcmp(s->refused[i].name, base_name(path)) == 0))
            return true;
    return false;
}

/* Whether a file of this identity was taken in this listing, or refused before (under path's
 * name). A file's identity and owner, not its name: another file at the name is looked at afresh,
 * and so is a file of another owner that reuses a removed one's inode number (on a file system
 * that reuses them, an attacker's refused files must not stand for a real user's board made
 * later). */
static bool seen_before(const struct gp_screen *s, dev_t dev, ino_t ino, uid_t uid,
                        const char *path)
{
    char key[KEY_MAX];
    identity_key(key, dev, ino, uid);
    return count(s, key) || refused_before(s, dev, ino, uid, path);
}

/* gp_screen_refuse, of the file only under path's name (NULL: under any). */
static bool refuse_as(struct gp_screen *s, const struct stat *st, const char *path)
{
    if (refused_before(s, st->st_dev, st->st_ino, st->st_uid, path ? path : ""))
        return false;
    if (s->n_refused == GP_SCREEN_MAX_REFUSED) {
        if (!s->said_too_many)
            gp_log(GP_LOG_WARN,
                   "more than %d files in %s are refused as other users' boards: the others "
                   "are ignored without a warning",
                   GP_SCREEN_MAX_REFUSED, gp_board_dir());
        s->said_too_many = true;
        return false;
    }
    char *name = NULL;
    if (path && !(name = strdup(base_name(path))))
        return false; /* not remembered: looked at and said again, never taken for a board */
    /* The owner's files refused before: how many were said, and whether one was not (the line
     * for its others was said then, and is not said again). */
    unsigned said = 0;
    bool summed_up = false;
    for (unsigned i = 0; i < s->n_refused; i++)
        if (s->refused[i].uid == st->st_uid) {
            said += s->refused[i].said;
            summed_up |= !s->refused[i].said;
        }
    unsigned at = s->n_refused++;
    s->refused[at].dev = st->st_dev;
    s->refused[at].ino = st->st_ino;
    s->refused[at].uid = st->st_uid;
    s->refused[at].name = name;
    s->refused[at].said = said < GP_SCREEN_SAID_PER_USER;
    if (!s->refused[at].said && !summed_up)
        gp_log(GP_LOG_WARN,
               "user %u's files in %s were refused as boards %d times: its others are ignored "
               "without a warning",
               (unsigned)st->st_uid, gp_board_dir(), GP_SCREEN_SAID_PER_USER);
    return s->refused[at].said;
}

bool gp_screen_refuse(struct gp_screen *s, const struct stat *st)
{
    return refuse_as(s, st, NULL);
}

void gp_screen_free(struct gp_screen *s)
{
    forget_listing(s);
    for (unsigned i = 0; i < s->n_refused; i++)
        free(s->refused[i].name);
    s->n_refused = 0;
}

void gp_screen_drop(struct gp_screen *s, const struct gp_board *b, const char *why)
{
    struct stat st = {.st_dev = b->dev, .st_ino = b->ino, .st_uid = b->uid};
    /* Not opened again while it is this file: its owner may flap it between a board and not one
     * as fast as it likes, which costs it its own scheduling with us, and us one look. */
    if (gp_screen_refuse(s, &st))
        gp_log(GP_LOG_WARN, "the board %s of user %u %s: it is ignored from now on", b->path,
               (unsigned)b->uid, why);
}

/* Refuses path's name for a file (st, as looked at or opened) whose owner is not the uid the
 * name says: under this name only, so that a link of a user's board made under another user's
 * name (where the system lets anyone link others' files) does not hide it under its own. */
static void refuse_misnamed(struct gp_screen *s, const char *path, uid_t uid, const struct stat *st)
{
    if (refuse_as(s, st, path))
        gp_log(GP_LOG_WARN,
               "%s is named as user %u's board but belongs to user %u: it is ignored (the "
               "administrator should remove it)",
               path, (unsigned)uid, (unsigned)st->st_uid);
}

/* Whether the limits leave room for another board of uid on device (noting which did not). */
static bool within_limits(struct gp_screen *s, uid_t uid, const char *device)
{
    char key[KEY_MAX];
    boards_key(key, uid, device);
    unsigned boards = count(s, key);
    if (boards >= GP_SCREEN_PER_USER)
        return false; /* more than a user's processes make (gp_board_open): the first in order */
    if (boards)
        return true;
    users_key(key, device);
    if (uid != geteuid() && count(s, key) >= GP_SCREEN_USERS) {
        s->users_full = true;
        return false;
    }
    devices_key(key, uid);
    if (count(s, key) >= GP_SCREEN_DEVICES) {
        if (!s->said_devices)
            gp_log(GP_LOG_WARN,
                   "user %u has boards of more than %d devices in %s: those of the devices after "
                   "the first %d in name order are ignored",
                   (unsigned)uid, GP_SCREEN_DEVICES, gp_board_dir(), GP_SCREEN_DEVICES);
        s->said_devices = true;
        return false;
    }
    return true;
}

int gp_screen_take_seen(struct gp_screen *s, const char *path, const struct stat *seen,
                        struct gp_board *b)
{
    uid_t uid;
    char device[DEVICE_MAX];
    if (!named(s, path, &uid, device) || (s->skip_own && uid == geteuid()) ||
        seen_before(s, seen->st_dev, seen->st_ino, seen->st_uid, path))
        return 1;
    /* A board is its owner's by the file, and its name must say so: a user cannot pass its own
     * boards off as other users' (to crowd real users out of the limits), nor stand in another
     * user's name (a file taken before that user made its board: gp_board_open). */
    if (seen->st_uid != uid) {
        refuse_misnamed(s, path, uid, seen);
        return 1;
    }
    if (!within_limits(s, uid, device))
        return 1;
    const char *why = "cannot be opened";
    int rc = s->writable ? gp_board_open_copy_writable(path, b, &why)
                         : gp_board_open_copy(path, b, &why);
    if (rc != 0) {
        if (rc == -ENOMEM)
            return rc;
        if (gp_screen_refuse(s, seen))
            gp_log(GP_LOG_WARN, "the board %s of user %u %s: it is ignored", path, (unsigned)uid,
                   why);
        return 1;
    }
    /* The file opened is the one the checks are about: another may have been put at the name
     * since the look (by anyone who can write the directory), so its owner, by the open file, is
     * checked again, and a file taken already is not taken twice. */
    struct stat opened = {.st_dev = b->dev, .st_ino = b->ino, .st_uid = b->uid};
    if (b->uid != uid || ((b->dev != seen->st_dev || b->ino != seen->st_ino) &&
                          seen_before(s, b->dev, b->ino, b->uid, path))) {
        if (b->uid != uid)
            refuse_misnamed(s, path, uid, &opened);
        gp_board_close(b);
        return 1;
    }
    /* Its name must say its device too: a board linked under made-up devices' names is not more
     * boards (and, refused under such a name only, it is still taken under its own). */
    if (!gp_board_device_is(b->f, device)) {
        if (refuse_as(s, &opened, path))
            gp_log(GP_LOG_WARN,
                   "%s of user %u is named as a board of another device than its own: it is "
                   "ignored",
                   path, (unsigned)uid);
        gp_board_close(b);
        return 1;
    }
    const struct gp_conf *conf = gp_conf_get();
    if (s->admitted_only && !gp_conf_admits(conf, uid)) {
        if (gp_screen_refuse(s, &opened))
            gp_log(GP_LOG_WARN,
                   "the board %s belongs to user %u, whom %s does not admit: it is ignored", path,
                   (unsigned)uid, conf ? conf->path : "the configuration file");
        gp_board_close(b);
        return 1;
    }
    if (count_board(s, b->dev, b->ino, b->uid, device) != 0) {
        gp_board_close(b);
        return -ENOMEM;
    }
    return 0;
}

int gp_screen_take(struct gp_screen *s, const char *path, struct gp_board *b)
{
    uid_t uid;
    char device[DEVICE_MAX];
    struct stat seen;
    if (!named(s, path, &uid, device) || (s->skip_own && uid == geteuid()) ||
        lstat(path, &seen) != 0)
        return 1;
    return gp_screen_take_seen(s, path, &seen, b);
}
