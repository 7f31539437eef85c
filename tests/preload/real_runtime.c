/*
 * real_runtime.c - a program linked against Debian's real libamdhip64.so.5 (ROCm 5.2.3).
 *
 * Without a GPU that runtime answers hipGetDeviceCount with hipErrorNoDevice (100) and later
 * calls with hipErrorInvalidDevice (101). The test runs this program with and without the shim
 * preloaded and requires identical output and exit status: the shim binds to the real runtime,
 * forwards every call, and leaves the error state alone. Exits 3, so that a shim that turned the
 * exit status into 0 (or 139) is caught too.
 */
#include <stdio.h>

#include "hip_compat.h"

#define SHOW(call) printf("%-40s -> %d\n", #call, (int)(call))

int main(void)
{
    int count = -1;
    hipStream_t stream = NULL;
    hipEvent_t event = NULL;
    SHOW(hipGetDeviceCount(&count));
    printf("count = %d\n", count);
    SHOW(hipStreamCreate(&stream));
    SHOW(hipStreamCreateWithPriority(&stream, 0, -1));
    SHOW(hipEventCreate(&event));
    SHOW(hipEventRecord(event, NULL));
    SHOW(hipStreamSynchronize(NULL));
    SHOW(hipStreamQuery(NULL));
    SHOW(hipDeviceSynchronize());
    SHOW(hipPeekAtLastError());
    SHOW(hipGetLastError());
    SHOW(hipGetLastError());
    return 3;
}
