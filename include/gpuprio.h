/*
 * gpuprio.h - the public C API of gpuprio.
 *
 * gpuprio is preloaded into unmodified programs; this API is for programs (or Python, through
 * ctypes) that want to look at or steer it. Every function is safe to call from any thread, on
 * the application's own stream handles, and returns 0 or a negative errno value:
 *   -EINVAL     a bad argument (a priority out of range, a NULL where a result goes)
 *   -ENOENT     no such stream, or no GPU runtime in the process
 *   -ETIMEDOUT  gpuprio_stream_drain only: the stream did not drain in time
 *   -ERANGE     gpuprio_runtime_path only: the buffer is too small
 * Without a gpuprio library loaded, these functions do not exist: look them up (dlsym, or
 * ctypes with the process's own handle) to tell whether gpuprio is there.
 */
#ifndef GPUPRIO_H
#define GPUPRIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUPRIO_API __attribute__((visibility("default")))

#define GPUPRIO_VERSION_MAJOR 0
#define GPUPRIO_VERSION_MINOR 1
#define GPUPRIO_VERSION_PATCH 0

/* "MAJOR.MINOR.PATCH" of the loaded library. */
GPUPRIO_API const char *gpuprio_version(void);

/*
 * Priorities: integers, higher runs first. A stream's priority comes from, strongest first:
 * gpuprio_stream_set_priority; gpuprio_thread_set_priority of the thread that created the
 * stream (or whose null or per-thread stream it is); GPUPRIO_STREAM_PRIORITIES (by creation
 * order); GPUPRIO_PRIORITY (the process); the priority the stream was created with (HIP's -1,
 * 0, 1 become high, normal, low); normal. docs/configuration.md has the details.
 */
#define GPUPRIO_PRIORITY_MIN (-1000)
#define GPUPRIO_PRIORITY_IDLE (-20)
#define GPUPRIO_PRIORITY_LOW (-10)
#define GPUPRIO_PRIORITY_NORMAL 0
#define GPUPRIO_PRIORITY_HIGH 10
#define GPUPRIO_PRIORITY_CRITICAL 20
#define GPUPRIO_PRIORITY_MAX 1000

/*
 * Sets the priority of the application's stream handle (0 and the special handles mean what
 * they mean to the runtime on the calling thread and its current device). -EINVAL when the
 * priority is out of range, -ENOENT for an unknown stream.
 */
GPUPRIO_API int gpuprio_stream_set_priority(void *stream, int priority);
GPUPRIO_API int gpuprio_stream_get_priority(void *stream, int *priority);

/* Sets the calling thread's priority: for its null and per-thread streams and the streams it
 * creates from now on, unless a stream has its own (gpuprio_stream_set_priority). */
GPUPRIO_API int gpuprio_thread_set_priority(int priority);
/* The calling thread's priority; -ENOENT when it has none of its own. */
GPUPRIO_API int gpuprio_thread_get_priority(int *priority);
/*
 * Forgets the calling thread's priority, as if it had never set one: its null and per-thread
 * streams and the streams it created that took the thread's priority go back to what the other
 * sources give them (a stream's own gpuprio_stream_set_priority stays), and streams it creates
 * from now on get no priority from the thread. Always 0 (also when it had none); afterwards
 * gpuprio_thread_get_priority returns -ENOENT. For a scope that restores what was there before:
 * get, set, then set back or clear.
 */
GPUPRIO_API int gpuprio_thread_clear_priority(void);

/* What gpuprio knows about one stream (its XQueue). */
struct gpuprio_queue_stats {
    uint64_t stream;      /* the application's handle (0: the null stream) */
    uint64_t thread;      /* the thread of a per-thread queue (null or per-thread stream), or 0 */
    int device;           /* the device the stream belongs to */
    unsigned flags;       /* the stream's creation flags (e.g. non-blocking) */
    int stream_priority;  /* the priority the application gave at creation (HIP: -1 high .. 1
                           * low; 0 where it gave none, whatever gpuprio created it with) */
    int priority;         /* gpuprio's priority (higher runs first) */
    int suspended;        /* 1 while the scheduler holds the queue back */
    unsigned in_flight;   /* commands admitted and not yet reached on the device */
    uint64_t submitted;   /* commands the application put on the stream through gpuprio */
    uint64_t completed;   /* of those, reached on the device (followed by markers) */
    uint64_t held_ns;     /* time threads spent held before submitting to it */
    uint64_t suspensions; /* times the scheduler suspended it */
};

/*
 * Fills *out for the application's stream handle (0 and the special handles mean what they
 * mean to the runtime on the calling thread and its current device).
 */
GPUPRIO_API int gpuprio_stream_stats(void *stream, struct gpuprio_queue_stats *out);

/*
 * Waits until gpuprio has seen every command it let onto the stream finish on the device (its
 * completion markers reached), at most timeout_ms; then the stream's stats are settled. 0,
 * -ETIMEDOUT, or -ENOENT. A stream that is not scheduled (one priority on its device) is always
 * drained.
 */
GPUPRIO_API int gpuprio_stream_drain(void *stream, unsigned timeout_ms);

/*
 * Fills out[0..max) with every queue of the process; returns how many there are (which may be
 * more than max), or a negative errno value.
 */
GPUPRIO_API int gpuprio_stats(struct gpuprio_queue_stats *out, size_t max);

/*
 * Copies the path of the GPU runtime gpuprio forwards to into buf (always terminated).
 * -ENOENT when there is none, -ERANGE when buf is too small.
 */
GPUPRIO_API int gpuprio_runtime_path(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPRIO_H */
