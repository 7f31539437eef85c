/*
 * devgate.h - Level-2 gates: words in host memory that a queue's stream waits on, on the device,
 * before each batch of its commands (docs/design.md, "Level 2").
 *
 * A gate line belongs to one queue's board slot. Its owner puts a wait-value command on the
 * queue's stream (the platform's gate_wait: proceed once word >= n) before a batch of commands
 * whose predicted GPU time stays under GPUPRIO_GATE_US, numbering its gates 1, 2, 3... Any
 * process of the board that decides writes the word with plain atomic stores, so closing the
 * gate stops the stream at its next gate on the device, with no host round trip and no call
 * into the owner:
 *   - open: DG_OPEN (2^62), ahead of every number a queue will ever place, and still ahead under
 *     the wrap-around comparison of CUDA's GEQ ((int64_t)(word - n) >= 0), which an all-ones
 *     word would fail;
 *   - closed: 0, so that every gate not yet passed holds;
 *   - pinned: DG_PINNED (DG_OPEN + 1), open for good: the owner's queue may not be held on the
 *     device (it could hold a queue of its process that must run: docs/design.md), and closing
 *     leaves it alone because it only ever replaces DG_OPEN.
 *
 * Mirrored gates: where the runtime refuses to register the board's lines (a board file outside
 * tmpfs and hugetlbfs, whose pages Linux will not pin for long), the owner registers a private,
 * anonymous copy of them instead (struct dg_region's mirror) and its gates wait on that. The
 * board's word stays what every decider writes, the intent; the owner copies it into its private
 * line (dg_mirror) after each write of its own threads and whenever its board listener wakes,
 * and a decider that changes the word of a line marked mirrored wakes the board's listeners
 * (docs/design.md, "Mirrored gates").
 */
#ifndef GPUPRIO_DEVGATE_H
#define GPUPRIO_DEVGATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DG_OPEN (UINT64_C(1) << 62)
#define DG_PINNED (DG_OPEN + 1)

/* One cache line, so that deciders writing one queue's gate never touch another's. */
struct dg_line {
    _Atomic uint64_t word; /* what the device compares each gate's number with */
    /* GPUPRIO_POLICY=share (policy.h), for the deciders of every process: the queue's vtime and
     * whether it is owed GPU time under its minimum share. Written by its owner only. */
    _Atomic uint64_t vtime;
    _Atomic uint32_t owed;
    /* 1 while the owner's gates wait on its private mirror of word, not on word: a decider that
     * changes word must then wake the board's listeners, or the change never reaches the device
     * (set by the owner once it claimed the slot; 0 in lines of libraries before it). */
    _Atomic uint32_t mirrored;
    /* GPUPRIO_LOG=info: the process whose decision last suspended the queue, as that process
     * sees itself (its pid, and its pid namespace's inode), written by the decider before the
     * suspension, so that the owner can say who suspended its queue (0 from libraries before it:
     * unknown); and which of the queue's suspensions that was (suspended_at: its slot's count of
     * suspensions once that one was counted, low 32 bits), written by the decider once the
     * suspension is set, and 0 from before it writes suspended_by until then. The owner names
     * the decider only for the count it reads (a decider of an older library writes suspended_by
     * but never suspended_at: it is named nobody then, rather than a stale decider), and takes
     * suspended_at's match for the last suspension being set (scheduler.c's say_switches). */
    _Atomic uint32_t suspended_by, suspended_by_ns;
    /* Reserved, 0. A library before this one set it while it logged at info and had deciders
     * wake it for every suspension, a system call in the decider's thread: no decider reads it
     * now, and the owner says suspensions at its listener's next look (docs/board.md). */
    _Atomic uint32_t reserved_32;
    _Atomic uint32_t suspended_at;
    /* Mirrored gates: 1 + the descriptor, in the owner's process, of the copy its gates wait on,
     * which its user's deciders may open through /proc and write (src/sched/gate_copy.h); 0 when
     * the copy is private memory (and in lines of libraries before it, which left it reserved). */
    _Atomic uint32_t copy_fd;
    uint8_t reserved[20];
};

/* A region of gate lines (a board's), as this process registered it with its runtime: the
 * device sees the word of base + offset (or, mirrored, of mirror + offset) at device_base +
 * offset. Set before queues use it; a device reset or a context's destruction unregisters it
 * (ready false) until it is registered again, possibly at another device address (docs/design.md,
 * "Resets and context destruction"). */
struct dg_region {
    struct dg_line *base;
    /* NULL: the device reads base's lines themselves. Else the private copy of them that was
     * registered in their place (same layout), which dg_mirror keeps up with base's words. */
    struct dg_line *mirror;
    _Atomic bool ready; /* registered: gates may be put on streams */
    _Atomic uintptr_t device_base;
};

/* Whether gates may be put on streams with r's lines now. */
static inline bool dg_ready(const struct dg_region *r)
{
    return atomic_load_explicit(&((struct dg_region *)r)->ready, memory_order_acquire);
}

/* Where the device sees line l of region r. */
static inline uintptr_t dg_device_addr(const struct dg_region *r, const struct dg_line *l)
{
    return atomic_load_explicit(&((struct dg_region *)r)->device_base, memory_order_relaxed) +
           (uintptr_t)((const char *)l - (const char *)r->base);
}

/* A slot's line for a new owner: open (before the slot is published), not mirrored. */
void dg_reset(struct dg_line *l);
/* Closes an open gate (hold) or opens a closed one (!hold): what a decision's suspension says. A
 * pinned gate stays pinned either way. Whether the word changed. */
bool dg_follow(struct dg_line *l, bool hold);
/* Opens for good; dg_unpin makes a pinned gate open (not closed) again. */
void dg_pin(struct dg_line *l);
void dg_unpin(struct dg_line *l);
/*
 * Where r is mirrored, copies l's word (one of r's lines) into r's private copy of l, which the
 * device reads; nothing otherwise. By the owner only, after each change its own threads made to
 * l, and from its listener whenever another process may have changed it. Copiers need no lock: a
 * copier stores what it read, then reads the word again and stores again until the two agree, so
 * a stale value stored by a slower copier is corrected by whichever copier stores last.
 */
void dg_mirror(const struct dg_region *r, struct dg_line *l);
/* Copies board_line's word into dst until the two agree (dg_mirror's rule, which gate_copy.c's
 * copies into other processes' lines follow too); no lock. */
void dg_copy_word(struct dg_line *dst, const struct dg_line *board_line);
/* Where r is mirrored, opens r's private copy of l, a line its owner gave back: the board's line
 * is reset open for its next owner, and the copy, which nobody copies into any more, must not
 * stay closed under a gate of the old owner's stream. */
void dg_mirror_release(const struct dg_region *r, struct dg_line *l);
#endif /* GPUPRIO_DEVGATE_H */
