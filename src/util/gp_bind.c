/*
 * gp_bind.c - finds the one GPU runtime of the process, the application's own (HIP's
 * libamdhip64, CUDA's libcuda: each platform's HAL describes its own in a struct gp_runtime).
 *
 * A shim never links against the runtime and never loads a second copy: kernels registered in
 * one copy cannot be launched through another ("invalid device function"), and streams and
 * contexts of one copy mean nothing to another. PyTorch wheels load their bundled runtime with
 * RTLD_LOCAL, where dlsym(RTLD_NEXT) finds nothing, and the CUDA runtime dlopen()s libcuda
 * itself, so the runtime is found in this order, lazily, on the first intercepted call:
 *   1. the override variable (GPUPRIO_HIP_LIBRARY, GPUPRIO_CUDA_LIBRARY), a path, when set
 *      (read with the other options at load: gp_options.def);
 *   2. the copy already mapped in the process (dl_iterate_phdr, by file name); two different
 *      mapped copies are an error, reported, never silently used;
 *   3. whatever RTLD_NEXT resolves the probe function to;
 *   4. only if none is loaded, dlopen by soname.
 * A handle whose probe function resolves back into the shim itself is rejected. Without any
 * runtime the shim stays inert, and says so once at debug level.
 */
#include "gp_bind.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gp_dl.h"
#include "gp_log.h"
#include "gp_options.h"

/* The shared object that contains addr, or NULL. */
static const char *object_of(const void *addr, const void **base)
{
    Dl_info info;
    if (!dladdr(addr, &info))
        return NULL;
    if (base)
        *base = info.dli_fbase;
    return info.dli_fname;
}

struct mapped_search {
    const char *stem;
    char path[2][PATH_MAX];
    dev_t dev[2];
    ino_t ino[2];
    int found;
};

/* One missed here would be taken for none loaded, and a second runtime opened by soname. */
bool gp_bind_is_copy(const char *base, const char *stem)
{
    size_t n = strlen(stem);
    if (strncmp(base, stem, n) != 0)
        return false;
    base += n;
    return !strncmp(base, ".so", 3) ? base[3] == '\0' || base[3] == '.'
           : *base == '-'           ? strstr(base, ".so") != NULL
                                    : false;
}

/* dl_iterate_phdr callback: notes each distinct file that is a copy of the runtime. */
static int find_mapped(struct dl_phdr_info *info, size_t size, void *data)
{
    struct mapped_search *ms = data;
    (void)size;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || !gp_bind_is_copy(base, ms->stem))
        return 0;
    struct stat st;
    if (stat(name, &st) != 0)
        return 0;
    for (int i = 0; i < ms->found && i < 2; i++)
        if (ms->dev[i] == st.st_dev && ms->ino[i] == st.st_ino)
            return 0; /* the same file under another name */
    if (ms->found < 2) {
        snprintf(ms->path[ms->found], PATH_MAX, "%s", name);
        ms->dev[ms->found] = st.st_dev;
        ms->ino[ms->found] = st.st_ino;
    }
    ms->found++;
    return 0;
}

/* Accepts handle if its probe function exists and is not the shim's own. */
static int adopt(struct gp_runtime *rt, void *handle, const char *path, enum gp_bind_source source)
{
    const void *self_base = NULL, *fn_base = NULL;
    object_of((const void *)&gp_bind_search, &self_base);
    void *fn = gp_dlsym(handle, rt->probe);
    if (!fn || (object_of(fn, &fn_base) && fn_base == self_base)) {
        gp_log(GP_LOG_ERROR,
               "%s%s%s does not provide the %s (it resolves to gpuprio itself or lacks %s); "
               "not used",
               source == GP_BIND_FROM_OVERRIDE ? rt->env : "",
               source == GP_BIND_FROM_OVERRIDE ? "=" : "", path, rt->what, rt->probe);
        return -ELOOP;
    }
    rt->binding.handle = handle;
    rt->binding.source = source;
    snprintf(rt->binding.path, sizeof rt->binding.path, "%s", path);
    gp_log(GP_LOG_DEBUG, "bound to the %s %s", rt->what, rt->binding.path);
    return 0;
}

static int bind_override(struct gp_runtime *rt, const char *path)
{
    /* dlopen() opens what it is given without looking, even with RTLD_NOLOAD: a FIFO would hold
     * the application's first GPU call for ever, a device could be read. A path that exists must
     * be a regular file (a missing one is dlopen's to report); a name without a slash is
     * searched for by the loader, as a soname is. */
    struct stat st;
    if (strchr(path, '/') && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        gp_log(GP_LOG_ERROR,
               "%s=%s is not a regular file (a FIFO, a device or a directory is refused); "
               "expected the path of the application's %s.so*",
               rt->env, path, rt->stem);
        return -ENOENT;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h)
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        gp_log(GP_LOG_ERROR,
               "%s=%s cannot be loaded (%s); expected the path of the application's %s.so*",
               rt->env, path, dlerror(), rt->stem);
        return -ENOENT;
    }
    return adopt(rt, h, path, GP_BIND_FROM_OVERRIDE);
}

static int search(struct gp_runtime *rt)
{
    /* The HALs name their variable; the table holds its value. */
    int opt = gp_opt_find(rt->env);
    if (opt < 0)
        gp_log(GP_LOG_ERROR, "%s is not in gpuprio's options table (gp_options.def)", rt->env);
    const char *override = opt >= 0 ? gp_opt_str((enum gp_opt)opt) : NULL;
    if (override)
        return bind_override(rt, override);

    struct mapped_search ms = {.stem = rt->stem};
    dl_iterate_phdr(find_mapped, &ms);
    if (ms.found > 1) {
        gp_log(GP_LOG_ERROR,
               "two %ss are loaded (%s and %s); gpuprio stays out of the way. Set %s to the "
               "one the application uses",
               rt->what, ms.path[0], ms.path[1], rt->env);
        return -EEXIST;
    }
    if (ms.found == 1) {
        void *h = dlopen(ms.path[0], RTLD_LAZY | RTLD_NOLOAD);
        return h ? adopt(rt, h, ms.path[0], GP_BIND_FROM_MAPPED) : -ENOENT;
    }

    void *next = gp_dlsym(RTLD_NEXT, rt->probe);
    const char *path = next ? object_of(next, NULL) : NULL;
    void *h = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (h)
        return adopt(rt, h, path, GP_BIND_FROM_NEXT);

    for (const char *const *soname = rt->sonames; *soname; soname++)
        if ((h = dlopen(*soname, RTLD_NOW | RTLD_LOCAL)))
            return adopt(rt, h, *soname, GP_BIND_FROM_DLOPEN);
    (void)dlerror();
    gp_log(GP_LOG_DEBUG, "no %s in this process; gpuprio stays inert", rt->what);
    return -ENOENT;
}

void gp_bind_search(struct gp_runtime *rt)
{
    rt->result = search(rt);
}

void *gp_unbound_fn(const char *name, const void *caller)
{
    const void *self = NULL;
    Dl_info info;
    void *fn = NULL;
    if (dladdr((const void *)&gp_unbound_fn, &info))
        self = info.dli_fbase;
    if (caller && dladdr(caller, &info) && info.dli_fname && info.dli_fbase != self) {
        void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            fn = gp_dlsym(h, name);
            dlclose(h);
        }
        /* The program's own handle searches the global scope, which starts with the shim. */
        if (fn && dladdr(fn, &info) && info.dli_fbase == self)
            fn = NULL;
    }
    if (!fn)
        fn = gp_dlsym(RTLD_NEXT, name);
    (void)dlerror();
    return fn;
}
