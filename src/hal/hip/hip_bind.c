/*
 * hip_bind.c - the application's HIP runtime, libamdhip64 (gp_bind.c has the search and why
 * there is only ever one).
 */
#include "hip_bind.h"

#include <errno.h>
#include <pthread.h>

#include "gp_dl.h"

static const char *const sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                      "libamdhip64.so", NULL};
static struct gp_runtime runtime = {.what = "HIP runtime",
                                    .env = "GPUPRIO_HIP_LIBRARY",
                                    .stem = "libamdhip64",
                                    .probe = "hipLaunchKernel",
                                    .sonames = sonames,
                                    .result = -EAGAIN};
static pthread_once_t bind_once = PTHREAD_ONCE_INIT;

static void search(void)
{
    gp_bind_search(&runtime);
}

int hiphal_bind(void)
{
    pthread_once(&bind_once, search);
    return runtime.result;
}

const struct gp_binding *hiphal_binding(void)
{
    return hiphal_bind() == 0 ? &runtime.binding : NULL;
}

void *hiphal_sym(const char *name)
{
    return hiphal_bind() == 0 ? gp_dlsym(runtime.binding.handle, name) : NULL;
}
