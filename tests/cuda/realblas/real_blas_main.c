/* real_blas_main.c LIBRARY - loads real_blas_user's library RTLD_LOCAL, as Python loads
 * PyTorch's, and runs its calls. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: real_blas_main LIBRARY\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void (*run)(void) = NULL;
    if (lib)
        *(void **)&run = dlsym(lib, "real_blas_run");
    if (!run) {
        fprintf(stderr, "real_blas_main: %s\n", dlerror());
        return 2;
    }
    run();
    return 0;
}
