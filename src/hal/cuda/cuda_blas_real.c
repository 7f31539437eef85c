/*
 * cuda_blas_real.c - each call site's BLAS function (cuda_blas_real.h).
 *
 * Sites are keyed by return address in a small open-addressed table per entry point, claimed
 * lock-free; a site whose entry is being written looks again itself. gpuprio never loads a BLAS
 * library: NOLOAD opens only take a reference to one the application keeps, released at once.
 */
#include "cuda_blas_real.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gp_bind.h"
#include "gp_dl.h"
#include "gp_log.h"

/* dl_iterate_phdr's callback: the path of the first loaded copy of the library whose stem is
 * out's first contents, whatever its version (opened after the walk, outside the loader's lock). */
struct copy_search {
    const char *stem;
    char path[PATH_MAX];
};

static int find_copy(struct dl_phdr_info *info, size_t size, void *data)
{
    struct copy_search *cs = data;
    (void)size;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    base = base ? base + 1 : info->dlpi_name;
    if (!base || !gp_bind_is_copy(base, cs->stem))
        return 0;
    snprintf(cs->path, sizeof cs->path, "%s", info->dlpi_name);
    return 1;
}

static const void *shim_base(void)
{
    Dl_info info;
    return dladdr((const void *)&cudahal_blas_next, &info) ? info.dli_fbase : NULL;
}

void *cudahal_blas_next(const char *name, const char *stem)
{
    void *fn = gp_dlsym(RTLD_NEXT, name);
    struct copy_search cs = {.stem = stem};
    if (!fn && dl_iterate_phdr(find_copy, &cs)) {
        void *lib = dlopen(cs.path, RTLD_LAZY | RTLD_NOLOAD);
        fn = lib ? gp_dlsym(lib, name) : NULL;
        if (lib)
            dlclose(lib);
    }
    (void)dlerror();
    return fn;
}

void *cudahal_blas_sym_beside(const void *fn, const char *name)
{
    Dl_info info;
    void *lib = NULL, *sym = NULL;
    if (fn && dladdr(fn, &info) && info.dli_fname)
        lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    sym = lib ? gp_dlsym(lib, name) : NULL;
    if (lib)
        dlclose(lib);
    if (sym && dladdr(sym, &info) && info.dli_fbase == shim_base())
        sym = NULL;
    (void)dlerror();
    return sym;
}

static void *lookup(struct cudahal_blas_entry *e, const void *site)
{
    void *fn = gp_unbound_fn(e->name, site); /* never the shim's own */
    if (!fn)
        fn = cudahal_blas_next(e->name, e->stem);
    if (fn || atomic_exchange(&e->said, true))
        return fn;
    gp_log_release(); /* a GPU library is in use: what was held back is said first */
    gp_log(GP_LOG_WARN,
           "%s was called, but no %s is loaded: the call fails with "
           "CUBLAS_STATUS_NOT_INITIALIZED",
           e->name, e->library);
    return NULL;
}

void *cudahal_blas_real(struct cudahal_blas_entry *e, const void *site)
{
    size_t i = ((uintptr_t)site >> 4) % CUDAHAL_BLAS_SITES;
    for (size_t probe = 0; probe < CUDAHAL_BLAS_SITES; probe++, i = (i + 1) % CUDAHAL_BLAS_SITES) {
        const void *at = atomic_load_explicit(&e->sites[i].site, memory_order_acquire);
        if (at == site) {
            void *fn = atomic_load_explicit(&e->sites[i].fn, memory_order_acquire);
            if (fn)
                return fn;
            break; /* being written */
        }
        if (at)
            continue;
        void *fn = lookup(e, site);
        const void *none = NULL;
        if (fn && atomic_compare_exchange_strong(&e->sites[i].site, &none, site))
            atomic_store_explicit(&e->sites[i].fn, fn, memory_order_release);
        return fn;
    }
    return lookup(e, site);
}
