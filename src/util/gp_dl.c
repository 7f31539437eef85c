/*
 * gp_dl.c - see gp_dl.h.
 *
 * libc's dlsym cannot be looked up by name from a library that defines dlsym itself: every
 * lookup by name, versioned or not, would find the override first. So libc's dynamic symbol
 * table is read directly: the loader's list of objects (_r_debug), libc's dynamic section, and
 * its GNU hash table, taking the default version (the one an application links against today).
 *
 * Sanitizer runtimes look functions up with dlsym(RTLD_NEXT) while they start, before their
 * shadow memory and interceptors exist and before any constructor of ours ran. The code they can
 * reach here is therefore left uninstrumented and calls no C library function that a sanitizer
 * intercepts (string comparisons are done by hand).
 */
#include "gp_dl.h"

#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern struct r_debug _r_debug;

GP_UNINSTRUMENTED static size_t length(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

GP_UNINSTRUMENTED static bool same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

GP_UNINSTRUMENTED static bool ends_with(const char *s, const char *suffix)
{
    size_t n = length(s), m = length(suffix);
    return n >= m && same(s + n - m, suffix) && (n == m || s[n - m - 1] == '/');
}

GP_UNINSTRUMENTED static uint32_t gnu_hash(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = h * 33 + *p;
    return h;
}

/* The loader relocates most dynamic-section pointers in place, but not every loader does. */
GP_UNINSTRUMENTED static uintptr_t dyn_ptr(const struct link_map *m, ElfW(Addr) p)
{
    return p < m->l_addr ? m->l_addr + p : p;
}

GP_UNINSTRUMENTED static void *lookup_default(const struct link_map *m, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *hash = NULL;
    const ElfW(Half) *versym = NULL;
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB:
            symtab = (const ElfW(Sym) *)dyn_ptr(m, d->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *)dyn_ptr(m, d->d_un.d_ptr);
            break;
        case DT_GNU_HASH:
            hash = (const uint32_t *)dyn_ptr(m, d->d_un.d_ptr);
            break;
        case DT_VERSYM:
            versym = (const ElfW(Half) *)dyn_ptr(m, d->d_un.d_ptr);
            break;
        default:
            break;
        }
    }
    if (!symtab || !strtab || !hash)
        return NULL;
    uint32_t nbuckets = hash[0], symoffset = hash[1], bloom_size = hash[2];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(hash + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t h = gnu_hash(name);
    if (!nbuckets)
        return NULL;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t ch = chain[i - symoffset];
        const ElfW(Sym) *s = &symtab[i];
        bool hidden_version = versym && (versym[i] & 0x8000);
        if ((ch | 1) == (h | 1) && s->st_shndx != SHN_UNDEF && !hidden_version &&
            same(strtab + s->st_name, name))
            return (void *)(m->l_addr + s->st_value);
        if (ch & 1)
            return NULL;
    }
}

GP_UNINSTRUMENTED void *gp_elf_default_sym(const char *soname_suffix, const char *name)
{
    for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next)
        if (m->l_name && ends_with(m->l_name, soname_suffix))
            return lookup_default(m, name);
    return NULL;
}

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

/* Resolved at most a few times over (racing first calls find the same answer). */
static _Atomic(dlsym_fn) libc_dlsym;
static _Atomic(dlvsym_fn) libc_dlvsym;

GP_UNINSTRUMENTED dlsym_fn gp_libc_dlsym(void)
{
    dlsym_fn f = atomic_load_explicit(&libc_dlsym, memory_order_acquire);
    if (!f) {
        f = (dlsym_fn)gp_elf_default_sym("libc.so.6", "dlsym");
        atomic_store_explicit(&libc_dlsym, f, memory_order_release);
    }
    return f;
}

GP_UNINSTRUMENTED dlvsym_fn gp_libc_dlvsym(void)
{
    dlvsym_fn f = atomic_load_explicit(&libc_dlvsym, memory_order_acquire);
    if (!f) {
        f = (dlvsym_fn)gp_elf_default_sym("libc.so.6", "dlvsym");
        atomic_store_explicit(&libc_dlvsym, f, memory_order_release);
    }
    return f;
}

GP_UNINSTRUMENTED void *gp_dlsym(void *handle, const char *name)
{
    dlsym_fn f = gp_libc_dlsym();
    return f ? f(handle, name) : NULL;
}

GP_UNINSTRUMENTED void *gp_dlvsym(void *handle, const char *name, const char *version)
{
    dlvsym_fn f = gp_libc_dlvsym();
    return f ? f(handle, name, version) : NULL;
}
