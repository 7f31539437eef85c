/*
 * cuda_device.h - device facts gpuprio needs from the CUDA driver.
 */
#ifndef GPUPRIO_CUDA_DEVICE_H
#define GPUPRIO_CUDA_DEVICE_H

#include <stddef.h>

/* Device's PCI bus id into buf: 0, or negative when the driver cannot say. */
int cudahal_device_key(int device, char *buf, size_t size);

#endif /* GPUPRIO_CUDA_DEVICE_H */
