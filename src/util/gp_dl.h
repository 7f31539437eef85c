/*
 * gp_dl.h - the C library's own dlsym and dlvsym, for a library that exports its own.
 *
 * The shims export dlsym/dlvsym (src/shim/dl_override.c) so that run-time lookups of GPU
 * functions find the wrappers. Inside the shim, a plain call to dlsym would then come back to
 * the override, so every internal lookup goes through gp_dlsym/gp_dlvsym instead: they call
 * libc's functions, found by reading libc's dynamic symbol table (the loader's link map, no
 * lookup function needed, so this works before any constructor ran).
 */
#ifndef GPUPRIO_DL_H
#define GPUPRIO_DL_H

/* Usable before constructors and sanitizer start-up (see gp_dl.c). */
#if defined(__clang__)
#define GP_UNINSTRUMENTED                                                                          \
    __attribute__((no_sanitize("address", "thread", "undefined"),                                  \
                   disable_sanitizer_instrumentation))
#else
#define GP_UNINSTRUMENTED                                                                          \
    __attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined))
#endif

/* libc's dlsym and dlvsym, or NULL when libc.so.6 cannot be read (not glibc). */
void *(*gp_libc_dlsym(void))(void *, const char *);
void *(*gp_libc_dlvsym(void))(void *, const char *, const char *);

/* Lookups through libc, as the shim itself (RTLD_NEXT means "after the shim"). */
void *gp_dlsym(void *handle, const char *name);
void *gp_dlvsym(void *handle, const char *name, const char *version);

/* A symbol of the loaded object whose file name ends with soname_suffix, by its default
 * version; NULL if not found. Reads the object's ELF tables; never calls a dl* function. */
void *gp_elf_default_sym(const char *soname_suffix, const char *name);

#endif /* GPUPRIO_DL_H */
