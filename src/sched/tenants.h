/*
 * tenants.h - other users' boards of a device, on the shared board directory (gp_conf_file.h):
 * read, never written (docs/board.md, "Users sharing a GPU").
 *
 * Each user's processes write only their own board; a decision also reads every admitted other
 * user's board of the device and holds this user's queues back for theirs, as it does for the
 * queues of this user's other processes, with each of their priorities within the cap of the
 * board's owner (the file's owner, not what the board says). Another user's decision cannot write
 * our gates, so it cannot suspend our queues: it publishes its board's summary (the highest
 * priority there and active, board.h), and our listener, which waits on those summaries along
 * with our own board's sequence word (one futex_waitv), decides for our queues when one moves.
 * Holding back across users therefore costs one listener wake-up, where within a user it is a
 * store into the held queue's gate.
 *
 * What our own board's reclaim and stall marks do for our user's processes is done here for the
 * others', in this process's memory: a slot whose owner is dead (its liveness lock gone), or that
 * stayed active without moving for the watchdog, no longer holds our queues back. The boards are
 * found by listing the directory: when this process joins (poking the others' listeners, which
 * list it again), and whenever it changed since the last listing.
 */
#ifndef GPUPRIO_TENANTS_H
#define GPUPRIO_TENANTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "board.h"
#include "board_screen.h"
#include "policy.h"

/* Other users' boards of a device read at most: which files are taken, and the limits that keep
 * a user's boards counting once, are board_screen.h's, which gpuprio top applies too. */
#define TN_MAX_BOARDS (GP_SCREEN_USERS * GP_SCREEN_PER_USER)

/*
 * The wakes of one futex word that a listener waits on and that other users can wake: another
 * user's board's summary word, and our own board's sequence word where it is readable by others
 * (the shared directory). A wake needs no write, only a mapping: anyone who can read the board can
 * wake its words in a loop, and each wake cost the listener a full look (every other board read
 * again; on our own word, a listing). A wake that changed nothing (a summary word found as it
 * was, our own word as it was: a poke) is counted, but for those that changes already seen may
 * still send (each change wakes once, and two quick ones may both be seen at the first wake:
 * late); past TN_IDLE_WAKES_MAX in a window the word is
 * left out of the waits for a window, and its value looked at every TN_MUTED_POLL_NS instead
 * (as on a kernel without futex_waitv). So whatever the rate of wakes, a word costs the listener
 * a few looks a window and a read of one word every 2 ms (tenants.c).
 */
struct tn_wakes {
    unsigned idle;        /* wakes that changed nothing in this window */
    unsigned late;        /* wakes that changes already seen may still send (each sends one) */
    uint64_t window_ns;   /* since when they are counted */
    uint64_t muted_until; /* gp_now_ns() until which the word is looked at, not waited on */
};

/* What this process made of one slot of another user's board. */
struct tn_slot {
    _Atomic uint64_t dead;              /* the incarnation found dead in it, or 0 */
    _Atomic uint64_t stalled;           /* the incarnation found stalled in it, or 0 */
    uint64_t incarnation, moves, since; /* the listener's stall watch */
};

struct tn_board {
    /* A private copy of the file (gp_board_open_copy), read again by the listener into next and
     * swapped in under the scheduling lock: another user's board is never read through a
     * mapping, which its owner could truncate under us (SIGBUS). */
    struct gp_board b;
    struct gp_board_file *next;
    uid_t uid; /* its owner: the file's */
    bool capped;
    int cap;               /* the highest priority its queues count with, where capped */
    bool may_be_owed;      /* the file gives its owner a minimum share (GPUPRIO_POLICY=share) */
    uint32_t summary_seen; /* its summary_seq as last decided on */
    struct tn_wakes wakes; /* of its summary_seq */
    struct tn_slot slots[GP_BOARD_SLOTS];
};

/* A device's other users' boards. The set changes only on the listener's thread, under the
 * scheduling lock; decisions read it under the scheduling lock. */
struct tn_device {
    char key[GP_BOARD_KEY_MAX];
    struct tn_board *boards[TN_MAX_BOARDS];
    unsigned n;
    /* Which files of the directory are taken, refused files remembered (board_screen.h). */
    struct gp_screen screen;
    /* The directory as last listed. A new user's process pokes our listener (tn_refresh), but a
     * wake that finds nobody waiting is lost: a listener busy at that moment slept the idle
     * period before it listed again, and meanwhile our queues, alone as far as we knew, were
     * decided untracked and published no activity for the newcomer to yield to. So before it
     * sleeps the listener lists again once the directory changed since this listing. */
    struct timespec dir_mtime;
    uint64_t listed_ns; /* gp_now_ns() at the listing's start; 0: never listed */
    bool dir_unsettled; /* it changed within a timestamp's granularity of the listing */
    /* A listing is made in steps of bounded work, paused for what they cost (tenants.c), so that
     * no directory, however large, takes the listener from its other work for long. */
    struct gp_board_cursor cursor; /* the listing in progress (cursor.d NULL: none) */
    uint64_t next_ns;              /* when the next step of listing may come */
    uint64_t glanced_ns;           /* the last look at the directory's first names */
    bool wanted;                   /* a listing is asked for (a poke) */
    bool pokes;                    /* it wakes the listeners of the boards it finds (joining) */
    bool skipped;                  /* the last listing left files for later: list again */
    struct tn_wakes own_wakes;     /* of our own board's sequence word that changed nothing */
};

/* Lists the directory, a step of it where it is large (the rest when tn_wait says), where a
 * listing is due: opens the boards of other users that appeared, drops those removed; and reads
 * the others again. True when a board's summary moved since it was last read, or when the set
 * changed (decide again). poke: a listing is asked for (this process joins), which wakes the
 * listeners of the boards it finds. */
bool tn_refresh(struct tn_device *td, bool poke);
/* The liveness look: marks the slots of dead owners, and those active without moving for
 * watchdog_ns; true when a mark changed. *watching: a slot is marked stalled (look often). */
bool tn_look(struct tn_device *td, uint64_t now, uint64_t watchdog_ns, bool *watching);
/* Waits until own's sequence word differs from seen, another board's summary moved, or timeout:
 * returns own's sequence word; *poked: woken with nothing of that changed (another user's new
 * board), or a listing is due (the directory changed since it was last listed, and a poke may
 * have been lost; a listing's next step): call tn_refresh. A wake of another board's summary word
 * that finds it as it was costs a read of the word, and the sleep goes on; words that keep waking
 * it so are looked at instead of waited on for a while (struct tn_wakes). */
uint32_t tn_wait(struct tn_device *td, struct gp_board *own, uint32_t seen, uint64_t timeout_ns,
                 bool *poked);
/* Reads the boards again (their private copies); whether a board's summary moved since the last
 * call (and takes note), or one was dropped (its file is no longer a board). */
bool tn_summaries_moved(struct tn_device *td);
/* Calls fn for each queue of the other users' boards that holds ours back (a live slot, not dead
 * or stalled here): what the policy sees of it (its priority within its user's cap; owed its
 * minimum share only if the file gives its user one), and its state. */
void tn_foreach_queue(struct tn_device *td,
                      void (*fn)(const struct sched_queue *q, struct xq_state *st, void *arg),
                      void *arg);
/* Closes every board (at exit, or in the child of fork). */
void tn_close(struct tn_device *td);

#endif /* GPUPRIO_TENANTS_H */
