/*
 * hip_gemm_clock.h - the GPU time of whole hipblasLtMatmul calls, learned per kind of call
 * (dimensions, types, transposes, the algorithm's bytes) from a pair of HIP events recorded
 * around a call: its first, then every GEMM_CLOCK_RETIME-th, whole or sliced (its slices
 * together), as src/preempt/gemm_clock.h says: the events are read without blocking at a later
 * call of the same kind, and the shortest time seen is kept.
 *
 * These calls run on the application's thread, before its own call is forwarded, and must leave
 * its error state as they found it (docs/design.md, "Transparency"): events are created and
 * recorded only on a stream of the thread's current device (where they succeed), and an event
 * is queried only while no error is pending (hipPeekAtLastError), the "not ready" it may answer
 * then cleared (hipGetLastError), as hip_gate.c does.
 */
#ifndef GPUPRIO_HIP_GEMM_CLOCK_H
#define GPUPRIO_HIP_GEMM_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_clock.h"
#include "hip_hipblaslt.h"

struct hiphal_gemm_key {
    uint64_t m, n, k;
    uint32_t types[4]; /* A, B, C, D */
    int32_t transa, transb;
    hiphal_lt_algo algo; /* 24 bytes: no padding, keys are hashed and compared byte by byte */
    /* The device of the call's queue (-1 where gpuprio has none for its stream): a call is timed
     * only where this is its stream's device, where the events are recorded, so that a call reads
     * only its own device's events, and those of a device reset are dropped with it
     * (hiphal_gemm_clock_forget). */
    int32_t device;
    uint32_t zero;
};

/* The time learned for key in ns (0: none yet), after reading its events if they are done.
 * *time_this: the call about to be made should be timed (hiphal_gemm_clock_start). */
uint64_t hiphal_gemm_clock_learned(const struct hiphal_gemm_key *key, bool *time_this);

/* Around the call that hiphal_gemm_clock_learned asked to time, on its stream: start before it
 * (a token, or NULL when no event could be recorded), end after, with whether it was accepted. */
void *hiphal_gemm_clock_start(const struct hiphal_gemm_key *key, struct ihipStream_t *stream);
void hiphal_gemm_clock_end(void *token, struct ihipStream_t *stream, bool ok);

/* Every learned time forgotten and the table's lock made anew: in a forked child, where a thread
 * of the parent may have held it. */
void hiphal_gemm_clock_forget_all(void);

/* The timings in flight on device, whose events hipDeviceReset destroyed: dropped without a call
 * into the runtime (their handles are dead, and may be handed out again). */
void hiphal_gemm_clock_forget(int device);

#endif /* GPUPRIO_HIP_GEMM_CLOCK_H */
