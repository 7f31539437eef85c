/*
 * hip_device.h - device facts gpuprio needs from the HIP runtime.
 */
#ifndef GPUPRIO_HIP_DEVICE_H
#define GPUPRIO_HIP_DEVICE_H

#include <stddef.h>

/* Device's PCI bus id into buf: 0, or negative when the runtime cannot say. */
int hiphal_device_key(int device, char *buf, size_t size);
/* Runs fn(arg) on a short-lived thread of gpuprio's own, all signals blocked, and waits for it:
 * calls there leave the calling thread's error state alone. 0, or negative when no thread could
 * be started. */
int hiphal_on_own_thread(void (*fn)(void *arg), void *arg);

#endif /* GPUPRIO_HIP_DEVICE_H */
