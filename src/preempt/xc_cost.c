/*
 * xc_cost.c - see xc_cost.h.
 *
 * 4096 entries of 16 bytes: a few hundred distinct kernels and grids make a training step, and
 * a server's set is smaller. Probing stays within a cache-line-sized neighbourhood of 4.
 */
#include "xc_cost.h"

#include <stdatomic.h>

#define TABLE_SIZE 4096u
#define NEIGHBOURHOOD 4u
/* The moving average's weight of a new sample: 1/4 above the estimate follows a longer command
 * within a few steps and keeps one late observation from doubling an estimate; below it, 1/4
 * for a key's first WARM_SAMPLES (its first sample may be a cold start's) and 1/16 after, so
 * that a few stalls in a row are needed to let a throttled queue keep one command more in
 * flight than its budget (xc_cost.h). */
#define RISE_SHIFT 2
#define FALL_SHIFT 4
#define WARM_SAMPLES 8

/* An entry's word: the estimate in ns below, how many samples made it (up to WARM_SAMPLES) in
 * the top byte, so that a reader gets both in one load. */
#define SAMPLES_SHIFT 56
#define NS_MAX ((UINT64_C(1) << SAMPLES_SHIFT) - 1)

static struct entry {
    _Atomic uint64_t key;
    _Atomic uint64_t word;
} table[TABLE_SIZE];

static struct entry *find(uint64_t key)
{
    for (unsigned i = 0; i < NEIGHBOURHOOD; i++) {
        struct entry *e = &table[(key + i) & (TABLE_SIZE - 1)];
        if (atomic_load_explicit(&e->key, memory_order_acquire) == key)
            return e;
    }
    return NULL;
}

uint64_t xc_predict(uint64_t key)
{
    struct entry *e = find(key);
    return e ? atomic_load_explicit(&e->word, memory_order_relaxed) & NS_MAX : 0;
}

static void learn_one(uint64_t key, uint64_t ns)
{
    ns = ns == 0 ? 1 : ns > NS_MAX ? NS_MAX : ns; /* 0 means "nothing learned" to xc_predict */
    struct entry *e = find(key);
    if (e) {
        uint64_t word = atomic_load_explicit(&e->word, memory_order_relaxed);
        uint64_t old = word & NS_MAX, samples = word >> SAMPLES_SHIFT;
        int shift = ns > old || samples < WARM_SAMPLES ? RISE_SHIFT : FALL_SHIFT;
        uint64_t next = (uint64_t)((int64_t)old + ((int64_t)ns - (int64_t)old) / (1 << shift));
        samples += samples < WARM_SAMPLES;
        atomic_store_explicit(&e->word, (next ? next : 1) | samples << SAMPLES_SHIFT,
                              memory_order_relaxed);
        return;
    }
    e = &table[key & (TABLE_SIZE - 1)];
    for (unsigned i = 0; i < NEIGHBOURHOOD; i++) {
        struct entry *c = &table[(key + i) & (TABLE_SIZE - 1)];
        if (atomic_load_explicit(&c->key, memory_order_relaxed) == 0) {
            e = c;
            break;
        }
    }
    /* Readers that see the new key see its own estimate (release/acquire); one that read the
     * old key a moment ago may get this estimate once: a prediction, not memory, goes wrong. */
    atomic_store_explicit(&e->key, 0, memory_order_relaxed);
    atomic_store_explicit(&e->word, ns | UINT64_C(1) << SAMPLES_SHIFT, memory_order_relaxed);
    atomic_store_explicit(&e->key, key, memory_order_release);
}

uint64_t xc_learn(const struct xc_sample *done, size_t n, uint64_t span_ns)
{
    double weights = 0;
    size_t keyed = 0;
    for (size_t i = 0; i < n; i++) {
        if (done[i].key) {
            weights += done[i].predicted_ns ? (double)done[i].predicted_ns : 1.0;
            keyed++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        double w = done[i].predicted_ns ? (double)done[i].predicted_ns : 1.0;
        if (done[i].key)
            learn_one(done[i].key, (uint64_t)((double)span_ns * w / weights));
    }
    return keyed ? span_ns / keyed : 0;
}

void xc_reset(void)
{
    for (unsigned i = 0; i < TABLE_SIZE; i++) {
        atomic_store(&table[i].key, 0);
        atomic_store(&table[i].word, 0);
    }
}

bool xc_longest_note(struct xc_longest *l, uint64_t ns, uint64_t now, uint64_t *show)
{
    uint64_t age = now - l->window_from_ns;
    if (!l->window_from_ns || age >= XC_LONGEST_WINDOW_NS) {
        l->before_ns = l->window_from_ns && age < 2 * XC_LONGEST_WINDOW_NS ? l->now_ns : 0;
        l->now_ns = 0;
        l->window_from_ns = now ? now : 1;
    }
    if (ns > l->now_ns)
        l->now_ns = ns;
    uint64_t longest = l->now_ns > l->before_ns ? l->now_ns : l->before_ns;
    uint64_t moved = longest > l->shown_ns ? longest - l->shown_ns : l->shown_ns - longest;
    if (moved == 0 || (l->shown_ns && longest && moved < l->shown_ns / 8))
        return false;
    l->shown_ns = longest;
    *show = longest;
    return true;
}
