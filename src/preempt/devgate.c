/*
 * devgate.c - see devgate.h.
 *
 * Every change is a compare-and-swap from a state it expects, so deciders of several processes,
 * a raise and the owner's pinning can race in any order: closing replaces only DG_OPEN, opening
 * only a closed word, and a raise writes the floor before the word while closing reads the
 * floor again after its swap, so a raise that ran between closing's two reads is never undone.
 */
#include "devgate.h"

void dg_reset(struct dg_line *l)
{
    atomic_store(&l->floor, 0);
    atomic_store(&l->word, DG_OPEN);
}

/* Raises a closed word to at least n. */
static void raise_word(struct dg_line *l, uint64_t n)
{
    uint64_t w = atomic_load(&l->word);
    while (w < n && !atomic_compare_exchange_weak(&l->word, &w, n)) {
    }
}

void dg_close(struct dg_line *l)
{
    uint64_t floor = atomic_load(&l->floor), open = DG_OPEN;
    if (!atomic_compare_exchange_strong(&l->word, &open, floor))
        return; /* closed already, or pinned */
    uint64_t now = atomic_load(&l->floor);
    if (now > floor)
        raise_word(l, now);
}

void dg_open(struct dg_line *l)
{
    raise_word(l, DG_OPEN);
}

void dg_pin(struct dg_line *l)
{
    atomic_store(&l->word, DG_PINNED);
}

void dg_unpin(struct dg_line *l)
{
    uint64_t pinned = DG_PINNED;
    atomic_compare_exchange_strong(&l->word, &pinned, DG_OPEN);
}

void dg_raise(struct dg_line *l, uint64_t n)
{
    uint64_t f = atomic_load(&l->floor);
    while (f < n && !atomic_compare_exchange_weak(&l->floor, &f, n)) {
    }
    raise_word(l, n);
}
