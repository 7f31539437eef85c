/*
 * api.c - the public C API (include/gpuprio.h), the same in every platform's shim.
 *
 * It works on the application's own stream handles, usable from Python through ctypes: the
 * core maps a handle to its XQueue as the runtime reads it on the calling thread (the legacy
 * form: 0 is the null stream).
 */
#include <errno.h>
#include <string.h>

#include "core.h"
#include "gpuprio.h"
#include "scheduler.h"

/* The XQueue of the application's stream handle; 0, or -ENOENT (no runtime, an unknown stream,
 * or a special handle without a current device). */
static int queue_of(void *stream, struct xqueue **out)
{
    if (core_shim.platform->bind() != 0)
        return -ENOENT;
    *out = core_queue_of((uintptr_t)stream, false);
    return *out ? 0 : -ENOENT;
}

GPUPRIO_API const char *gpuprio_version(void)
{
#define GP_STR2(x) #x
#define GP_STR(x) GP_STR2(x)
    return GP_STR(GPUPRIO_VERSION_MAJOR) "." GP_STR(GPUPRIO_VERSION_MINOR) "." GP_STR(
        GPUPRIO_VERSION_PATCH);
}

GPUPRIO_API int gpuprio_stream_set_priority(void *stream, int priority)
{
    struct xqueue *q;
    int rc = queue_of(stream, &q);
    return rc ? rc : sched_set_stream_priority(q, priority);
}

GPUPRIO_API int gpuprio_stream_get_priority(void *stream, int *priority)
{
    struct xqueue *q;
    if (!priority)
        return -EINVAL;
    int rc = queue_of(stream, &q);
    if (rc)
        return rc;
    *priority = atomic_load(&xq_st(q)->priority);
    return 0;
}

GPUPRIO_API int gpuprio_thread_set_priority(int priority)
{
    return sched_set_thread_priority(priority);
}

GPUPRIO_API int gpuprio_thread_get_priority(int *priority)
{
    return priority ? sched_thread_priority(priority) : -EINVAL;
}

GPUPRIO_API int gpuprio_thread_clear_priority(void)
{
    return sched_clear_thread_priority();
}

GPUPRIO_API int gpuprio_stream_stats(void *stream, struct gpuprio_queue_stats *out)
{
    struct xqueue *q;
    if (!out)
        return -EINVAL;
    int rc = queue_of(stream, &q);
    if (rc)
        return rc;
    sched_queue_stats(q, out);
    return 0;
}

GPUPRIO_API int gpuprio_stream_drain(void *stream, unsigned timeout_ms)
{
    struct xqueue *q;
    int rc = queue_of(stream, &q);
    return rc ? rc : xq_drain(q, (uint64_t)timeout_ms * 1000000u);
}

GPUPRIO_API int gpuprio_stats(struct gpuprio_queue_stats *out, size_t max)
{
    if (!out && max)
        return -EINVAL;
    return sched_all_stats(out, max);
}

GPUPRIO_API int gpuprio_runtime_path(char *buf, size_t size)
{
    if (!buf || !size)
        return -EINVAL;
    const struct gp_binding *b = core_shim.platform->binding();
    if (!b)
        return -ENOENT;
    const char *path = b->path;
    if (strlen(path) >= size)
        return -ERANGE;
    strcpy(buf, path);
    return 0;
}
