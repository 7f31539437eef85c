/*
 * lt_callers.c [--probe-first] LIBRARY...: loads each LIBRARY (lt_user.c's builds) RTLD_LOCAL, as
 * Python loads extensions, and prints what its call_lt got from cublasLtMatmul, one line each.
 * --probe-first first calls whatever cublasLtMatmul the global scope has, before any cuBLASLt is
 * loaded (under gpuprio its export; without it none), and prints what it returned.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*matmul_fn)(void *, void *, const void *, const void *, void *, const void *, void *,
                         const void *, const void *, void *, void *, void *, const void *, void *,
                         unsigned long, void *);

int main(int argc, char **argv)
{
    int first = 1;
    if (argc > 1 && !strcmp(argv[1], "--probe-first")) {
        matmul_fn probe;
        *(void **)&probe = dlsym(RTLD_DEFAULT, "cublasLtMatmul");
        if (probe)
            printf("probe: %d\n", probe(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        first = 2;
    }
    for (int i = first; i < argc; i++) {
        void *lib = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        int (*call_lt)(void);
        *(void **)&call_lt = lib ? dlsym(lib, "call_lt") : NULL;
        if (!call_lt) {
            printf("%s: %s\n", argv[i], dlerror());
            return 1;
        }
        const char *base = strrchr(argv[i], '/');
        printf("%s: %d\n", base ? base + 1 : argv[i], call_lt());
    }
    return 0;
}
