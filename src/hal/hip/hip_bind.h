/*
 * hip_bind.h - the application's HIP runtime, found once and used for every forwarded call
 * (src/util/gp_bind.c explains the search order and why there is only ever one).
 */
#ifndef GPUPRIO_HIP_BIND_H
#define GPUPRIO_HIP_BIND_H

#include "gp_bind.h"

/*
 * Binds to the runtime on first use (thread-safe). 0 on success; -ENOENT when there is no HIP
 * runtime, -EEXIST when two copies are mapped, -ELOOP when the candidate is the shim itself.
 */
int hiphal_bind(void);
/* The binding, or NULL when hiphal_bind() failed. */
const struct gp_binding *hiphal_binding(void);
/* A function of the bound runtime, or NULL. */
void *hiphal_sym(const char *name);

#endif /* GPUPRIO_HIP_BIND_H */
