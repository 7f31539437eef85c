/*
 * hip_platform.h - HIP's implementation of the platform contract (src/shim/core/platform.h).
 */
#ifndef GPUPRIO_HIP_PLATFORM_H
#define GPUPRIO_HIP_PLATFORM_H

#include "platform.h"

extern const struct gp_platform hiphal_platform;

#endif /* GPUPRIO_HIP_PLATFORM_H */
