/*
 * cuda_must.h - MUST, for the CUDA test programs: a driver call the program depends on. On
 * failure it says so on stdout (where the tests compare what the application observes) and exits
 * 1, so a broken setup reads as such, never as a difference in behaviour.
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

#endif /* GPUPRIO_TEST_CUDA_MUST_H */
