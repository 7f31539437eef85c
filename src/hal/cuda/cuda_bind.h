/*
 * cuda_bind.h - the application's CUDA driver (libcuda.so.1), found once and used for every
 * forwarded call (cuda_bind.c explains the search order and why there is only ever one).
 */
#ifndef GPUPRIO_CUDA_BIND_H
#define GPUPRIO_CUDA_BIND_H

#include <limits.h>

enum cudahal_source {
    CUDAHAL_FROM_OVERRIDE, /* GPUPRIO_CUDA_LIBRARY */
    CUDAHAL_FROM_MAPPED,   /* already mapped in the process */
    CUDAHAL_FROM_NEXT,     /* RTLD_NEXT */
    CUDAHAL_FROM_DLOPEN,   /* loaded by soname because nothing else was */
};

struct cudahal_binding {
    void *handle;
    enum cudahal_source source;
    char path[PATH_MAX];
};

/*
 * Binds to the driver on first use (thread-safe). 0 on success; -ENOENT when there is no CUDA
 * driver, -EEXIST when two copies are mapped, -ELOOP when the candidate is the shim itself.
 */
int cudahal_bind(void);
/* The binding, or NULL when cudahal_bind() failed. */
const struct cudahal_binding *cudahal_binding(void);
/* A function of the bound driver, or NULL. */
void *cudahal_sym(const char *name);

#endif /* GPUPRIO_CUDA_BIND_H */
