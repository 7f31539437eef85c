/*
 * calls.h - what the real-runtime stage (scripts/test-rocm.sh) runs in a process linked against
 * the real HIP runtime, directly (real_hip.c) or from a framework library inside a wheel-like
 * directory (wheel_framework.c, wheel_main.c).
 */
#ifndef GPUPRIO_ROCM_CALLS_H
#define GPUPRIO_ROCM_CALLS_H

/* Calls HIP entry points of every version node the headers in use declare, printing each one's
 * result; returns the number of calls made. */
int show_calls(void);

/* Ends the process the way MODE names: "return" returns 3, for main to return; "exit" calls
 * exit(5); "thread" calls exit(9) from a second thread while this one keeps calling HIP;
 * "signal" raises SIGTERM. Returns -1 for an unknown mode, after saying so. */
int finish(const char *mode);

#endif
