/*
 * tools_child.c - the command that `gpuprio run` runs in tests/tools/run.sh: a C program (not
 * sh) so that in sanitizer builds the instrumented preload library can be loaded into it.
 *
 *   tools_child exit N      exits with status N
 *   tools_child signal N    dies of signal N (its default action)
 *   tools_child env SHIM    prints GPUPRIO_PRIORITY, GPUPRIO_POLICY, GPUPRIO_WINDOW, whether
 *                           LD_PRELOAD names SHIM (an absolute path) as one of its entries, and
 *                           LD_PRELOAD itself
 *   tools_child gpu-call    calls hipDeviceSynchronize where a preloaded library defines it (the
 *                           HIP shim), a first GPU call, after which the library says what it
 *                           found wrong with its variables; exits 0
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "(unset)";
}

/* Whether the colon- or space-separated list has entry as one of its entries. */
static int has_entry(const char *list, const char *entry)
{
    size_t n = strlen(entry);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ": ");
        if (len == n && strncmp(p, entry, n) == 0)
            return 1;
        p += len;
        p += strspn(p, ": ");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "exit") == 0)
        return atoi(argv[2]);
    if (argc == 3 && strcmp(argv[1], "signal") == 0) {
        int sig = atoi(argv[2]);
        signal(sig, SIG_DFL);
        raise(sig);
        return 100; /* not reached */
    }
    if (argc == 3 && strcmp(argv[1], "env") == 0) {
        const char *preload = getenv("LD_PRELOAD");
        printf("priority=%s\npolicy=%s\nwindow=%s\nwindow_us=%s\n", env("GPUPRIO_PRIORITY"),
               env("GPUPRIO_POLICY"), env("GPUPRIO_WINDOW"), env("GPUPRIO_WINDOW_US"));
        printf("shim_preloaded=%s\n",
               argv[2][0] == '/' && has_entry(preload, argv[2]) ? "yes" : "no");
        printf("LD_PRELOAD=%s\n", env("LD_PRELOAD"));
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "gpu-call") == 0) {
        int (*device_synchronize)(void) =
            (int (*)(void))dlsym(RTLD_DEFAULT, "hipDeviceSynchronize");
        if (device_synchronize)
            device_synchronize();
        return 0;
    }
    fprintf(stderr, "usage: tools_child exit N | signal N | env SHIM | gpu-call\n");
    return 99;
}
