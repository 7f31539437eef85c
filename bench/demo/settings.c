/*
 * settings.c - gpuprio-demo's reading of settings that come from the environment: the simulator's
 * (HIPSIM_COMPUTE_SLOTS, HIPSIM_DEVICES) as the rows' processes will see them.
 *
 * Its own file because both sides use it, the parent (rows.c: which simulator segments a
 * cross-process row leaves to remove) and the child (workload.c: the slots its result reports),
 * and neither should depend on the command line's file for it.
 */
#include "demo.h"

#include <stdlib.h>

unsigned demo_setting_uint(const char *value, unsigned dflt)
{
    if (!value || !*value)
        return dflt;
    char *end = NULL;
    unsigned long v = strtoul(value, &end, 10);
    return (end != value && *end == '\0' && v > 0 && v < 65536) ? (unsigned)v : dflt;
}
