/*
 * cuda_device.c - a device's identity that every process agrees on, for the board (board.h):
 * its PCI bus id. Device ordinals differ between processes (CUDA_VISIBLE_DEVICES renumbers
 * them); the bus id does not.
 *
 * Unlike HIP, the driver API keeps no per-thread error state, so the driver is asked on the
 * calling thread; a driver that is not initialized yet simply cannot say (-ENOENT).
 */
#include "cuda_device.h"

#include <errno.h>

#include "cuda_bind.h"
#include "cuda_compat.h"

int cudahal_device_key(int device, char *buf, size_t size)
{
    CUresult (*bus_id)(char *, int, CUdevice);
    *(void **)&bus_id = cudahal_sym("cuDeviceGetPCIBusId");
    if (!bus_id || size < 2 || size > 4096)
        return -ENOENT;
    buf[0] = '\0';
    if (bus_id(buf, (int)size, (CUdevice)device) != CUDA_SUCCESS || !buf[0])
        return -ENOENT;
    buf[size - 1] = '\0';
    return 0;
}
