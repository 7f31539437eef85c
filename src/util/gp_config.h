/*
 * gp_config.h - reading one variable and parsing one value: a bad value gives one message
 * naming the variable and what is accepted, and the default is used. Configuration never stops
 * the application. Which variables there are, and their defaults and ranges, is the options
 * table's (gp_options.def), which reads them through these.
 */
#ifndef GPUPRIO_CONFIG_H
#define GPUPRIO_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

/* The value of name, or NULL when unset or empty, or when the program runs in secure-execution
 * mode (setuid, setgid, file capabilities: secure_getenv), where the environment is not its. */
const char *gp_config_get(const char *name);
/* The value of name that gp_config_get ignores because of secure-execution mode, or NULL. */
const char *gp_config_ignored(const char *name);
/* Whether v is a whole number within [min, max], in decimal digits only (no sign, no space);
 * stores it in *out when it is. What gp_config_uint accepts. */
bool gp_parse_uint(const char *v, uint64_t min, uint64_t max, uint64_t *out);
/* A whole number within [min, max] (unit names it in messages), else def (below min: the
 * variable has no default, and a bad value leaves it unset). */
uint64_t gp_config_uint(const char *name, uint64_t min, uint64_t max, uint64_t def,
                        const char *unit);
/* The index of v among choices (NULL-terminated, compared exactly), or -EINVAL. What
 * gp_config_choice accepts. */
int gp_parse_choice(const char *v, const char *const *choices);
/* The index of the value among choices (NULL-terminated), else def. */
int gp_config_choice(const char *name, const char *const *choices, int def);

#endif /* GPUPRIO_CONFIG_H */
