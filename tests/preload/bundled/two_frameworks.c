/*
 * two_frameworks.c - two framework libraries, each with its own bundled HIP runtime of a
 * different soname, both loaded RTLD_LOCAL: neither runtime is in the global scope, so calls
 * that reach the shim can only be forwarded to the caller's own runtime, found from the caller.
 *
 *   two_frameworks FRAMEWORK_A FRAMEWORK_B    prints both results; exits 0 when both are right
 */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*run_fn)(void **stream_out);

static int run(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen %s: %s\n", path, dlerror());
        return -100;
    }
    void *fn = dlsym(h, "framework_run");
    void *stream = NULL;
    return fn ? ((run_fn)fn)(&stream) : -101;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: two_frameworks FRAMEWORK_A FRAMEWORK_B\n");
        return 2;
    }
    /* Both loaded before either makes its first HIP call. */
    if (!dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) || !dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)) {
        printf("dlopen: %s\n", dlerror());
        return 2;
    }
    int a = run(argv[1]), b = run(argv[2]);
    printf("framework A -> %d, framework B -> %d (3 is right)\n", a, b);
    return !(a == 3 && b == 3);
}
