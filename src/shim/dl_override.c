/*
 * dl_override.c - dlsym and dlvsym, exported so that run-time lookups find the wrappers.
 *
 * Triton's HIP launcher (and the CUDA runtime, for libcuda) opens the runtime with RTLD_NOLOAD
 * and looks its functions up with dlsym: those calls would reach the runtime directly, around
 * every exported wrapper. So the shim exports dlsym and dlvsym itself, in glibc's version nodes
 * (GLIBC_2.2.5, which binaries built against older glibc reference, and GLIBC_2.34), and hands
 * out a wrapper when a lookup on a real handle finds the bound runtime's own function of a name
 * the shim intercepts (core_lookup: the one rule for every platform).
 *
 * RTLD_DEFAULT and RTLD_NEXT lookups depend on who calls: glibc searches from the caller's
 * object and scope, found from the return address. They cannot resolve to the runtime's
 * functions ahead of the shim's exports anyway, so they need no wrapping, and on x86-64 they are
 * passed to libc by a jump, with the caller's return address untouched: their answer is exactly
 * what it would be without gpuprio. Elsewhere they are passed by a call, and are answered as if
 * asked from the shim (documented in docs/hip-coverage.md).
 */
#include <dlfcn.h>
#include <stdint.h>

#include "core.h"
#include "gp_dl.h"

#define GP_EXPORT __attribute__((visibility("default")))

/* A successful lookup leaves no error for dlerror(); the wrapping must not leave one either. */
static void *wrap(const char *name, void *sym)
{
    if (!sym || !name)
        return sym;
    void *out = core_lookup(name, sym);
    (void)dlerror();
    return out;
}

/*
 * Lookups on real handles, and the special handles before libc's functions were found (called
 * from the trampolines below, hence not static). Sanitizer runtimes get here while they start,
 * so this part is uninstrumented; wrap() runs only for real handles, after start-up.
 */
void *gp_dlsym_slow(void *handle, const char *name);
void *gp_dlvsym_slow(void *handle, const char *name, const char *version);

GP_UNINSTRUMENTED __attribute__((used, visibility("hidden"))) void *gp_dlsym_slow(void *handle,
                                                                                  const char *name)
{
    void *sym = gp_dlsym(handle, name);
    return handle == RTLD_DEFAULT || handle == RTLD_NEXT ? sym : wrap(name, sym);
}

GP_UNINSTRUMENTED __attribute__((used, visibility("hidden"))) void *
gp_dlvsym_slow(void *handle, const char *name, const char *version)
{
    void *sym = gp_dlvsym(handle, name, version);
    return handle == RTLD_DEFAULT || handle == RTLD_NEXT ? sym : wrap(name, sym);
}

#if defined(__x86_64__)
/* libc's functions, for the jumps below; found in the constructor, before most lookups. */
__attribute__((used, visibility("hidden"))) void *gp_libc_dlsym_ptr;
__attribute__((used, visibility("hidden"))) void *gp_libc_dlvsym_ptr;

/*
 * handle + 1 <= 1 (unsigned) exactly for RTLD_NEXT (-1) and RTLD_DEFAULT (0): jump to libc with
 * the caller's frame as it is. Anything else goes to the C code, also by a jump.
 */
#define GP_DL_TRAMPOLINE(entry, libc_ptr, slow)                                                    \
    ".globl " entry "\n"                                                                           \
    ".type " entry ",@function\n" entry ":\n"                                                      \
    "    .cfi_startproc\n"                                                                         \
    "    leaq 1(%rdi), %rax\n"                                                                     \
    "    cmpq $1, %rax\n"                                                                          \
    "    ja " slow "\n"                                                                            \
    "    movq " libc_ptr "(%rip), %rax\n"                                                          \
    "    testq %rax, %rax\n"                                                                       \
    "    jz " slow "\n"                                                                            \
    "    jmp *%rax\n"                                                                              \
    "    .cfi_endproc\n"                                                                           \
    ".size " entry ", .-" entry "\n"

__asm__(
    ".text\n" GP_DL_TRAMPOLINE("gp_dlsym_entry", "gp_libc_dlsym_ptr", "gp_dlsym_slow")
        GP_DL_TRAMPOLINE("gp_dlvsym_entry", "gp_libc_dlvsym_ptr",
                         "gp_dlvsym_slow") ".symver gp_dlsym_entry, dlsym@@GLIBC_2.34\n"
                                           ".symver gp_dlsym_entry, dlsym@GLIBC_2.2.5, remove\n"
                                           ".symver gp_dlvsym_entry, dlvsym@@GLIBC_2.34\n"
                                           ".symver gp_dlvsym_entry, dlvsym@GLIBC_2.2.5, remove\n");

__attribute__((constructor)) static void find_libc_dl(void)
{
    gp_libc_dlsym_ptr = (void *)gp_libc_dlsym();
    gp_libc_dlvsym_ptr = (void *)gp_libc_dlvsym();
}
#else
GP_EXPORT void *gp_dlsym_entry(void *handle, const char *name);
GP_EXPORT void *gp_dlvsym_entry(void *handle, const char *name, const char *version);
GP_EXPORT void *gp_dlsym_entry(void *handle, const char *name)
{
    return gp_dlsym_slow(handle, name);
}
GP_EXPORT void *gp_dlvsym_entry(void *handle, const char *name, const char *version)
{
    return gp_dlvsym_slow(handle, name, version);
}
__asm__(".symver gp_dlsym_entry, dlsym@@GLIBC_2.34\n"
        ".symver gp_dlvsym_entry, dlvsym@@GLIBC_2.34\n");
#endif
