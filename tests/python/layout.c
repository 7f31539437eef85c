/*
 * layout.c - prints struct gpuprio_queue_stats as the C compiler lays it out: "sizeof N", then
 * "FIELD OFFSET SIZE" per field. python.layout compares it with the package's ctypes mirror,
 * which gpuprio_stats and gpuprio_stream_stats fill byte for byte: a field added, moved or
 * resized in gpuprio.h without the same change in python/gpuprio fails there, not in a user's
 * numbers.
 */
#include <stddef.h>
#include <stdio.h>

#include "gpuprio.h"

#define FIELD(f)                                                                                   \
    printf("%s %zu %zu\n", #f, offsetof(struct gpuprio_queue_stats, f),                            \
           sizeof(((struct gpuprio_queue_stats *)0)->f))

int main(void)
{
    printf("sizeof %zu\n", sizeof(struct gpuprio_queue_stats));
    FIELD(stream);
    FIELD(thread);
    FIELD(device);
    FIELD(flags);
    FIELD(stream_priority);
    FIELD(priority);
    FIELD(suspended);
    FIELD(in_flight);
    FIELD(submitted);
    FIELD(completed);
    FIELD(held_ns);
    FIELD(suspensions);
    return 0;
}
