/*
 * wheel_framework.c - stands in for a framework library of a ROCm Python wheel (like
 * torch/lib/libtorch_hip.so): linked against the runtime copied next to it (RUNPATH $ORIGIN),
 * and itself dlopen()ed RTLD_LOCAL by wheel_main.c, so the runtime is in no global scope.
 */
#include "calls.h"

int framework_calls(void);
int framework_finish(const char *mode);

int framework_calls(void)
{
    return show_calls();
}

int framework_finish(const char *mode)
{
    return finish(mode);
}
