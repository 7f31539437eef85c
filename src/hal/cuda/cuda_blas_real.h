/*
 * cuda_blas_real.h - where a call to a BLAS entry point that libgpuprio-cuda.so exports
 * (cublasLtMatmul, cublasGemmEx, ...) goes: for each call site (its return address), the
 * function that site's own object and its dependencies define, as the loader would bind it
 * without gpuprio (so a library linking another version of the BLAS, or holding a copy of its
 * own, reaches its own); else the next definition after the shim in the global scope; else that
 * of the first loaded copy of the library found by file name (PyTorch's, which Python loads
 * RTLD_LOCAL). Never the shim's own export.
 */
#ifndef GPUPRIO_CUDA_BLAS_REAL_H
#define GPUPRIO_CUDA_BLAS_REAL_H

#include <stdatomic.h>
#include <stdbool.h>

#define CUDAHAL_BLAS_SITES 64

/* One exported entry point and the call sites seen so far (static storage, zero-initialised
 * but for the three names). */
struct cudahal_blas_entry {
    const char *name;    /* the function: "cublasGemmEx" */
    const char *stem;    /* its library's file name stem: "libcublas" (gp_bind_is_copy) */
    const char *library; /* what a user reads: "cuBLAS" */
    struct {
        _Atomic(const void *) site;
        _Atomic(void *) fn;
    } sites[CUDAHAL_BLAS_SITES];
    atomic_bool said; /* the warning of a call with no library loaded */
};

/* The function a call from site reaches without gpuprio, or NULL (said once: the caller then
 * answers CUBLAS_STATUS_NOT_INITIALIZED). Lock-free; a site found is remembered, one that finds
 * nothing is not (so that a library loaded later is found). */
void *cudahal_blas_real(struct cudahal_blas_entry *e, const void *site);

/* name of a loaded library: next after the shim in the global scope, else in the first loaded
 * copy of stem's library; NULL when none is loaded. */
void *cudahal_blas_next(const char *name, const char *stem);

/* name as the library that holds fn (and its dependencies) defines it, never the shim's; NULL
 * when it has none. */
void *cudahal_blas_sym_beside(const void *fn, const char *name);

#endif /* GPUPRIO_CUDA_BLAS_REAL_H */
