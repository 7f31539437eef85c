/*
 * scope_caller.c - looks names up with RTLD_DEFAULT and RTLD_NEXT from inside a library loaded
 * with RTLD_LOCAL. glibc answers such lookups from the caller's own scope, which here includes
 * scope_dep; a dlsym override that called libc itself would ask from the shim's scope and find
 * nothing (see lookup.c).
 */
#include <dlfcn.h>

void *scope_lookup_default(const char *name);
void *scope_lookup_next(const char *name);
int scope_private_value(void);
int scope_direct(void);

/* A direct reference, so the linker keeps scope_dep as a dependency (DT_NEEDED). */
int scope_direct(void)
{
    return scope_private_value();
}

/*
 * glibc finds the caller from dlsym's return address; a tail call would make it this function's
 * caller, so the result is kept past the call (the empty asm) to keep the call a real one.
 */
void *scope_lookup_default(const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    __asm__ volatile("" : "+r"(sym));
    return sym;
}

void *scope_lookup_next(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    __asm__ volatile("" : "+r"(sym));
    return sym;
}
