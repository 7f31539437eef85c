/*
 * gp_config.c - see gp_config.h. Variables are read with secure_getenv: in a program that runs
 * with privileges its user does not have (setuid, setgid, file capabilities: the library
 * preloaded system-wide, /etc/ld.so.preload or a container's base image, is in those too), the
 * environment is the unprivileged user's, and must not choose a library to load into the
 * program, a file for it to read or a priority above the user's cap.
 */
#include "gp_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_log.h"

const char *gp_config_get(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}

const char *gp_config_ignored(const char *name)
{
    const char *v = getenv(name);
    return v && *v && !secure_getenv(name) ? v : NULL;
}

bool gp_parse_uint(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    /* strtoull also takes leading space and a minus sign (negating modulo 2^64): digits only. */
    if (!(v[0] >= '0' && v[0] <= '9' && !errno && !*end && x >= min && x <= max))
        return false;
    *out = x;
    return true;
}

uint64_t gp_config_uint(const char *name, uint64_t min, uint64_t max, uint64_t def,
                        const char *unit)
{
    const char *v = gp_config_get(name);
    if (!v)
        return def;
    uint64_t x;
    if (gp_parse_uint(v, min, max, &x))
        return x;
    /* A default below the range marks a variable that has none (the library then decides). */
    char using[48] = "leaving it unset";
    if (def >= min)
        snprintf(using, sizeof using, "using %llu", (unsigned long long)def);
    gp_log(GP_LOG_WARN, "%s='%s' is not a whole number of %s from %llu to %llu; %s", name, v, unit,
           (unsigned long long)min, (unsigned long long)max, using);
    return def;
}

int gp_parse_choice(const char *v, const char *const *choices)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(v, choices[i]) == 0)
            return i;
    return -EINVAL;
}

int gp_config_choice(const char *name, const char *const *choices, int def)
{
    const char *v = gp_config_get(name);
    if (!v)
        return def;
    int i = gp_parse_choice(v, choices);
    if (i >= 0)
        return i;
    char accepted[256] = "";
    for (i = 0; choices[i]; i++) {
        size_t used = strlen(accepted);
        snprintf(accepted + used, sizeof accepted - used, "%s%s", i ? ", " : "", choices[i]);
    }
    gp_log(GP_LOG_WARN, "%s='%s' is not one of %s; using %s", name, v, accepted, choices[def]);
    return def;
}
