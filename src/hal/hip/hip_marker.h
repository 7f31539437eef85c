/*
 * hip_marker.h - completion markers on HIP streams: events recorded behind admitted commands.
 */
#ifndef GPUPRIO_HIP_MARKER_H
#define GPUPRIO_HIP_MARKER_H

#include <stdint.h>

/* Records a marker on stream (of device) for the calling thread; NULL when none can be. Call
 * only after the runtime accepted a command on that stream (see hip_marker.c). */
void *hiphal_marker_record(uintptr_t stream, int device);
/* The same from a thread of gpuprio's own, whose errors are its own: behind a command the
 * runtime refused, where the calling thread's error state must stay the refusal's. stream must
 * be one the application created (the null and per-thread handles name another stream there). */
void *hiphal_marker_record_elsewhere(uintptr_t stream, int device);
/* 1 reached, 0 not yet, -EIO never will be. */
int hiphal_marker_query(void *marker);
/* Whether everything put on stream has run (1), not yet (0), or it cannot tell (-ENOTSUP:
 * the runtime has no stream query; -EIO: it failed). */
int hiphal_stream_idle(uintptr_t stream);
/* Back to device's pool. */
void hiphal_marker_release(int device, void *marker);
/* hipDeviceReset destroyed device's events: its pool is emptied without a call into the runtime
 * (the handles are dead, and HIP's are raw pointers). */
void hiphal_marker_forget(int device);
/* In the child of fork: the parent's events are not this process's to use. */
void hiphal_marker_reset(void);

#endif /* GPUPRIO_HIP_MARKER_H */
