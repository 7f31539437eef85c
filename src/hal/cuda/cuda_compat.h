/*
 * cuda_compat.h - cuda.h as gpuprio includes it: every exported driver symbol under its own name.
 *
 * cuda.h #defines the public names to the symbols an application links (cuMemcpyHtoDAsync to
 * cuMemcpyHtoDAsync_v2, cuLaunchKernel to cuLaunchKernel_ptsz under per-thread default stream),
 * so a plain include declares each function under one name only. With
 * __CUDA_API_VERSION_INTERNAL defined, as the driver's own build does, cuda.h drops those
 * macros at its end and declares the older names too (cuMemcpyHtoDAsync with 32-bit sizes,
 * cuStreamDestroy, cuGetProcAddress without its status argument...), and the _ptsz/_ptds forms
 * are declared by the expansion of the public names. A shim must export each of them, so the
 * shim, the HAL and the check of cuda_api.def all include cuda.h through this header.
 */
#ifndef GPUPRIO_CUDA_COMPAT_H
#define GPUPRIO_CUDA_COMPAT_H

#ifdef __cuda_cuda_h__
#error "include cuda_compat.h instead of cuda.h"
#endif
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#endif /* GPUPRIO_CUDA_COMPAT_H */
