/*
 * cuda_marker.h - completion markers on CUDA streams: events recorded behind admitted commands.
 */
#ifndef GPUPRIO_CUDA_MARKER_H
#define GPUPRIO_CUDA_MARKER_H

#include <stdint.h>

/* Records a marker on stream (a CUstream, or 0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD as the
 * calling thread means them) for the calling thread; NULL when none can be. Call only after the
 * driver accepted a command on that stream (see cuda_marker.c). */
void *cudahal_marker_record(uintptr_t stream);
/* 1 reached, 0 not yet, -EIO never will be. From any thread (the watcher's). */
int cudahal_marker_query(void *marker);
/* Whether everything put on stream has run (1), not yet (0), or it cannot tell (-ENOTSUP: the
 * driver has no stream query; -EIO: it failed); on the watcher's thread. */
int cudahal_stream_idle(uintptr_t stream);
/* Back to its context's pool. */
void cudahal_marker_release(void *marker);
/* Context ctx was destroyed: its pool is forgotten, its events never touched again. */
void cudahal_marker_forget(uintptr_t ctx);
/* A marker taken off a ring after context ctx was destroyed: forgotten if it was ctx's, else
 * back to its context's pool. */
void cudahal_marker_drop(void *marker, uintptr_t ctx);
/* In the child of fork: the parent's events are not this process's to use. */
void cudahal_marker_reset(void);

#endif /* GPUPRIO_CUDA_MARKER_H */
