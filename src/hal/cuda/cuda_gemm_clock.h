/*
 * cuda_gemm_clock.h - the GPU time of whole GEMM calls, learned per kind of call (the plan key:
 * dimensions, types, transposes and the algorithm's bytes) from a pair of the driver's events
 * recorded around a call, as src/preempt/gemm_clock.h says: its first, then every
 * GEMM_CLOCK_RETIME-th, whole or sliced, the shortest time seen kept.
 */
#ifndef GPUPRIO_CUDA_GEMM_CLOCK_H
#define GPUPRIO_CUDA_GEMM_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_cublaslt.h"
#include "gemm_clock.h"

struct cudahal_gemm_key {
    uint64_t m, n, k;
    uint32_t types[4]; /* A, B, C, D */
    int32_t compute, transa, transb;
    uint32_t zero; /* no padding: keys are hashed and compared byte by byte */
    cudahal_lt_algo algo;
    /* The clock's own (callers leave it 0): the calling thread's current context, where a timed
     * call's events are recorded, so that a call reads only its own context's events and those
     * of a context destroyed are dropped with it (cudahal_gemm_clock_forget). */
    uint64_t context;
};

/* The time learned for key in ns (0: none yet), after reading its events if they are done.
 * *time_this: the whole call about to be made should be timed (cudahal_gemm_clock_start). */
uint64_t cudahal_gemm_clock_learned(const struct cudahal_gemm_key *key, bool *time_this);

/* Around the call that cudahal_gemm_clock_learned asked to time, on its stream: start
 * before forwarding it (a token, or NULL when no event could be recorded), end after, with
 * whether the call was accepted. Leaves the thread's current context as it found it. */
void *cudahal_gemm_clock_start(const struct cudahal_gemm_key *key, struct CUstream_st *stream);
void cudahal_gemm_clock_end(void *token, struct CUstream_st *stream, bool ok);

/* Every learned time forgotten and the table's lock made anew: in a forked child, where a thread
 * of the parent may have held it (the timings in flight are the parent's events: left alone). */
void cudahal_gemm_clock_forget_all(void);

/* The timings in flight of context, which a reset, destroy or last release destroyed with its
 * events: dropped without a call into the driver. */
void cudahal_gemm_clock_forget(uintptr_t context);

#endif /* GPUPRIO_CUDA_GEMM_CLOCK_H */
