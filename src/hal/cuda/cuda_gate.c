/*
 * cuda_gate.c - CUDA's gates (Level 2, src/preempt/devgate.h): the device waits with
 * cuStreamWaitValue64 (CU_STREAM_WAIT_VALUE_GEQ, which compares in the wrap-around sense) on a
 * word of the board that every process registered with cuMemHostRegister (portable, mapped), or
 * where the driver refuses the board's file (off tmpfs and hugetlbfs), on the process's private
 * copy of it (mirrored gates, devgate.h).
 *
 * The driver keeps no per-thread error state, so both run on the calling thread: preparing needs
 * a current context (the board is joined on a thread with a current device, and prepared again
 * after a teardown on the application's thread before its next command on the device), and a
 * gate is put on the application's thread right before its own call on the same stream.
 */
#include "cuda_gate.h"

#include <errno.h>

#include "cuda_bind.h"
#include "cuda_compat.h"

static CUresult (*wait64)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);

int cudahal_gates_prepare(int device, void *base, size_t size, uintptr_t *device_base)
{
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*host_register)(void *, size_t, unsigned int);
    CUresult (*device_pointer)(CUdeviceptr *, void *, unsigned int);
    *(void **)&attribute = cudahal_sym("cuDeviceGetAttribute");
    *(void **)&host_register = cudahal_sym("cuMemHostRegister_v2");
    if (!host_register)
        *(void **)&host_register = cudahal_sym("cuMemHostRegister");
    *(void **)&device_pointer = cudahal_sym("cuMemHostGetDevicePointer_v2");
    if (!device_pointer)
        *(void **)&device_pointer = cudahal_sym("cuMemHostGetDevicePointer");
    *(void **)&wait64 = cudahal_sym("cuStreamWaitValue64_v2");
    if (!wait64)
        *(void **)&wait64 = cudahal_sym("cuStreamWaitValue64");
    int memops = 0;
    if (!attribute || !host_register || !device_pointer || !wait64 ||
        attribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, (CUdevice)device) !=
            CUDA_SUCCESS ||
        !memops)
        return -ENOTSUP;
    /* Registered already: prepared again after a teardown that left the registration alone. */
    CUresult r =
        host_register(base, size, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        return -EIO;
    CUdeviceptr dev = 0;
    if (device_pointer(&dev, base, 0) != CUDA_SUCCESS || !dev)
        return -EIO;
    *device_base = (uintptr_t)dev;
    return 0;
}

int cudahal_gate_wait(uintptr_t stream, uintptr_t device_addr, uint64_t value)
{
    return wait64((CUstream)stream, (CUdeviceptr)device_addr, value, CU_STREAM_WAIT_VALUE_GEQ) ==
                   CUDA_SUCCESS
               ? 0
               : -EIO;
}
