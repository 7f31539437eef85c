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
    uint8_t reserved[44];
};

/* A region of gate lines (a board's), as this process registered it with its runtime: the
 * device sees base + offset at device_base + offset. Set before queues use it; a device reset or
 * a context's destruction unregisters it (ready false) until it is registered again, possibly at
 * another device address (docs/design.md, "Resets and context destruction"). */
struct dg_region {
    struct dg_line *base;
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

/* A slot's line for a new owner: open (before the slot is published). */
void dg_reset(struct dg_line *l);
/* Closes an open gate (hold) or opens a closed one (!hold): what a decision's suspension says. A
 * pinned gate stays pinned either way. */
void dg_follow(struct dg_line *l, bool hold);
/* Opens for good; dg_unpin makes a pinned gate open (not closed) again. */
void dg_pin(struct dg_line *l);
void dg_unpin(struct dg_line *l);
#endif /* GPUPRIO_DEVGATE_H */
