/*
 * hip_bind.c - finds the one HIP runtime of the process, the application's own.
 *
 * The shim never links against libamdhip64 and never loads a second copy: kernels registered
 * in one copy cannot be launched through another ("invalid device function"), and streams of one
 * copy are unknown to another ("context is destroyed"). PyTorch wheels load their bundled
 * runtime with RTLD_LOCAL, where dlsym(RTLD_NEXT) finds nothing, so the runtime is found in this
 * order, lazily, on the first intercepted call:
 *   1. GPUPRIO_HIP_LIBRARY, a path, when set;
 *   2. the copy already mapped in the process (dl_iterate_phdr, basename libamdhip64.so*);
 *      two different mapped copies are an error, reported, never silently used;
 *   3. whatever RTLD_NEXT resolves hipLaunchKernel to;
 *   4. only if none is loaded, dlopen by soname.
 * A handle whose functions resolve back into the shim itself is rejected.
 */
#include "hip_bind.h"

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

static struct hiphal_binding binding;
static int bind_result = -EAGAIN;
static pthread_once_t bind_once = PTHREAD_ONCE_INIT;

static const char *const sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                      "libamdhip64.so"};

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

static int find_mapped(struct dl_phdr_info *info, size_t size, void *data)
{
    struct mapped_search *ms = data;
    (void)size;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || strncmp(base, "libamdhip64.so", 14) != 0)
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

/* Accepts handle if its hipLaunchKernel is not the shim's own. */
static int adopt(void *handle, const char *path, enum hiphal_source source)
{
    const void *self_base = NULL, *fn_base = NULL;
    object_of((const void *)&hiphal_bind, &self_base);
    void *fn = gp_dlsym(handle, "hipLaunchKernel");
    if (!fn || (object_of(fn, &fn_base) && fn_base == self_base)) {
        gp_log(GP_LOG_ERROR,
               "%s%s does not provide the HIP runtime (it resolves to gpuprio "
               "itself or lacks hipLaunchKernel); not used",
               source == HIPHAL_FROM_OVERRIDE ? "GPUPRIO_HIP_LIBRARY=" : "", path);
        return -ELOOP;
    }
    binding.handle = handle;
    binding.source = source;
    snprintf(binding.path, sizeof binding.path, "%s", path);
    return 0;
}

static int bind_override(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h)
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        gp_log(GP_LOG_ERROR,
               "GPUPRIO_HIP_LIBRARY=%s cannot be loaded (%s); expected the path "
               "of the application's libamdhip64.so",
               path, dlerror());
        return -ENOENT;
    }
    return adopt(h, path, HIPHAL_FROM_OVERRIDE);
}

static void bind_runtime(void)
{
    const char *override = getenv("GPUPRIO_HIP_LIBRARY");
    if (override && *override) {
        bind_result = bind_override(override);
        return;
    }

    struct mapped_search ms = {0};
    dl_iterate_phdr(find_mapped, &ms);
    if (ms.found > 1) {
        gp_log(GP_LOG_ERROR,
               "two HIP runtimes are loaded (%s and %s); gpuprio stays out of the "
               "way. Set GPUPRIO_HIP_LIBRARY to the one the application uses",
               ms.path[0], ms.path[1]);
        bind_result = -EEXIST;
        return;
    }
    if (ms.found == 1) {
        void *h = dlopen(ms.path[0], RTLD_LAZY | RTLD_NOLOAD);
        bind_result = h ? adopt(h, ms.path[0], HIPHAL_FROM_MAPPED) : -ENOENT;
        return;
    }

    void *next = gp_dlsym(RTLD_NEXT, "hipLaunchKernel");
    const char *path = next ? object_of(next, NULL) : NULL;
    if (path) {
        void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            bind_result = adopt(h, path, HIPHAL_FROM_NEXT);
            return;
        }
    }

    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
        void *h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            bind_result = adopt(h, sonames[i], HIPHAL_FROM_DLOPEN);
            return;
        }
    }
    gp_log(GP_LOG_DEBUG, "no HIP runtime in this process; gpuprio stays inert");
    bind_result = -ENOENT;
}

int hiphal_bind(void)
{
    pthread_once(&bind_once, bind_runtime);
    return bind_result;
}

const struct hiphal_binding *hiphal_binding(void)
{
    return hiphal_bind() == 0 ? &binding : NULL;
}

void *hiphal_sym(const char *name)
{
    return hiphal_bind() == 0 ? gp_dlsym(binding.handle, name) : NULL;
}
