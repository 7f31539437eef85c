/*
 * xqueue.h - the XQueue: gpuprio's unit of scheduling, one per application stream.
 *
 * Every stream the application can name has an XQueue: streams from any creator, the null
 * stream of each device, and the per-thread stream of each (thread, device). An XQueue holds
 * what the scheduler needs about its stream: identity, creation flags and priority, and counters.
 * This module knows nothing about HIP or CUDA; the shims map their handles onto keys.
 */
#ifndef GPUPRIO_XQUEUE_H
#define GPUPRIO_XQUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * What identifies a stream: the handle, plus the device for handles that mean one stream per
 * device (the null stream) and the thread for handles that mean one per thread (per-thread).
 */
struct xq_key {
    uintptr_t handle;
    int device;   /* -1 when the handle alone identifies the stream */
    uint64_t tid; /* 0 unless the stream is per thread */
};

struct xqueue {
    struct xq_key key;
    int device;
    unsigned flags;
    int stream_priority;
    _Atomic uint64_t submitted;
    struct xqueue *next_free; /* on the registry's free list once its stream is gone */
};

/* The XQueue for key, created on first use (NULL only when out of memory). */
struct xqueue *xq_get(const struct xq_key *key);
/* The XQueue for key if it exists. */
struct xqueue *xq_find(const struct xq_key *key);
/* Registers a stream just created; replaces any XQueue left for a reused handle. */
struct xqueue *xq_create(const struct xq_key *key, int device, unsigned flags,
                         int stream_priority);
/* Forgets the stream; pointers to its XQueue stay valid (queues are never freed while the
 * process runs, so a racing thread never touches freed memory). */
void xq_destroy(const struct xq_key *key);
/* Forgets every XQueue; for the child of fork only. */
void xq_reset(void);

#endif /* GPUPRIO_XQUEUE_H */
