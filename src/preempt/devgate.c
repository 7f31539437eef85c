/*
 * devgate.c - see devgate.h.
 *
 * Every change but pinning is a compare-and-swap from the state it expects, so deciders of
 * several processes and the owner's pinning can race in any order: closing replaces only
 * DG_OPEN, opening only a closed word, and a pinned word is replaced only by pinning's owner.
 */
#include "devgate.h"

void dg_reset(struct dg_line *l)
{
    atomic_store(&l->word, DG_OPEN);
    atomic_store(&l->vtime, 0);
    atomic_store(&l->owed, 0);
    atomic_store(&l->mirrored, 0);
    atomic_store(&l->suspended_by, 0);
    atomic_store(&l->suspended_by_ns, 0);
    atomic_store(&l->reserved_32, 0);
    atomic_store(&l->suspended_at, 0);
    atomic_store(&l->copy_fd, 0);
}

bool dg_follow(struct dg_line *l, bool hold)
{
    if (hold) {
        uint64_t open = DG_OPEN;
        return atomic_compare_exchange_strong(&l->word, &open, 0);
    }
    uint64_t w = atomic_load(&l->word);
    while (w < DG_OPEN)
        if (atomic_compare_exchange_weak(&l->word, &w, DG_OPEN))
            return true;
    return false;
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

void dg_copy_word(struct dg_line *dst, const struct dg_line *board_line)
{
    struct dg_line *l = (struct dg_line *)board_line; /* atomic_load takes no const (C11) */
    uint64_t stored, w = atomic_load(&l->word);
    do {
        atomic_store(&dst->word, w);
        stored = w;
        w = atomic_load(&l->word);
    } while (w != stored);
}

void dg_mirror(const struct dg_region *r, struct dg_line *l)
{
    if (r->mirror)
        dg_copy_word(&r->mirror[l - r->base], l);
}

void dg_mirror_release(const struct dg_region *r, struct dg_line *l)
{
    if (r->mirror)
        atomic_store(&r->mirror[l - r->base].word, DG_OPEN);
}
