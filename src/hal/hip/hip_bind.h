/*
 * hip_bind.h - the application's HIP runtime, found once and used for every forwarded call
 * (hip_bind.c explains the search order and why there is only ever one).
 */
#ifndef GPUPRIO_HIP_BIND_H
#define GPUPRIO_HIP_BIND_H

#include <limits.h>

enum hiphal_source {
    HIPHAL_FROM_OVERRIDE, /* GPUPRIO_HIP_LIBRARY */
    HIPHAL_FROM_MAPPED,   /* already mapped in the process */
    HIPHAL_FROM_NEXT,     /* RTLD_NEXT */
    HIPHAL_FROM_DLOPEN,   /* loaded by soname because nothing else was */
};

struct hiphal_binding {
    void *handle;
    enum hiphal_source source;
    char path[PATH_MAX];
};

/*
 * Binds to the runtime on first use (thread-safe). 0 on success; -ENOENT when there is no HIP
 * runtime, -EEXIST when two copies are mapped, -ELOOP when the candidate is the shim itself.
 */
int hiphal_bind(void);
/* The binding, or NULL when hiphal_bind() failed. */
const struct hiphal_binding *hiphal_binding(void);
/* A function of the bound runtime, or NULL. */
void *hiphal_sym(const char *name);

#endif /* GPUPRIO_HIP_BIND_H */
