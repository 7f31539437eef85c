/*
 * cuda_inert.c - a program without any CUDA driver: under libgpuprio-cuda.so it must run as
 * without it (the shim stays inert: no driver is loaded, nothing is printed) and keep its exit
 * status. It looks a libc function up through the shim's dlsym override on the way.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    int (*runtime_path)(char *, size_t) =
        (int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "gpuprio_runtime_path");
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!libc || !dlsym(libc, "strlen") || dlsym(libc, "cuLaunchKernel"))
        return 1;
    dlclose(libc);
    char buf[256];
    if (runtime_path && runtime_path(buf, sizeof buf) != -ENOENT)
        return 2;
    if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD))
        return 4; /* the shim must not have loaded a driver */
    printf("inert\n");
    return 3;
}
