/*
 * creation.c - what a stream being created should be created as, the same rule on every
 * platform.
 *
 * gpuprio gives a stream its priority from its own sources (GPUPRIO_STREAM_PRIORITIES by creation
 * order, the creating thread's, the process's, `gpuprio set`), which the hardware should know
 * too: a stream the application created without choosing a priority is created with the runtime's
 * stream priority that matches it, so that the device itself prefers it where it can (CUDA at
 * block granularity inside a process and across MPS clients; AMD's command processor across
 * processes too). The priority is worked out before the creator is forwarded, and its place in
 * GPUPRIO_STREAM_PRIORITIES is taken then (sched_stream_creating), so that the queue registered
 * after the call gets the same priority whatever other threads create meanwhile. The mapping is
 * one fixed function of the priority and the device's range (gp_priority_to_stream_priority:
 * one stream priority per named level, high -1, critical -2, clamped into the range), never of
 * what else runs: a stream keeps its priority for life, so a mapping by rank among the
 * priorities present would give two processes of one priority different levels once others
 * came and went. Normal keeps the runtime's default.
 */
#include "core.h"
#include "gp_options.h"
#include "gp_priority.h"
#include "gpuprio.h"
#include "scheduler.h"

_Thread_local struct core_creation core_creating;

void core_creation_begin(void)
{
    core_creating.has_priority = sched_stream_creating(&core_creating.priority) == 0;
    core_creating.adjusted = false;
    core_creating.cu_reserved = false;
}

void core_creation_end(bool ok)
{
    if (!ok)
        sched_stream_not_created();
    core_creating.has_priority = false;
}

int core_creation_priority(void)
{
    return core_creating.has_priority ? core_creating.priority : GPUPRIO_PRIORITY_NORMAL;
}

bool core_hw_priority(int *out)
{
    int p = core_creation_priority(), least, greatest;
    /* GPUPRIO_HW_PRIORITY's first word is "on" (gp_options.def). */
    if (gp_opt_choice(GP_OPT_HW_PRIORITY) != 0 || p == GPUPRIO_PRIORITY_NORMAL ||
        !core_shim.platform->priority_range ||
        core_shim.platform->priority_range(&least, &greatest) != 0)
        return false;
    *out = gp_priority_to_stream_priority(p, least, greatest);
    core_creating.adjusted = true;
    return true;
}
