/*
 * gemm_clock.c - learned GPU time of GEMM calls (gemm_clock.h).
 *
 * Open addressing over GEMM_CLOCK_SLOTS entries, the least recently used of a probe run replaced;
 * per key the shortest time seen and the events of one timing in flight. Every GEMM call of every
 * process comes here while slicing is on, so the common case (no timing of the key in flight)
 * takes the lock once, hashes once and calls no runtime function. The runtime's calls run outside
 * the lock: a reading thread takes a key's events out of the table first, so that no two threads
 * read the same pair.
 */
#include "gemm_clock.h"

#include <string.h>

#include "gp_lockrank.h"

/* By 8-byte words, not bytes: every GEMM call hashes its key while slicing is on, and a byte at a
 * time was most of what the shim added. The final mix brings the high bits, where words differ
 * most (m, n, k), down to the slot's. */
static size_t key_hash(const struct gemm_clock *c, const void *key)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < c->key_size; i += sizeof(uint64_t)) {
        uint64_t word;
        memcpy(&word, (const char *)key + i, sizeof word);
        h = (h ^ word) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)(h % GEMM_CLOCK_SLOTS);
}

/* key's entry (h its key_hash), or NULL; with claim, a new one in the least recently used slot of
 * its probe run (whose events in flight, if any, go to *stale for the caller to destroy). c->mu
 * held. */
static struct gemm_clock_entry *entry_of(struct gemm_clock *c, const void *key, size_t h,
                                         bool claim, void *stale[2])
{
    struct gemm_clock_entry *victim = NULL;
    for (size_t i = 0; i < GEMM_CLOCK_PROBE; i++) {
        struct gemm_clock_entry *e = &c->table[(h + i) % GEMM_CLOCK_SLOTS];
        if (e->used && !memcmp(e->key, key, c->key_size)) {
            e->last_use = ++c->use_clock;
            return e;
        }
        if (!victim || !e->used || (victim->used && e->last_use < victim->last_use))
            victim = e;
    }
    if (!claim)
        return NULL;
    stale[0] = victim->start;
    stale[1] = victim->end;
    *victim = (struct gemm_clock_entry){.used = true, .last_use = ++c->use_clock};
    memcpy(victim->key, key, c->key_size);
    return victim;
}

/* A call of e's key is being made (c->mu held): its learned time, and whether to time it. */
static uint64_t count_call(struct gemm_clock_entry *e, bool *time_this)
{
    e->calls++;
    *time_this = !e->end && (!e->learned_ns || e->calls % GEMM_CLOCK_RETIME == 0);
    return e->learned_ns;
}

uint64_t gemm_clock_learned(struct gemm_clock *c, const void *key, bool *time_this)
{
    *time_this = false;
    size_t h = key_hash(c, key);
    gp_mutex_lock(&c->mu, GP_RANK_GEMM_TIMES);
    struct gemm_clock_entry *e = entry_of(c, key, h, false, NULL);
    uint64_t learned = 0;
    if (!e || !e->end) {
        if (e)
            learned = count_call(e, time_this);
        else
            *time_this = true;
        gp_mutex_unlock(&c->mu, GP_RANK_GEMM_TIMES);
        return learned;
    }
    void *start = e->start, *end = e->end;
    uintptr_t owner = e->owner;
    e->start = e->end = NULL;
    gp_mutex_unlock(&c->mu, GP_RANK_GEMM_TIMES);
    int64_t ns = c->ops->read(start, end);
    if (ns != 0)
        c->ops->destroy(start, end);

    gp_mutex_lock(&c->mu, GP_RANK_GEMM_TIMES);
    e = entry_of(c, key, h, false, NULL);
    if (e) {
        if (ns > 0 && (!e->learned_ns || (uint64_t)ns < e->learned_ns))
            e->learned_ns = (uint64_t)ns;
        if (ns == 0 && !e->end) { /* not done yet: back, unless another timing took its place */
            e->start = start;
            e->end = end;
            e->owner = owner;
            start = end = NULL;
        }
        learned = count_call(e, time_this);
    } else {
        *time_this = true;
    }
    gp_mutex_unlock(&c->mu, GP_RANK_GEMM_TIMES);
    if (ns == 0) /* its entry was replaced meanwhile (nothing, if it went back) */
        c->ops->destroy(start, end);
    return learned;
}

void gemm_clock_keep(struct gemm_clock *c, const void *key, uintptr_t owner, void *start, void *end)
{
    void *stale[2] = {NULL, NULL};
    gp_mutex_lock(&c->mu, GP_RANK_GEMM_TIMES);
    struct gemm_clock_entry *e = entry_of(c, key, key_hash(c, key), true, stale);
    if (!e->end) {
        e->start = start;
        e->end = end;
        e->owner = owner;
        start = end = NULL;
    }
    gp_mutex_unlock(&c->mu, GP_RANK_GEMM_TIMES);
    c->ops->destroy(stale[0], stale[1]);
    c->ops->destroy(start, end);
}

void gemm_clock_forget_owner(struct gemm_clock *c, uintptr_t owner)
{
    gp_mutex_lock(&c->mu, GP_RANK_GEMM_TIMES);
    for (size_t i = 0; i < GEMM_CLOCK_SLOTS; i++) {
        struct gemm_clock_entry *e = &c->table[i];
        if (e->used && e->end && e->owner == owner)
            e->start = e->end = NULL;
    }
    gp_mutex_unlock(&c->mu, GP_RANK_GEMM_TIMES);
}

void gemm_clock_forget_all(struct gemm_clock *c)
{
    pthread_mutex_init(&c->mu, NULL);
    memset(c->table, 0, sizeof c->table);
    c->use_clock = 0;
}
