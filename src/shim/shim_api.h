/*
 * shim_api.h - what each platform shim provides to the public API (api.c).
 */
#ifndef GPUPRIO_SHIM_API_H
#define GPUPRIO_SHIM_API_H

#include "xqueue.h"

/* The XQueue of the application's stream handle, as the runtime reads the handle on the calling
 * thread; 0, or -ENOENT (no runtime, or an unknown stream). */
int gp_shim_queue_of(void *stream, struct xqueue **out);
/* The path of the runtime the shim forwards to, or NULL. */
const char *gp_shim_runtime_path(void);

#endif /* GPUPRIO_SHIM_API_H */
