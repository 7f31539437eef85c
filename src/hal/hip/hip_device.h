/*
 * hip_device.h - device facts gpuprio needs from the HIP runtime.
 */
#ifndef GPUPRIO_HIP_DEVICE_H
#define GPUPRIO_HIP_DEVICE_H

#include <stddef.h>

/* Device's PCI bus id into buf: 0, or negative when the runtime cannot say. */
int hiphal_device_key(int device, char *buf, size_t size);

#endif /* GPUPRIO_HIP_DEVICE_H */
