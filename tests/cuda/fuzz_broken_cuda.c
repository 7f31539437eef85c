/*
 * fuzz_broken_cuda.c - a shim broken on purpose, to show that the CUDA fuzzer catches a broken
 * one (fuzz.cuda_catches_broken): preloaded in front of libgpuprio-cuda.so, it reports every
 * cuEventRecord as a success, as a wrapper that lost the driver's error would.
 */
#include <dlfcn.h>

#include "cuda_compat.h"

__attribute__((visibility("default"))) CUresult cuEventRecord(CUevent e, CUstream s)
{
    CUresult (*next)(CUevent, CUstream);
    *(void **)&next = dlsym(RTLD_NEXT, "cuEventRecord");
    if (next)
        next(e, s);
    return CUDA_SUCCESS;
}
