/*
 * cuda_bind.c - the application's CUDA driver, libcuda.so.1 (gp_bind.c has the search and why
 * there is only ever one).
 */
#include "cuda_bind.h"

#include <errno.h>
#include <pthread.h>

#include "gp_dl.h"

static const char *const sonames[] = {"libcuda.so.1", NULL};
static struct gp_runtime runtime = {.what = "CUDA driver",
                                    .env = "GPUPRIO_CUDA_LIBRARY",
                                    .stem = "libcuda",
                                    .probe = "cuLaunchKernel",
                                    .sonames = sonames,
                                    .result = -EAGAIN};
static pthread_once_t bind_once = PTHREAD_ONCE_INIT;

static void search(void)
{
    gp_bind_search(&runtime);
}

int cudahal_bind(void)
{
    pthread_once(&bind_once, search);
    return runtime.result;
}

const struct gp_binding *cudahal_binding(void)
{
    return cudahal_bind() == 0 ? &runtime.binding : NULL;
}

void *cudahal_sym(const char *name)
{
    return cudahal_bind() == 0 ? gp_dlsym(runtime.binding.handle, name) : NULL;
}
