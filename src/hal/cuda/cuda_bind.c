/*
 * cuda_bind.c - finds the one CUDA driver of the process, the application's own.
 *
 * The shim never links against libcuda (no DT_NEEDED) and never loads a second copy: contexts,
 * streams and functions of one copy mean nothing to another. The CUDA runtime dlopen()s
 * libcuda.so.1 itself, and frameworks may load a driver of their own choosing, so the driver is
 * found in this order, lazily, on the first intercepted call (never from a constructor):
 *   1. GPUPRIO_CUDA_LIBRARY, a path, when set;
 *   2. the copy already mapped in the process (dl_iterate_phdr, basename libcuda.so*); two
 *      different mapped copies are an error, reported, never silently used;
 *   3. whatever RTLD_NEXT resolves cuLaunchKernel to;
 *   4. only if none is loaded, dlopen("libcuda.so.1").
 * A handle whose cuLaunchKernel resolves back into the shim itself is rejected. Without any
 * driver the shim stays inert, and says so once at debug level.
 */
#include "cuda_bind.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gp_dl.h"
#include "gp_log.h"

#define DRIVER_BASENAME "libcuda.so"
#define DRIVER_SONAME "libcuda.so.1"
#define PROBE_SYMBOL "cuLaunchKernel"

static struct cudahal_binding binding;
static int bind_result = -EAGAIN;
static pthread_once_t bind_once = PTHREAD_ONCE_INIT;

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
    char path[2][PATH_MAX];
    dev_t dev[2];
    ino_t ino[2];
    int found;
};

/* dl_iterate_phdr callback: notes each distinct file named libcuda.so* (not libcudart etc.). */
static int find_mapped(struct dl_phdr_info *info, size_t size, void *data)
{
    struct mapped_search *ms = data;
    (void)size;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || strncmp(base, DRIVER_BASENAME, strlen(DRIVER_BASENAME)) != 0)
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

/* Accepts handle if its cuLaunchKernel exists and is not the shim's own. */
static int adopt(void *handle, const char *path, enum cudahal_source source)
{
    const void *self_base = NULL, *fn_base = NULL;
    object_of((const void *)&cudahal_bind, &self_base);
    void *fn = gp_dlsym(handle, PROBE_SYMBOL);
    if (!fn || (object_of(fn, &fn_base) && fn_base == self_base)) {
        gp_log(GP_LOG_ERROR,
               "%s%s does not provide the CUDA driver (it resolves to gpuprio itself or lacks "
               "cuLaunchKernel); not used",
               source == CUDAHAL_FROM_OVERRIDE ? "GPUPRIO_CUDA_LIBRARY=" : "", path);
        return -ELOOP;
    }
    binding.handle = handle;
    binding.source = source;
    snprintf(binding.path, sizeof binding.path, "%s", path);
    gp_log(GP_LOG_DEBUG, "bound to the CUDA driver %s", binding.path);
    return 0;
}

static int bind_override(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h)
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        gp_log(GP_LOG_ERROR,
               "GPUPRIO_CUDA_LIBRARY=%s cannot be loaded (%s); expected the path of the "
               "application's libcuda.so.1",
               path, dlerror());
        return -ENOENT;
    }
    return adopt(h, path, CUDAHAL_FROM_OVERRIDE);
}

static void bind_driver(void)
{
    const char *override = getenv("GPUPRIO_CUDA_LIBRARY");
    if (override && *override) {
        bind_result = bind_override(override);
        return;
    }

    struct mapped_search ms = {0};
    dl_iterate_phdr(find_mapped, &ms);
    if (ms.found > 1) {
        gp_log(GP_LOG_ERROR,
               "two CUDA drivers are loaded (%s and %s); gpuprio stays out of the way. Set "
               "GPUPRIO_CUDA_LIBRARY to the one the application uses",
               ms.path[0], ms.path[1]);
        bind_result = -EEXIST;
        return;
    }
    if (ms.found == 1) {
        void *h = dlopen(ms.path[0], RTLD_LAZY | RTLD_NOLOAD);
        bind_result = h ? adopt(h, ms.path[0], CUDAHAL_FROM_MAPPED) : -ENOENT;
        return;
    }

    void *next = gp_dlsym(RTLD_NEXT, PROBE_SYMBOL);
    const char *path = next ? object_of(next, NULL) : NULL;
    if (path) {
        void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            bind_result = adopt(h, path, CUDAHAL_FROM_NEXT);
            return;
        }
    }

    void *h = dlopen(DRIVER_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        bind_result = adopt(h, DRIVER_SONAME, CUDAHAL_FROM_DLOPEN);
        return;
    }
    (void)dlerror();
    gp_log(GP_LOG_DEBUG, "no CUDA driver in this process; gpuprio stays inert");
    bind_result = -ENOENT;
}

int cudahal_bind(void)
{
    pthread_once(&bind_once, bind_driver);
    return bind_result;
}

const struct cudahal_binding *cudahal_binding(void)
{
    return cudahal_bind() == 0 ? &binding : NULL;
}

void *cudahal_sym(const char *name)
{
    return cudahal_bind() == 0 ? gp_dlsym(binding.handle, name) : NULL;
}
