/*
 * board_screen.h - which files of the board directory a reader takes for boards that it did not
 * write, and what it says of the others (docs/board.md, "Threat model"). Every such reader applies
 * these rules, the same code: the library's listener, for the other users' boards of its device
 * (tenants.c), and gpuprio top, metrics and set, for every board they show or ask. So no user can
 * pass its files off as another user's, make a reader read one board many times (hard links) or
 * many copies of it, crowd real users out of the limits with files of its own, make a reader wait
 * on a file, or flood anyone's log.
 *
 * A listing (gp_screen_begin, then gp_screen_take for each name gp_board_list gives, in name
 * order, then gp_screen_end) takes a file when:
 * - its name is a board's (of the reader's device, or of any device and version where it reads
 *   every one), and the uid the name says owns the file;
 * - it is none of the files taken in this listing (or held from an earlier one) or refused before,
 *   by identity (file system, inode and owner): a board hard-linked under many names is read once,
 *   and a refused file is not opened again (a file refused for what one of its names says, its
 *   owner or device, only under that name: a link made with a false name cannot hide the board
 *   under its true one);
 * - its user has fewer than GP_SCREEN_PER_USER boards of the device taken (the first in name
 *   order), is one of the first GP_SCREEN_USERS users of the device other than the reader (past
 *   them, one warning), and has boards of at most GP_SCREEN_DEVICES devices (past them, one
 *   warning): a user's files count once per user, whatever their number;
 * - it opens without blocking as a board (gp_board_open_copy: type, owner, mode, size, header),
 *   the open file is still its name's uid's and not a file taken already (a file swapped in after
 *   the look at its name is checked again), and its header is of the device its name says;
 * - where the reader asks (the library), the configuration file admits its owner.
 * A refused file is one warning naming it and what is wrong, for at most GP_SCREEN_SAID_PER_USER
 * files of one owner, then one line for all of that owner's others; GP_SCREEN_MAX_REFUSED files
 * are remembered, then one more line, and the rest are ignored without one.
 */
#ifndef GPUPRIO_BOARD_SCREEN_H
#define GPUPRIO_BOARD_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "board.h"

/* Users other than the reader whose boards of one device are read (the first in name order). */
#define GP_SCREEN_USERS 32
/* Boards per user and device: its usual name and an alternate (board.h's gp_board_name_of; a
 * user's processes use one at a time, but a process may still be on the usual one when the others
 * moved). */
#define GP_SCREEN_PER_USER 2
/* Devices per user, for readers of every device: as many as one process schedules
 * (sched_board.h's SB_MAX_DEVICES), so that a user's copies under made-up device names cannot
 * grow what a tool reads without bound. */
#define GP_SCREEN_DEVICES 64
/* Files refused (not a board, another owner than their name says, not admitted...) that are
 * remembered, so that each is said once and not opened again. */
#define GP_SCREEN_MAX_REFUSED 256
/* Warnings about one owner's refused files, at most (then one more for all its others). */
#define GP_SCREEN_SAID_PER_USER 4

struct gp_screen_count; /* board_screen.c */

struct gp_screen {
    /* Set by the reader before its first listing. */
    const char *key;    /* the device whose boards are read, or NULL: every device */
    bool skip_own;      /* the caller's own boards are not taken (the library writes its own) */
    bool admitted_only; /* a board of a user the configuration file does not admit is refused */
    bool writable;      /* boards are opened for writing too (gpuprio set) */
    /* Files refused (and said so), by identity: neither said nor opened again. */
    struct {
        dev_t dev;
        ino_t ino;
        uid_t uid;  /* its owner */
        bool said;  /* it was warned about */
        char *name; /* NULL: refused under any name; else only under this one, which lied */
    } refused[GP_SCREEN_MAX_REFUSED];
    unsigned n_refused;
    bool said_too_many, said_users, said_devices;
    /* The listing in progress (gp_screen_begin to gp_screen_end): counts of what it took, by
     * identity, user and device (board_screen.c), so that each file costs the same however many
     * there are. */
    struct gp_screen_count *counts;
    size_t cap, used;
    bool users_full; /* the users' limit left boards out (said at the end) */
};

/* Starts a listing. */
void gp_screen_begin(struct gp_screen *s);
/* Counts a board the reader still holds from an earlier listing, as if this one took it (it
 * neither takes that file again nor lets its user have more boards than the limits): 0, or
 * -ENOMEM (nothing more is taken in this listing). */
int gp_screen_hold(struct gp_screen *s, const struct gp_board *b);
/* Looks at the file at path (a board directory's entry, in name order): 0 when it is taken, b open
 * on it (a private copy, gp_board_open_copy); 1 when it is not (and said why where that is to be
 * said); -ENOMEM. */
int gp_screen_take(struct gp_screen *s, const char *path, struct gp_board *b);
/* gp_screen_take with the look at the file already made (its lstat, into seen): what follows the
 * look, so that a test can replace the file in between. */
int gp_screen_take_seen(struct gp_screen *s, const char *path, const struct stat *seen,
                        struct gp_board *b);
/* Ends the listing: says (once per reader) that the users' limit left boards out, and forgets
 * what it took. */
void gp_screen_end(struct gp_screen *s);
/* Notes a file the reader refuses (st: its identity and owner; a board it took that stopped being
 * one): true when it is to be said, once per file and at most GP_SCREEN_SAID_PER_USER times per
 * owner (then one line, said here, for all of that owner's others). */
bool gp_screen_refuse(struct gp_screen *s, const struct stat *st);

/* Forgets everything (the names of files refused by name are allocated). */
void gp_screen_free(struct gp_screen *s);
/* Refuses a board the reader took that stopped being one (its owner shrank, rewrote or replaced
 * it: why), from now on, saying so where gp_screen_refuse says to. b is left open. */
void gp_screen_drop(struct gp_screen *s, const struct gp_board *b, const char *why);

#endif /* GPUPRIO_BOARD_SCREEN_H */
