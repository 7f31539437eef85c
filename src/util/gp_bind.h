/*
 * gp_bind.h - finding the one GPU runtime of the process, the application's own (each
 * platform's HAL describes its runtime; gp_bind.c has the search order and why).
 */
#ifndef GPUPRIO_BIND_H
#define GPUPRIO_BIND_H

#include <limits.h>
#include <stdbool.h>

enum gp_bind_source {
    GP_BIND_FROM_OVERRIDE, /* the runtime's GPUPRIO_*_LIBRARY variable */
    GP_BIND_FROM_MAPPED,   /* already mapped in the process */
    GP_BIND_FROM_NEXT,     /* RTLD_NEXT */
    GP_BIND_FROM_DLOPEN,   /* loaded by soname because nothing else was */
};

struct gp_binding {
    void *handle;
    enum gp_bind_source source;
    char path[PATH_MAX];
};

/* A runtime to bind to, and the binding once made. Define one per platform with
 * GP_RUNTIME(...). */
struct gp_runtime {
    const char *what;           /* "HIP runtime", for messages */
    const char *env;            /* the override variable, e.g. GPUPRIO_HIP_LIBRARY */
    const char *stem;           /* copies are files named STEM.so* or STEM-*.so* (a wheel's) */
    const char *probe;          /* a function every copy exports */
    const char *const *sonames; /* what to dlopen when none is loaded, NULL-terminated */
    int result;                 /* of the search: see gp_bind_search */
    struct gp_binding binding;  /* when result is 0 */
};

/* Whether a file's base name is a copy of the library named stem: STEM.so, STEM.so.7 as
 * installed, or STEM-8f3a1b2c.so(.7) as auditwheel renames the libraries a Python wheel bundles. */
bool gp_bind_is_copy(const char *base, const char *stem);

/*
 * Searches for rt's runtime and sets rt->result: 0 (rt->binding is set); -ENOENT when there is
 * none, -EEXIST when two copies are mapped, -ELOOP when the candidate is the shim itself. Each
 * failure but the first is reported once. Call it once (the platform's pthread_once), lazily:
 * never from a constructor.
 */
void gp_bind_search(struct gp_runtime *rt);

/*
 * Where a call to name goes when no runtime could be bound (two copies mapped): where it would
 * go without gpuprio, unscheduled: to the caller's own runtime, found among the caller's object
 * (caller: an address in it) and its dependencies, else to the next definition after the shim.
 * A loader lookup per call is slow, but only this broken setup pays it.
 */
void *gp_unbound_fn(const char *name, const void *caller);

#endif /* GPUPRIO_BIND_H */
