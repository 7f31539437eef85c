/*
 * shim_path.c - finds the preload libraries (libgpuprio-hip.so, libgpuprio-cuda.so) for
 * `gpuprio run`, relative to the tool itself so that an installed tree can be moved as a whole.
 *
 * In order: GPUPRIO_LIBRARY_DIR; the build tree's libraries when the tool runs from its build
 * directory (their paths are compiled in: GP_BUILD_TOOL_DIR, GP_BUILD_HIP_SHIM,
 * GP_BUILD_CUDA_SHIM); else GP_REL_LIBDIR (the install's bin-to-lib path, "../lib") next to the
 * tool's own executable (/proc/self/exe). LD_PRELOAD needs absolute paths, so every directory is
 * resolved with realpath.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gp_options.h"
#include "tool.h"

#ifndef GP_REL_LIBDIR
#define GP_REL_LIBDIR "../lib"
#endif

#define HIP_NAME "libgpuprio-hip.so"
#define CUDA_NAME "libgpuprio-cuda.so"

/* dir/name into out if that file exists; 0, -ENOENT or -ENAMETOOLONG. */
static int look(const char *dir, const char *name, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size) {
        out[0] = '\0';
        return -ENAMETOOLONG;
    }
    if (access(out, R_OK) != 0) {
        out[0] = '\0';
        return -ENOENT;
    }
    return 0;
}

static int in_dir(const char *dir, struct gp_shims *out)
{
    char real[PATH_MAX];
    if (!realpath(dir, real)) {
        snprintf(out->dir, sizeof out->dir, "%s", dir);
        return -ENOENT;
    }
    snprintf(out->dir, sizeof out->dir, "%s", real);
    int rc = look(real, HIP_NAME, out->hip, sizeof out->hip);
    look(real, CUDA_NAME, out->cuda, sizeof out->cuda);
    return rc;
}

/* The directory of the running executable, resolved, into buf (PATH_MAX bytes). */
static int exe_dir(char *buf)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe - 1)
        return -ENOENT;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -ENOENT;
    *slash = '\0';
    return realpath(exe[0] ? exe : "/", buf) ? 0 : -errno;
}

#ifdef GP_BUILD_TOOL_DIR
/* Whether dir is the build directory the tool was built in. */
static bool is_build_dir(const char *dir)
{
    char build[PATH_MAX];
    return realpath(GP_BUILD_TOOL_DIR, build) && strcmp(build, dir) == 0;
}
#endif

int gp_shims_find(struct gp_shims *out)
{
    memset(out, 0, sizeof *out);
    const char *env = gp_opt_str(GP_OPT_LIBRARY_DIR);
    if (env)
        return in_dir(env, out);
    char dir[PATH_MAX];
    if (exe_dir(dir) != 0) {
        snprintf(out->dir, sizeof out->dir, "/proc/self/exe (unreadable)");
        return -ENOENT;
    }
#ifdef GP_BUILD_TOOL_DIR
    if (is_build_dir(dir)) {
        snprintf(out->dir, sizeof out->dir, "the build tree (%s)", GP_BUILD_TOOL_DIR);
#ifdef GP_BUILD_HIP_SHIM /* each library is built only where its platform's headers are */
        if (access(GP_BUILD_HIP_SHIM, R_OK) == 0)
            snprintf(out->hip, sizeof out->hip, "%s", GP_BUILD_HIP_SHIM);
#endif
#ifdef GP_BUILD_CUDA_SHIM
        if (access(GP_BUILD_CUDA_SHIM, R_OK) == 0)
            snprintf(out->cuda, sizeof out->cuda, "%s", GP_BUILD_CUDA_SHIM);
#endif
        return out->hip[0] || out->cuda[0] ? 0 : -ENOENT;
    }
#endif
    char lib[PATH_MAX];
    int n = snprintf(lib, sizeof lib, "%s/%s", dir, GP_REL_LIBDIR);
    if (n < 0 || (size_t)n >= sizeof lib)
        return -ENAMETOOLONG;
    return in_dir(lib, out);
}
