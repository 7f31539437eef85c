/*
 * sim_check.h - the simulator's own test programs (lateness_test.c, shared_device_test.c): CHECK
 * a HIP call, which on an error names the call and the error and ends the process with status
 * 100, so that a broken setup is not mistaken for a failed check.
 */
#ifndef GPUPRIO_SIM_CHECK_H
#define GPUPRIO_SIM_CHECK_H

#include <stdio.h>
#include <unistd.h>

#include "hipsim.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        hipError_t err_ = (call);                                                                  \
        if (err_ != hipSuccess) {                                                                  \
            fprintf(stderr, "%s: %s\n", #call, hipGetErrorName(err_));                             \
            _exit(100);                                                                            \
        }                                                                                          \
    } while (0)

#endif /* GPUPRIO_SIM_CHECK_H */
