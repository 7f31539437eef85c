/*
 * gemm_clock.h - the learned GPU time of GEMM calls, per kind of call (a key of the BLAS layer's:
 * dimensions, types, transposes, the algorithm's bytes), from a pair of events recorded around a
 * call: its first, then every GEMM_CLOCK_RETIME-th, whole or sliced (its slices together). The
 * events are read without blocking at a later call of the same key; the shortest time seen is
 * kept, since what can only lengthen a sample (a gate on the stream before the GEMM, work of
 * other streams beside it, a kernel loaded lazily at the first call, the cost of slicing) says
 * nothing of the GEMM itself. Timing sliced calls too is what lets a first sample that such a
 * wait inflated come down once the calls are sliced.
 *
 * This is the table alone, the same for every runtime: cuda_gemm_clock.c and hip_gemm_clock.c
 * create, record, read and destroy the events (opaque pointers here) through their ops, which
 * the table calls outside its lock. A pair in flight belongs to an owner (the context or device
 * it was recorded in, which is part of the runtime's key too): a device reset or a destroyed
 * context kills its events, which are then dropped without a call (gemm_clock_forget_owner), as
 * the markers are.
 */
#ifndef GPUPRIO_GEMM_CLOCK_H
#define GPUPRIO_GEMM_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GEMM_CLOCK_RETIME 64
#define GEMM_CLOCK_SLOTS 256
#define GEMM_CLOCK_PROBE 8
/* The largest key, in bytes (a multiple of 8: keys are hashed by words). */
#define GEMM_CLOCK_KEY_MAX 128

/* A runtime's events: read (the pair's time in ns: > 0 done, 0 not yet, < 0 never, and the pair
 * is then of no use) and destroy. The table passes destroy every pair it drops, either or both
 * NULL: destroy checks (the runtime's own failed starts pass it such pairs too). */
struct gemm_clock_ops {
    int64_t (*read)(void *start, void *end);
    void (*destroy)(void *start, void *end);
};

struct gemm_clock_entry {
    uint64_t key[GEMM_CLOCK_KEY_MAX / 8];
    bool used;
    uint64_t learned_ns, calls, last_use;
    void *start, *end; /* a timing in flight, or NULL */
    uintptr_t owner;   /* what start and end were recorded in */
};

/* One runtime's table: GEMM_CLOCK_INIT(size of its keys, its ops) as a static's initializer. Its
 * lock comes first, at the table's own address (a test takes it by the table's symbol). */
struct gemm_clock {
    pthread_mutex_t mu;
    size_t key_size;
    const struct gemm_clock_ops *ops;
    uint64_t use_clock;
    struct gemm_clock_entry table[GEMM_CLOCK_SLOTS];
};
#define GEMM_CLOCK_INIT(size, ops_)                                                                \
    {                                                                                              \
        .key_size = (size), .ops = (ops_), .mu = PTHREAD_MUTEX_INITIALIZER                         \
    }

/* The time learned for key (c->key_size bytes) in ns (0: none yet), after reading its events if
 * they are done. *time_this: the whole call about to be made should be timed. */
uint64_t gemm_clock_learned(struct gemm_clock *c, const void *key, bool *time_this);

/* The events recorded around a timed call of key in owner (a context, a device), kept until a
 * later call reads them; or destroyed, if a timing of key is in flight already. */
void gemm_clock_keep(struct gemm_clock *c, const void *key, uintptr_t owner, void *start,
                     void *end);

/* The timings in flight recorded in owner, whose events a device reset or a destroyed context
 * took with it: dropped, never read or destroyed (their handles are dead, and the runtime may
 * hand them out again). The learned times stay. */
void gemm_clock_forget_owner(struct gemm_clock *c, uintptr_t owner);

/* Every learned time forgotten and the table's lock made anew: in a forked child, where a thread
 * of the parent may have held it (the timings in flight are the parent's events: left alone). */
void gemm_clock_forget_all(struct gemm_clock *c);

#endif /* GPUPRIO_GEMM_CLOCK_H */
