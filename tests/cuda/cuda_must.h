/*
 * cuda_must.h - MUST, for the CUDA test programs: a driver call the program depends on. On
 * failure it says so on stdout (where the tests compare what the application observes) and exits
 * 1, so a broken setup reads as such, never as a difference in behaviour. And one_thread_node,
 * a kernel node as the fake driver runs them.
 */
#ifndef GPUPRIO_TEST_CUDA_MUST_H
#define GPUPRIO_TEST_CUDA_MUST_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#define MUST(call)                                                                                 \
    do {                                                                                           \
        CUresult must_r = (call);                                                                  \
        if (must_r != CUDA_SUCCESS) {                                                              \
            printf("FATAL: %s -> %d\n", #call, (int)must_r);                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* A kernel node of one thread running f, the fake driver's kind of kernel (a host function as
 * the CUfunction), with params. */
static inline CUDA_KERNEL_NODE_PARAMS one_thread_node(void (*f)(void **), void **params)
{
    return (CUDA_KERNEL_NODE_PARAMS){.func = (CUfunction)(void *)f,
                                     .gridDimX = 1,
                                     .gridDimY = 1,
                                     .gridDimZ = 1,
                                     .blockDimX = 1,
                                     .blockDimY = 1,
                                     .blockDimZ = 1,
                                     .kernelParams = params};
}

#endif /* GPUPRIO_TEST_CUDA_MUST_H */
