/*
 * board_screen.c - see board_screen.h.
 *
 * What a reader knows lives in two tables keyed by strings: the listing's counts (a file's
 * identity taken, a user's boards of a device, a device's users, a user's devices, an owner's
 * failures), forgotten at its end, and the refused files and their owners, kept from listing to
 * listing. A directory of any size costs a look per name, never a pass over what was taken or
 * refused before it (root's gpuprio top once took a minute over a few hundred links to one board,
 * and the library's listener 170 ms a listing over 10,000 links to one board of another device,
 * opened for every name past the 256 it remembered by name).
 */
#include "board_screen.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "gp_clock.h"
#include "gp_conf_file.h"
#include "gp_log.h"

struct gp_screen_entry {
    uint64_t hash;
    char *key; /* NULL: a free entry */
    /* A count of the listing; an owner's warnings said; a refused file's last listing seen. */
    unsigned n;
    unsigned files; /* an owner's files remembered */
    /* A refused file: refused under every name (it is no board, or its owner is not admitted),
     * or under the names of other devices than the one its header says (the hash of that
     * device; 0: none known). Neither: only what was said of it is kept (a file named as another
     * user's, which is refused by its name alone). */
    bool bad;
    uint64_t device;
    bool said; /* a refused file: it was warned about; an owner: the line for its others was */
};

/* A device as a board's name says it (part of a file name), and the keys of the tables: a kind's
 * letter, then numbers and a device. */
#define DEVICE_MAX (NAME_MAX + 1)
#define KEY_MAX (DEVICE_MAX + 48)

/* The keys are other users' file names: hashed with a seed of this process's, and mixed at the
 * end, so that nobody can choose names that fall in one bucket and make each look a long probe. */
static uint64_t hash_seed(void)
{
    static _Atomic uint64_t seed;
    uint64_t s = atomic_load_explicit(&seed, memory_order_relaxed);
    if (s)
        return s;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s)
        s = gp_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&s;
    s |= 1;
    uint64_t none = 0;
    return atomic_compare_exchange_strong(&seed, &none, s) ? s : none;
}

static uint64_t hash_of(const char *key)
{
    uint64_t h = 14695981039346656037ull ^ hash_seed(); /* FNV-1a */
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 1099511628211ull;
    h ^= h >> 30; /* splitmix64's finish: every bit of the key and seed in the low ones */
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* The entry of key in the table (only free ones past it, so a look ends at the first free one). */
static struct gp_screen_entry *entry_of(struct gp_screen_entry *e, size_t cap, uint64_t hash,
                                        const char *key)
{
    for (size_t i = hash & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!e[i].key || (e[i].hash == hash && strcmp(e[i].key, key) == 0))
            return &e[i];
}

/* The entries of t that keep (all: keep NULL) moved into a table of cap entries, the others
 * freed; 0 or -ENOMEM (t unchanged). */
static int rebuild(struct gp_screen_table *t, size_t cap,
                   bool (*keep)(struct gp_screen_entry *e, void *arg), void *arg)
{
    struct gp_screen_entry *e = calloc(cap, sizeof *e);
    if (!e)
        return -ENOMEM;
    size_t used = 0;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->e[i].key)
            continue;
        if (keep && !keep(&t->e[i], arg)) {
            free(t->e[i].key);
            continue;
        }
        *entry_of(e, cap, t->e[i].hash, t->e[i].key) = t->e[i];
        used++;
    }
    free(t->e);
    t->e = e;
    t->cap = cap;
    t->used = used;
    return 0;
}

/* Makes room for one more entry: the table at most half full. */
static int make_room(struct gp_screen_table *t)
{
    if ((t->used + 1) * 2 <= t->cap)
        return 0;
    return rebuild(t, t->cap ? t->cap * 2 : 64, NULL, NULL);
}

static void free_table(struct gp_screen_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->e[i].key);
    free(t->e);
    *t = (struct gp_screen_table){NULL, 0, 0};
}

/* key's entry, or NULL. */
static struct gp_screen_entry *find(const struct gp_screen_table *t, const char *key)
{
    if (!t->cap)
        return NULL;
    struct gp_screen_entry *e = entry_of(t->e, t->cap, hash_of(key), key);
    return e->key ? e : NULL;
}

/* key's entry, made (zeroed) if there was none; NULL when out of memory. */
static struct gp_screen_entry *find_or_add(struct gp_screen_table *t, const char *key)
{
    if (make_room(t) != 0)
        return NULL;
    uint64_t hash = hash_of(key);
    struct gp_screen_entry *e = entry_of(t->e, t->cap, hash, key);
    if (!e->key) {
        char *copy = strdup(key);
        if (!copy)
            return NULL;
        *e = (struct gp_screen_entry){.hash = hash, .key = copy};
        t->used++;
    }
    return e;
}

static unsigned count(const struct gp_screen *s, const char *key)
{
    const struct gp_screen_entry *e = find(&s->counts, key);
    return e ? e->n : 0;
}

/* Adds one to key's count; the count before, or -ENOMEM. */
static long add(struct gp_screen *s, const char *key)
{
    struct gp_screen_entry *e = find_or_add(&s->counts, key);
    return e ? (long)e->n++ : -ENOMEM;
}

/* A file's identity: taken in the listing ('i'), or refused ('r'). */
static void identity_key(char *key, char kind, dev_t dev, ino_t ino, uid_t uid)
{
    snprintf(key, KEY_MAX, "%c %ju %ju %u", kind, (uintmax_t)dev, (uintmax_t)ino, (unsigned)uid);
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

/* An owner's failures in the listing ('f'), or the owner of refused files ('o'). */
static void owner_key(char *key, char kind, uid_t uid)
{
    snprintf(key, KEY_MAX, "%c %u", kind, (unsigned)uid);
}

/* A device's hash as refused files keep it (never 0, which says none). */
static uint64_t device_hash(const char *device)
{
    uint64_t h = hash_of(device);
    return h ? h : 1;
}

/* Forgets what the listing took. */
static void forget_listing(struct gp_screen *s)
{
    free_table(&s->counts);
    s->users_full = false;
}

void gp_screen_begin(struct gp_screen *s)
{
    forget_listing(s); /* a listing left unended */
    s->listing++;
    s->skipped = false;
    if (s->key)
        gp_board_key_device(GP_BOARD_VERSION, s->key, s->want, sizeof s->want);
}

/* Whether a table's entry is a refused file that the last listing did not see. */
static bool unseen(const struct gp_screen_entry *e, const struct gp_screen *s)
{
    return e->key[0] == 'r' && e->n != s->listing;
}

static bool seen(struct gp_screen_entry *e, void *arg)
{
    return !unseen(e, arg);
}

/* Adds delta to the files remembered of the owner of each refused file that the last listing did
 * not see. */
static void count_unseen(struct gp_screen *s, int delta)
{
    struct gp_screen_table *t = &s->refused;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->e[i].key || !unseen(&t->e[i], s))
            continue;
        char key[KEY_MAX];
        owner_key(key, 'o', (uid_t)strtoul(strrchr(t->e[i].key, ' ') + 1, NULL, 10));
        struct gp_screen_entry *owner = find(t, key);
        if (owner)
            owner->files += (unsigned)delta;
    }
}

/* Forgets the refused files that a complete listing did not see, each one less of its owner's
 * (whose entry stays: its warnings are said once per reader). Out of memory, they stay. */
static void forget_unseen(struct gp_screen *s)
{
    count_unseen(s, -1);
    if (rebuild(&s->refused, s->refused.cap, seen, s) != 0)
        count_unseen(s, 1);
}

void gp_screen_end(struct gp_screen *s, bool complete)
{
    if (s->users_full && !s->said_users)
        gp_log(GP_LOG_WARN,
               "more than %d other users have boards of one device in %s: the boards of those "
               "after the first %d listed are ignored",
               GP_SCREEN_USERS, gp_board_dir(), GP_SCREEN_USERS);
    s->said_users |= s->users_full;
    forget_listing(s);
    /* A file that a listing of every name did not see is gone: remembered, 256 short-lived files
     * filled the memory for the reader's life, and its number could come back as another file's. */
    if (complete && s->refused.cap)
        forget_unseen(s);
}

/* The uid and device that a board's file name says, for a reader of s's device (or of every
 * device); false when the name is no board's for it. */
static bool named(const struct gp_screen *s, const char *path, uid_t *uid, char device[DEVICE_MAX])
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    return gp_board_name_parse(name, uid, device, DEVICE_MAX) &&
           (!s->key || strcmp(device, s->want) == 0);
}

/* Counts a board taken (or held): its identity, and its user's boards of the device, and, for
 * its user's first there, the device's users (the reader not among them) and the user's devices. */
static int count_board(struct gp_screen *s, dev_t dev, ino_t ino, uid_t uid, const char *device)
{
    char key[KEY_MAX];
    identity_key(key, 'i', dev, ino, uid);
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

/* Whether the file of this identity, under a name of uid (its owner) and device, is one taken in
 * this listing, or refused before under such a name (and notes that the listing saw it). By
 * identity and owner, not by name: another file at the name is looked at afresh, and so is a
 * file of another owner that reuses a removed one's inode number (on a file system that reuses
 * them, an attacker's refused files must not stand for a real user's board made later). */
static bool seen_before(struct gp_screen *s, dev_t dev, ino_t ino, uid_t uid, const char *device)
{
    char key[KEY_MAX];
    identity_key(key, 'i', dev, ino, uid);
    if (count(s, key))
        return true;
    identity_key(key, 'r', dev, ino, uid);
    struct gp_screen_entry *r = find(&s->refused, key);
    if (!r)
        return false;
    r->n = s->listing;
    return r->bad || (r->device && r->device != device_hash(device));
}

/* Remembers a refused file (st: its identity and owner): under every name (bad), under names of
 * other devices than device (not NULL), or neither (named as another user's: only what was said
 * of it). True when it is to be said: once per file, and at most GP_SCREEN_SAID_PER_USER times
 * per owner (then one line, said here, for all of that owner's others). */
static bool remember(struct gp_screen *s, const struct stat *st, bool bad, const char *device)
{
    char key[KEY_MAX];
    identity_key(key, 'r', st->st_dev, st->st_ino, st->st_uid);
    struct gp_screen_entry *r = find(&s->refused, key);
    if (r) { /* known (as named falsely, say): what is new about it, said already or not */
        r->n = s->listing;
        r->bad |= bad;
        r->device = device ? device_hash(device) : r->device;
        return false;
    }
    owner_key(key, 'o', st->st_uid);
    struct gp_screen_entry *owner = find(&s->refused, key);
    bool full = s->refused.used + (owner ? 1 : 2) > GP_SCREEN_MAX_REFUSED;
    if (full || (owner && owner->files >= GP_SCREEN_REFUSED_PER_USER)) {
        if (full && !s->said_too_many)
            gp_log(GP_LOG_WARN,
                   "more than %d files in %s are refused as other users' boards: the others "
                   "are ignored without a warning",
                   GP_SCREEN_MAX_REFUSED, gp_board_dir());
        s->said_too_many |= full;
        return false; /* not remembered: looked at again (within the owner's failures), unsaid */
    }
    if (!owner && !(owner = find_or_add(&s->refused, key)))
        return false;
    identity_key(key, 'r', st->st_dev, st->st_ino, st->st_uid);
    if (!(r = find_or_add(&s->refused, key)))
        return false;
    /* find_or_add may have moved the owner's entry: found again. */
    owner_key(key, 'o', st->st_uid);
    owner = find(&s->refused, key);
    owner->files++;
    r->n = s->listing;
    r->bad = bad;
    r->device = device ? device_hash(device) : 0;
    r->said = owner->n < GP_SCREEN_SAID_PER_USER;
    owner->n += r->said;
    if (!r->said && !owner->said)
        gp_log(GP_LOG_WARN,
               "user %u's files in %s were refused as boards %d times: its others are ignored "
               "without a warning",
               (unsigned)st->st_uid, gp_board_dir(), GP_SCREEN_SAID_PER_USER);
    owner->said |= !r->said;
    return r->said;
}

bool gp_screen_refuse(struct gp_screen *s, const struct stat *st)
{
    return remember(s, st, true, NULL);
}

void gp_screen_free(struct gp_screen *s)
{
    forget_listing(s);
    free_table(&s->refused);
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
 * name says: by its name, not remembered as refused under its true ones, so that a link of a
 * user's board made under another user's name (where the system lets anyone link others' files)
 * does not hide it under its own. */
static void refuse_misnamed(struct gp_screen *s, const char *path, uid_t uid, const struct stat *st)
{
    if (remember(s, st, false, NULL))
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
        return false; /* more than a user's processes make (gp_board_open): the first listed */
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
                   "the first %d listed are ignored",
                   (unsigned)uid, GP_SCREEN_DEVICES, gp_board_dir(), GP_SCREEN_DEVICES);
        s->said_devices = true;
        return false;
    }
    return true;
}

/* Counts a failure of uid's files in this listing (an open that failed, or a file refused once
 * open); false when out of memory. */
static bool failed(struct gp_screen *s, uid_t uid)
{
    char key[KEY_MAX];
    owner_key(key, 'f', uid);
    return add(s, key) >= 0;
}

/* Whether an open's failure (rc) is about the file itself (its type, owner, mode, size or
 * header), which stays until the file changes: else (out of file descriptors or memory, removed
 * since the look, interrupted...) it says nothing of the file, which is looked at again later. */
static bool about_the_file(int rc)
{
    return rc == -EINVAL || rc == -EPERM || rc == -EACCES || rc == -ELOOP || rc == -ENODATA ||
           rc == -ENXIO || rc == -ENODEV || rc == -EISDIR || rc == -ETXTBSY;
}

/* The file at path could not be opened for a reason that is not its own (rc): left for a later
 * listing, said once per reader (a file removed since the look, never: anyone may remove its
 * own). */
static void skip_for_now(struct gp_screen *s, const char *path, int rc)
{
    s->skipped = true;
    if (rc == -ENOENT || s->said_transient)
        return;
    s->said_transient = true;
    gp_log(GP_LOG_WARN, "%s cannot be opened now (%s): it is looked at again later", path,
           strerror(-rc));
}

/* gp_screen_take_seen for a name of uid and device. */
static int take_seen(struct gp_screen *s, const char *path, uid_t uid, const char *device,
                     const struct stat *seen, struct gp_board *b)
{
    if (seen_before(s, seen->st_dev, seen->st_ino, seen->st_uid, device))
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
    char key[KEY_MAX];
    owner_key(key, 'f', uid);
    if (count(s, key) >= GP_SCREEN_FAILS_PER_USER) {
        s->skipped = true; /* this listing opened enough of its files */
        return 1;
    }
    const char *why = "cannot be opened";
    int rc = s->writable ? gp_board_open_copy_writable(path, b, &why)
                         : gp_board_open_copy(path, b, &why);
    if (rc != 0) {
        if (rc == -ENOMEM || !failed(s, uid))
            return -ENOMEM;
        if (!about_the_file(rc))
            skip_for_now(s, path, rc);
        else if (gp_screen_refuse(s, seen))
            gp_log(GP_LOG_WARN, "the board %s of user %u %s: it is ignored", path, (unsigned)uid,
                   why);
        return 1;
    }
    /* The file opened is the one the checks are about: another may have been put at the name
     * since the look (by anyone who can write the directory), so its owner, by the open file, is
     * checked again, and a file taken already is not taken twice. */
    struct stat opened = {.st_dev = b->dev, .st_ino = b->ino, .st_uid = b->uid};
    bool refused = true;
    char true_device[GP_BOARD_DEVICE_MAX];
    const struct gp_conf *conf = gp_conf_get();
    if (b->uid != uid) {
        refuse_misnamed(s, path, uid, &opened);
    } else if ((b->dev != seen->st_dev || b->ino != seen->st_ino) &&
               seen_before(s, b->dev, b->ino, b->uid, device)) {
        /* taken already, or refused: nothing to say again */
    } else if (!gp_board_device_is(b->f, device)) {
        /* Its name must say its device too: a board linked under made-up devices' names is not
         * more boards. Refused under the names of every device but its own, which the header
         * says: under those it is skipped without an open (it was opened under each, 170 ms a
         * listing for 10,000 links), and under its own it is still taken. */
        gp_board_device_of(b->f, true_device, sizeof true_device);
        if (remember(s, &opened, false, true_device))
            gp_log(GP_LOG_WARN,
                   "%s of user %u is named as a board of another device than its own: it is "
                   "ignored",
                   path, (unsigned)uid);
    } else if (s->admitted_only && !gp_conf_admits(conf, uid)) {
        if (gp_screen_refuse(s, &opened))
            gp_log(GP_LOG_WARN,
                   "the board %s belongs to user %u, whom %s does not admit: it is ignored", path,
                   (unsigned)uid, conf ? conf->path : "the configuration file");
    } else {
        refused = false;
    }
    if (refused || count_board(s, b->dev, b->ino, b->uid, device) != 0) {
        gp_board_close(b);
        return refused && failed(s, uid) ? 1 : -ENOMEM;
    }
    return 0;
}

int gp_screen_take_seen(struct gp_screen *s, const char *path, const struct stat *seen,
                        struct gp_board *b)
{
    uid_t uid;
    char device[DEVICE_MAX];
    if (!named(s, path, &uid, device) || (s->skip_own && uid == geteuid()))
        return 1;
    return take_seen(s, path, uid, device, seen, b);
}

int gp_screen_take_entry(struct gp_screen *s, const struct gp_board_entry *e, struct gp_board *b)
{
    uid_t uid;
    char device[DEVICE_MAX];
    if (!named(s, e->path, &uid, device) || (s->skip_own && uid == geteuid()))
        return 1;
    /* A name of a file known by the inode number the directory gives, as a file of the uid the
     * name says (taken in this listing, or refused under this name), is skipped without a look:
     * the thousands of links of one refused file cost a look each (and an open each, before). A
     * file of another owner at that number is not this one: a look, below. */
    if (e->dev && e->ino && seen_before(s, e->dev, e->ino, uid, device))
        return 1;
    struct stat seen;
    if (lstat(e->path, &seen) != 0) {
        if (errno != ENOENT)
            skip_for_now(s, e->path, -errno);
        return 1;
    }
    return take_seen(s, e->path, uid, device, &seen, b);
}

int gp_screen_take(struct gp_screen *s, const char *path, struct gp_board *b)
{
    struct gp_board_entry e = {path, 0, 0};
    return gp_screen_take_entry(s, &e, b);
}

struct screen_listing {
    struct gp_screen *s;
    int (*fn)(struct gp_board *b, void *arg);
    void *arg;
};

static int take_listed(const struct gp_board_entry *e, void *arg)
{
    struct screen_listing *l = arg;
    struct gp_board b;
    int rc = gp_screen_take_entry(l->s, e, &b);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    return l->fn(&b, l->arg);
}

int gp_screen_list(struct gp_screen *s, const char *dir, uid_t uid,
                   int (*fn)(struct gp_board *b, void *arg), void *arg)
{
    struct screen_listing l = {s, fn, arg};
    gp_screen_begin(s);
    int rc = gp_board_list_entries(dir, uid, take_listed, &l);
    gp_screen_end(s, rc == 0);
    return rc;
}
