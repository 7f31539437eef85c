/*
 * gp_log.h - gpuprio's diagnostics on stderr, one line each, prefixed "gpuprio: ".
 *
 * GPUPRIO_LOG selects the level (error, warn, info, debug; default warn). The library's messages
 * are how a user learns that something is misconfigured, so each names the problem and what is
 * accepted. Logging never calls the GPU runtime and never changes errno.
 */
#ifndef GPUPRIO_LOG_H
#define GPUPRIO_LOG_H

#include <stdbool.h>

enum gp_log_level { GP_LOG_ERROR, GP_LOG_WARN, GP_LOG_INFO, GP_LOG_DEBUG };

void gp_log(enum gp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether messages of this level are written (to skip gathering what only they report). */
bool gp_log_on(enum gp_log_level level);
/* Reads GPUPRIO_LOG; called once from the library constructor. */
void gp_log_configure(void);

#endif /* GPUPRIO_LOG_H */
