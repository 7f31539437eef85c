/*
 * board_screen.h - which files of the board directory a reader takes for boards that it did not
 * write, and what it says of the others (docs/board.md, "Threat model"). Every such reader applies
 * these rules, the same code: the library's listener, for the other users' boards of its device
 * (tenants.c), and gpuprio top, metrics and set, for every board they show or ask. So no user can
 * pass its files off as another user's, make a reader read one board many times (hard links) or
 * many copies of it, crowd real users out of the limits with files of its own, make a reader wait
 * on a file, or flood anyone's log.
 *
 * A listing (gp_screen_begin, then gp_screen_take_entry for each name a listing of the directory
 * gives, then gp_screen_end; gp_screen_list does all three, in name order) takes a file when:
 * - its name is a board's (of the reader's device, or of any device and version where it reads
 *   every one), and the uid the name says owns the file;
 * - it is none of the files taken in this listing (or held from an earlier one), nor a file refused
 *   before for what it is under any name, or for its device under a name of another device, by
 *   identity (file system, inode and owner): a board hard-linked under many names is read once,
 *   and a refused file is not opened again under any name its refusal covers (a file refused for
 *   what a name of it says, its owner or device, is still taken under a true name of its own: a
 *   link made with a false name cannot hide the board). A name whose inode number (the
 *   directory's, d_ino) is such a file of the uid the name says is skipped without a look at it;
 * - its user has fewer than GP_SCREEN_PER_USER boards of the device taken (the first listed), is
 *   one of the first GP_SCREEN_USERS users of the device other than the reader (past them, one
 *   warning), and has boards of at most GP_SCREEN_DEVICES devices (past them, one warning): a
 *   user's files count once per user, whatever their number;
 * - its owner's files did not fail to open, or open and get refused, GP_SCREEN_FAILS_PER_USER
 *   times in this listing already (past that, its files are left for a later listing): so a user
 *   who makes many files that are no boards, each refused once, costs a reader a few opens per
 *   listing, however many it makes;
 * - it opens without blocking as a board (gp_board_open_copy: type, owner, mode, size, header),
 *   the open file is still its name's uid's and not a file taken already (a file swapped in after
 *   the look at its name is checked again), and its header is of the device its name says;
 * - where the reader asks (the library), the configuration file admits its owner.
 * A file refused for what it is (its type, owner, mode, size, header or device, or its owner not
 * admitted) is remembered, and said once, with one warning naming it and what is wrong, for at
 * most GP_SCREEN_SAID_PER_USER files of one owner, then one line for all of that owner's others.
 * At most GP_SCREEN_REFUSED_PER_USER files of one owner and GP_SCREEN_MAX_REFUSED in all (owners
 * included) are remembered, then one more line, and the rest are looked at again in each listing
 * (within the limit of failures above) without a warning; a file that a whole listing did not see
 * (removed) is forgotten. A failure that is not the file's (the reader out of file descriptors or
 * memory, the file removed between the look and the open) refuses nothing: the file is left for
 * the next listing, with one warning per reader (none for a removed file), and the listing says
 * that it left something out (skipped), so that its reader lists again soon.
 */
#ifndef GPUPRIO_BOARD_SCREEN_H
#define GPUPRIO_BOARD_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "board.h"

/* Users other than the reader whose boards of one device are read (held ones first, then the
 * first listed). */
#define GP_SCREEN_USERS 32
/* Boards per user and device: its usual name and an alternate (board.h's gp_board_name_of; a
 * user's processes use one at a time, but a process may still be on the usual one when the others
 * moved). */
#define GP_SCREEN_PER_USER 2
/* Devices per user, for readers of every device: as many as one process schedules
 * (sched_board.h's SB_MAX_DEVICES), so that a user's copies under made-up device names cannot
 * grow what a tool reads without bound. */
#define GP_SCREEN_DEVICES 64
/* Files of one owner that may fail to open, or be refused once open, in one listing. */
#define GP_SCREEN_FAILS_PER_USER 4
/* Refused files remembered (so that each is said once and not opened again): of one owner, and
 * in all, their owners included. */
#define GP_SCREEN_REFUSED_PER_USER 256
#define GP_SCREEN_MAX_REFUSED 1024
/* Warnings about one owner's refused files, at most (then one more for all its others). */
#define GP_SCREEN_SAID_PER_USER 4

struct gp_screen_entry; /* board_screen.c */

/* A table of entries keyed by strings (board_screen.c). */
struct gp_screen_table {
    struct gp_screen_entry *e;
    size_t cap, used;
};

struct gp_screen {
    /* Set by the reader before its first listing. */
    const char *key;    /* the device whose boards are read, or NULL: every device */
    bool skip_own;      /* the caller's own boards are not taken (the library writes its own) */
    bool admitted_only; /* a board of a user the configuration file does not admit is refused */
    bool writable;      /* boards are opened for writing too (gpuprio set) */
    /* Files refused, by identity, and their owners (what was said of them), from listing to
     * listing. */
    struct gp_screen_table refused;
    unsigned listing; /* the listing in progress, or the last one, counted from 1 */
    bool said_too_many, said_users, said_devices, said_transient;
    /* The listing in progress (gp_screen_begin to gp_screen_end): counts of what it took, by
     * identity, user and device, and of its owners' failures, so that each file costs the same
     * however many there are. */
    struct gp_screen_table counts;
    char want[GP_BOARD_DEVICE_MAX]; /* key's device as names say it */
    bool users_full;                /* the users' limit left boards out (said at the end) */
    /* The last listing (until the next gp_screen_begin) left a file out for now (a failure that
     * was not the file's, or its owner's failures spent): list again soon. */
    bool skipped;
};

/* Starts a listing. */
void gp_screen_begin(struct gp_screen *s);
/* Counts a board the reader still holds from an earlier listing, as if this one took it (it
 * neither takes that file again nor lets its user have more boards than the limits): 0, or
 * -ENOMEM (nothing more is taken in this listing). */
int gp_screen_hold(struct gp_screen *s, const struct gp_board *b);
/* Looks at the file of a directory's entry e (in the order of the listing): 0 when it is taken, b
 * open on it (a private copy, gp_board_open_copy); 1 when it is not (and said why where that is
 * to be said); -ENOMEM. */
int gp_screen_take_entry(struct gp_screen *s, const struct gp_board_entry *e, struct gp_board *b);
/* The same for a path, with nothing known of it before the look. */
int gp_screen_take(struct gp_screen *s, const char *path, struct gp_board *b);
/* gp_screen_take with the look at the file already made (its lstat, into seen): what follows the
 * look, so that a test can replace the file in between. */
int gp_screen_take_seen(struct gp_screen *s, const char *path, const struct stat *seen,
                        struct gp_board *b);
/* Ends the listing: says (once per reader) that the users' limit left boards out, forgets what it
 * took, and, where it was complete (it looked at every name of the directory), the refused files
 * it did not see. */
void gp_screen_end(struct gp_screen *s, bool complete);
/* A whole listing of dir, for uid's boards (every user's: (uid_t)-1), in name order: fn is called
 * with each board taken, open, which it closes or keeps, and returns 0 or a negative errno value
 * (which ends the listing). 0, or a negative errno value (the directory unreadable, out of
 * memory). */
int gp_screen_list(struct gp_screen *s, const char *dir, uid_t uid,
                   int (*fn)(struct gp_board *b, void *arg), void *arg);
/* Notes a file the reader refuses (st: its identity and owner; a board it took that stopped being
 * one) under any name: true when it is to be said, once per file and at most
 * GP_SCREEN_SAID_PER_USER times per owner (then one line, said here, for all of that owner's
 * others). */
bool gp_screen_refuse(struct gp_screen *s, const struct stat *st);

/* Forgets everything. */
void gp_screen_free(struct gp_screen *s);
/* Refuses a board the reader took that stopped being one (its owner shrank, rewrote or replaced
 * it: why), from now on, saying so where gp_screen_refuse says to. b is left open. */
void gp_screen_drop(struct gp_screen *s, const struct gp_board *b, const char *why);

#endif /* GPUPRIO_BOARD_SCREEN_H */
