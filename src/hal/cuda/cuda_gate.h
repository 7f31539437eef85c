/*
 * cuda_gate.h - CUDA's gates for Level 2 (the platform contract's gates_prepare and gate_wait).
 */
#ifndef GPUPRIO_CUDA_GATE_H
#define GPUPRIO_CUDA_GATE_H

#include <stddef.h>
#include <stdint.h>

int cudahal_gates_prepare(int device, void *base, size_t size, uintptr_t *device_base);
int cudahal_gate_wait(uintptr_t stream, uintptr_t device_addr, uint64_t value);

#endif /* GPUPRIO_CUDA_GATE_H */
