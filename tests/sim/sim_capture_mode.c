/*
 * sim_capture_mode.c - each thread's stream capture mode (hipThreadExchangeStreamCaptureMode),
 * and the rule for the calls ROCm/clr deems unsafe while a stream captures (docs/simulator.md,
 * "Capture modes and unsafe calls").
 *
 * clr keeps a mode per thread, hipStreamCaptureModeGlobal until the thread exchanges it, and
 * checks it at the top of the allocation and registration calls (hipMalloc, hipHostRegister...,
 * CHECK_STREAM_CAPTURE_SUPPORTED in hip_internal.hpp): such a call from a thread in global or
 * thread-local mode, while a capture that rule names is in progress, fails with
 * hipErrorStreamCaptureUnsupported and invalidates those captures, so that the application's
 * hipStreamEndCapture then fails with hipErrorStreamCaptureInvalidated. A library that makes such
 * calls on a thread of its own, as gpuprio does when it builds a graph's gated copy, must put that
 * thread in relaxed mode first, or it breaks captures the application makes meanwhile. Which
 * captures a call breaks is sim_graph.c's (sim_capture_unsafe): it knows them.
 */
#include "sim_internal.h"

#include <stdatomic.h>

static _Thread_local hipStreamCaptureMode thread_mode = hipStreamCaptureModeGlobal;

hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode)
{
    sim_init();
    if (!mode || (*mode != hipStreamCaptureModeGlobal && *mode != hipStreamCaptureModeThreadLocal &&
                  *mode != hipStreamCaptureModeRelaxed))
        return sim_ret(hipErrorInvalidValue);
    hipStreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return sim_ret(hipSuccess);
}

/* hipsimBeforeUnsafeCall's hook, taken by the first unsafe call after it is set. */
static struct before_unsafe {
    void (*fn)(void *);
    void *arg;
} * _Atomic before_unsafe;

void hipsimBeforeUnsafeCall(void (*fn)(void *), void *arg)
{
    static struct before_unsafe hook;
    hook = (struct before_unsafe){fn, arg};
    atomic_store(&before_unsafe, fn ? &hook : NULL);
}

hipStreamCaptureMode sim_thread_capture_mode(void)
{
    return sim.cfg.fault == SIM_FAULT_CAPTURE_MODE_IGNORED ? hipStreamCaptureModeRelaxed
                                                           : thread_mode;
}

hipError_t sim_unsafe_during_capture(void)
{
    /* Without the lock: the hook has another thread begin a capture, which takes it. */
    struct before_unsafe *hook = atomic_exchange(&before_unsafe, NULL);
    if (hook)
        hook->fn(hook->arg);
    sim_init();
    hipStreamCaptureMode mode = sim_thread_capture_mode();
    sim_lock();
    bool broke = sim_capture_unsafe(mode);
    sim_unlock();
    return broke ? hipErrorStreamCaptureUnsupported : hipSuccess;
}
