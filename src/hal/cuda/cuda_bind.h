/*
 * cuda_bind.h - the application's CUDA driver, found once and used for every forwarded call
 * (src/util/gp_bind.c explains the search order and why there is only ever one).
 */
#ifndef GPUPRIO_CUDA_BIND_H
#define GPUPRIO_CUDA_BIND_H

#include "gp_bind.h"

/*
 * Binds to the driver on first use (thread-safe). 0 on success; -ENOENT when there is no CUDA
 * runtime, -EEXIST when two copies are mapped, -ELOOP when the candidate is the shim itself.
 */
int cudahal_bind(void);
/* The binding, or NULL when cudahal_bind() failed. */
const struct gp_binding *cudahal_binding(void);
/* A function of the bound driver, or NULL. */
void *cudahal_sym(const char *name);

#endif /* GPUPRIO_CUDA_BIND_H */
