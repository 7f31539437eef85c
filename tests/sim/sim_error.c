/*
 * sim_error.c - the thread's error state, with the rules of ROCm 6.
 *
 * Every API call's result becomes the thread's "last command error". A result other than
 * hipSuccess and hipErrorNotReady also becomes the sticky "last error", which hipGetLastError
 * returns and resets, and hipPeekAtLastError returns. hipExtGetLastError returns (and resets)
 * the last command error, whatever it was. These are what the shim must leave untouched.
 */
#include "sim_internal.h"

static _Thread_local hipError_t last_error = hipSuccess;
static _Thread_local hipError_t last_command_error = hipSuccess;

hipError_t sim_ret(hipError_t err)
{
    last_command_error = err;
    if (err != hipSuccess && err != hipErrorNotReady)
        last_error = err;
    else if (sim.cfg.fault == SIM_FAULT_LAST_ERROR_NOT_STICKY)
        last_error = err;
    return err;
}

hipError_t hipGetLastError(void)
{
    hipError_t e = last_error;
    last_error = hipSuccess;
    last_command_error = hipSuccess;
    return e;
}

hipError_t hipPeekAtLastError(void)
{
    hipError_t e = last_error;
    last_command_error = hipSuccess;
    return e;
}

hipError_t hipExtGetLastError(void)
{
    hipError_t e = last_command_error;
    last_command_error = hipSuccess;
    return e;
}

const char *hipGetErrorName(hipError_t err)
{
    switch ((int)err) { /* int: the enum has placeholder members such as hipErrorTbd */
#define X(name)                                                                                    \
    case name:                                                                                     \
        return #name;
#include "sim_errors.def"
#undef X
    }
    return "hipErrorUnknown";
}

const char *hipGetErrorString(hipError_t err)
{
    /* ROCm's strings are prose; the name is unambiguous and enough for a test double. */
    return hipGetErrorName(err);
}
