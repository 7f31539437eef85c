/*
 * gp_priority.h - gpuprio's priority scale: integers, higher runs first, with names for the common
 * levels (the public values are in gpuprio.h).
 */
#ifndef GPUPRIO_GP_PRIORITY_H
#define GPUPRIO_GP_PRIORITY_H

/* Parses a level name (idle, low, normal, high, critical; any case) or an integer within
 * GPUPRIO_PRIORITY_MIN..GPUPRIO_PRIORITY_MAX. 0 or -EINVAL. */
int gp_priority_parse(const char *text, int *out);
/* Parses a comma-separated list of levels into out[0..max); the count, or -EINVAL. */
int gp_priority_parse_list(const char *text, int *out, int max);
/* What gp_priority_parse accepts, for messages. */
#define GP_PRIORITY_ACCEPTED                                                                       \
    "idle, low, normal, high, critical, or an integer from -1000 to 1000 (higher runs first)"
/* A runtime's stream priority (HIP: -1 high, 0 normal, 1 low; lower is more urgent) on
 * gpuprio's scale: one named level per step. */
int gp_priority_from_stream_priority(int stream_priority);
/* Whether p is within the scale. */
int gp_priority_valid(int p);

#endif /* GPUPRIO_PRIORITY_H */
