/*
 * gemm_local.c - runs gemm_slices (built as a shared library, libgemm_slices_local.so) loaded
 * RTLD_LOCAL, as Python loads PyTorch's extension: its cuBLASLt (and driver) are then in its
 * local scope only, not after the shim in the global one, while its calls to cublasLtMatmul still
 * find the shim's export first. The shim must find the application's cuBLASLt all the same.
 *
 *   gemm_local LIB CASE [EXPECT]      exit status: gemm_slices's
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gemm_local LIB CASE [EXPECT]\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    int (*gemm_main)(int, char **);
    *(void **)&gemm_main = lib ? dlsym(lib, "gemm_slices_main") : NULL;
    if (!gemm_main) {
        printf("FATAL: %s\n", dlerror());
        return 1;
    }
    return gemm_main(argc - 1, argv + 1);
}
