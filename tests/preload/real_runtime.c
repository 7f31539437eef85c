/*
 * real_runtime.c - a program linked against the real HIP runtime installed with the headers in use
 * (REAL_HIP_SONAME: Debian 12's libamdhip64.so.5, ROCm 5.2.3, or a newer .so.6 or .so.7).
 *
 * Without a GPU the runtime answers hipGetDeviceCount with hipErrorNoDevice (100), and later
 * calls with hipErrorInvalidDevice (101, 5.2.3) or hipErrorNoDevice (6.4, 7.2). It prints which
 * runtime it was linked against and its version first. The test runs this program with and without
 * the shim preloaded and requires identical output and exit status: the shim binds to the real
 * runtime, forwards every call, and leaves the error state alone. Exits 3, so that a shim that
 * turned the exit status into 0 (or 139) is caught too.
 */
#include <stdio.h>

#include "hip_compat.h"

#define SHOW(call) printf("%-40s -> %d\n", #call, (int)(call))

int main(void)
{
    int count = -1;
    hipStream_t stream = NULL;
    hipEvent_t event = NULL;
    int version = -1;
    hipError_t version_status = hipRuntimeGetVersion(&version);
    printf("%s: hipRuntimeGetVersion -> %d, %d\n", REAL_HIP_SONAME, (int)version_status, version);
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
