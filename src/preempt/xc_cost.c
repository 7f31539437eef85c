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
 * within a few steps and keeps one late observation from doubling an estimate; 1/16 below it
 * takes a few stalls in a row to let a throttled queue keep one command more in flight than its
 * budget (xc_cost.h), and still learns a shorter command within a training step or two. */
#define RISE_SHIFT 2
#define FALL_SHIFT 4

static struct entry {
    _Atomic uint64_t key;
    _Atomic uint64_t ns;
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
    return e ? atomic_load_explicit(&e->ns, memory_order_relaxed) : 0;
}

static void learn_one(uint64_t key, uint64_t ns)
{
    ns = ns ? ns : 1; /* 0 means "nothing learned" to xc_predict */
    struct entry *e = find(key);
    if (e) {
        uint64_t old = atomic_load_explicit(&e->ns, memory_order_relaxed);
        int64_t step = ((int64_t)ns - (int64_t)old) / (1 << (ns > old ? RISE_SHIFT : FALL_SHIFT));
        uint64_t next = (uint64_t)((int64_t)old + step);
        atomic_store_explicit(&e->ns, next ? next : 1, memory_order_relaxed);
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
    atomic_store_explicit(&e->ns, ns, memory_order_relaxed);
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
        atomic_store(&table[i].ns, 0);
    }
}
