/*
 * cuda_mps.h - NVIDIA's Multi-Process Service as gpuprio sees it (cuda_mps.c, docs/mps.md).
 */
#ifndef GPUPRIO_CUDA_MPS_H
#define GPUPRIO_CUDA_MPS_H

#include "xqueue.h"

/* From the library constructor, before any runtime call: the SM share of a lower-priority
 * client (GPUPRIO_CU_RESERVE as a percentage). */
void cudahal_mps_before_runtime(void);
/* Whether the process is an MPS client on device, and what it may use (platform.h's mps). */
int cudahal_mps(int device, struct xq_mps *out);

#endif /* GPUPRIO_CUDA_MPS_H */
