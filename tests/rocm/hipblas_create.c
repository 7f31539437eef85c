/*
 * hipblas_create.c - not part of any test run: the by-hand check of docs/hip-coverage.md
 * ("rocBLAS under the shim"). Creates and destroys a hipBLAS handle, which loads rocBLAS and
 * makes it call into the HIP runtime, and prints what each call returned; run without and with
 * the shim preloaded, under LD_DEBUG=bindings, it shows which of rocBLAS's HIP imports bind to
 * the shim and that hipblasCreate answers the same either way.
 */
#include <stdio.h>

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hipblas/hipblas.h>

int main(void)
{
    hipblasHandle_t handle = NULL;
    hipblasStatus_t created = hipblasCreate(&handle);
    printf("hipblasCreate -> %d (%s)\n", (int)created, hipblasStatusToString(created));
    if (created == HIPBLAS_STATUS_SUCCESS) {
        hipblasStatus_t destroyed = hipblasDestroy(handle);
        printf("hipblasDestroy -> %d\n", (int)destroyed);
    }
    printf("hipGetLastError -> %d\n", (int)hipGetLastError());
    return 0;
}
