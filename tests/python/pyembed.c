/*
 * pyembed.c - Debian's Python interpreter as a program of this build: opens libpython (argv[1])
 * and runs Py_BytesMain with the remaining arguments, so that `pyembed LIBPYTHON -I -B x.py`
 * is `python3 -I -B x.py`.
 *
 * Why: python.shim preloads the instrumented shim into the interpreter. ThreadSanitizer's
 * runtime must be in the program itself: its shared form (libclang_rt.tsan-*.so) cannot be
 * preloaded into /usr/bin/python3 (with clang 14 any program started so crashes before main,
 * /bin/true included), whereas this program is linked like every other test program of a
 * ThreadSanitizer build, with the runtime inside, and the interpreter it runs is the same
 * libpython that /usr/bin/python3 is built from. Exits 77 (skipped) when there is no libpython
 * to open (Debian's libpython3.X is not installed).
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pyembed LIBPYTHON [PYTHON-ARGS...]\n");
        return 2;
    }
    void *py = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!py) {
        printf("skipped: no shared libpython to run Python in an instrumented program (%s); "
               "install Debian's libpython3.X (libpython3.11 on Debian 12)\n",
               dlerror());
        return 77;
    }
    int (*bytes_main)(int, char **);
    *(void **)&bytes_main = dlsym(py, "Py_BytesMain");
    if (!bytes_main) {
        printf("FAIL: %s has no Py_BytesMain\n", argv[1]);
        return 1;
    }
    argv[1] = argv[0]; /* the interpreter sees argv[0] and the arguments after LIBPYTHON */
    return bytes_main(argc - 1, argv + 1);
}
