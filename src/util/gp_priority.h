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
/* The inverse: the stream priority of gpuprio priority p, one step per named level (-p / 10,
 * rounded to the nearest), clamped into the runtime's range [greatest, least]. The same function
 * of p in every process, so that stream priorities compare across processes where the hardware
 * compares them (MPS: docs/mps.md), and a stream the application created with a priority maps
 * back to the gpuprio priority it was given. */
int gp_priority_to_stream_priority(int p, int least, int greatest);
/* Whether p is within the scale. */
int gp_priority_valid(int p);

#endif /* GPUPRIO_PRIORITY_H */
