/*
 * gp_config.h - reading GPUPRIO_* variables: a bad value gives one message naming the variable
 * and what is accepted, and the default is used. Configuration never stops the application.
 */
#ifndef GPUPRIO_CONFIG_H
#define GPUPRIO_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

/* The value of name, or NULL when unset or empty. */
const char *gp_config_get(const char *name);
/* Whether v is a whole number within [min, max], in decimal digits only (no sign, no space);
 * stores it in *out when it is. What gp_config_uint accepts. */
bool gp_parse_uint(const char *v, uint64_t min, uint64_t max, uint64_t *out);
/* A whole number within [min, max] (unit names it in messages), else def. */
uint64_t gp_config_uint(const char *name, uint64_t min, uint64_t max, uint64_t def,
                        const char *unit);
/* The index of the value among choices (NULL-terminated), else def. */
int gp_config_choice(const char *name, const char *const *choices, int def);

#endif /* GPUPRIO_CONFIG_H */
