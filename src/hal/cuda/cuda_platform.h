/*
 * cuda_platform.h - CUDA's implementation of the platform contract (src/shim/core/platform.h).
 */
#ifndef GPUPRIO_CUDA_PLATFORM_H
#define GPUPRIO_CUDA_PLATFORM_H

#include "platform.h"

extern const struct gp_platform cudahal_platform;

#endif /* GPUPRIO_CUDA_PLATFORM_H */
