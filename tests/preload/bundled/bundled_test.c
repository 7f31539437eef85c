/*
 * bundled_test.c - the shim binds to a runtime bundled the way PyTorch wheels bundle theirs.
 *
 * The program has no HIP dependency. It dlopen()s, RTLD_LOCAL, a framework library in a private
 * directory that depends on its own copy of the runtime there (bundle/lib). Under the shim:
 * the framework's calls reach the shim (its XQueue counted them), the shim bound to the bundled
 * copy, exactly one HIP runtime is mapped, and the framework's results are right.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "gpuprio.h"
#include "hip_compat.h"

static int runtimes;

static int count_runtimes(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    runtimes += strncmp(base, "libamdhip64.so", 14) == 0;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s BUNDLE_DIR/libframework.so\n", argv[0]);
        return 2;
    }
    void *fw = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    const char *why = fw ? "run under LD_PRELOAD" : dlerror();
    int (*run)(hipStream_t *) = fw ? (int (*)(hipStream_t *))dlsym(fw, "framework_run") : NULL;
    int (*stats)(void *, struct gpuprio_queue_stats *) =
        dlsym(RTLD_DEFAULT, "gpuprio_stream_stats");
    int (*runtime_path)(char *, size_t) = dlsym(RTLD_DEFAULT, "gpuprio_runtime_path");
    if (!run || !stats || !runtime_path) {
        printf("FAIL: framework or gpuprio API missing (%s)\n", why);
        return 1;
    }
    hipStream_t s = NULL;
    int result = run(&s);
    struct gpuprio_queue_stats st = {0};
    int rc = stats(s, &st);
    char path[4096] = "";
    runtime_path(path, sizeof path);
    dl_iterate_phdr(count_runtimes, NULL);
    int ok = result == 3 && rc == 0 && st.submitted == 4 && runtimes == 1 &&
             strstr(path, "/bundle/lib/libamdhip64.so") != NULL;
    printf("%s: result %d, XQueue %s with %llu commands, %d runtime(s) mapped, bound to %s\n",
           ok ? "ok" : "FAIL", result, rc == 0 ? "found" : "missing",
           (unsigned long long)st.submitted, runtimes, path);
    return !ok;
}
