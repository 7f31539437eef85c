/*
 * upward.c - a file of the preempt layer that includes a header of the sched layer above it.
 * It must not compile: the test layers.upward_include builds it with the preempt layer's
 * include directories and passes only when the compiler reports the header missing, which is
 * how the build keeps every include pointing down (src/CMakeLists.txt).
 */
#include "xqueue.h"    /* its own layer: found */
#include "scheduler.h" /* the layer above: must not be found */
