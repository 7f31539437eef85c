/*
 * gpuprio.h - the public C API of gpuprio.
 *
 * gpuprio is preloaded into unmodified programs; this API is for programs (or Python, through
 * ctypes) that want to look at or steer it. Every function is safe to call from any thread, on
 * the application's own stream handles, and returns 0 or a negative errno value:
 *   -EINVAL  a bad argument
 *   -ENOENT  no such stream, or no GPU runtime in the process
 *   -ENOSYS  the platform's shim is not loaded in this process
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

/* What gpuprio knows about one stream (its XQueue). */
struct gpuprio_queue_stats {
    uint64_t submitted; /* commands the application put on the stream through gpuprio */
    int device;         /* the device the stream belongs to */
    unsigned flags;     /* the stream's creation flags (e.g. non-blocking) */
    int stream_priority; /* the priority given at creation (HIP: -1 high .. 1 low) */
};

/*
 * Fills *out for the application's stream handle (0 and the special handles mean what they
 * mean to the runtime on the calling thread and its current device).
 */
GPUPRIO_API int gpuprio_stream_stats(void *stream, struct gpuprio_queue_stats *out);

/*
 * Copies the path of the GPU runtime gpuprio forwards to into buf (always terminated).
 * -ENOENT when there is none, -ERANGE when buf is too small.
 */
GPUPRIO_API int gpuprio_runtime_path(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPRIO_H */
