/*
 * gp_log.c - see gp_log.h. The level is read once at load (constructors only read
 * configuration); a bad value is reported once and the default kept.
 */
#include "gp_log.h"

#include "gp_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum gp_log_level log_level = GP_LOG_WARN;

static const char *const level_names[] = {"error", "warn", "info", "debug", NULL};

void gp_log_configure(void)
{
    log_level = (enum gp_log_level)gp_config_choice("GPUPRIO_LOG", level_names, GP_LOG_WARN);
}

bool gp_log_on(enum gp_log_level level)
{
    return level <= log_level;
}

void gp_log(enum gp_log_level level, const char *fmt, ...)
{
    if (level > log_level)
        return;
    int saved = errno;
    char line[1024];
    int n = snprintf(line, sizeof line, "gpuprio: %s: ", level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof line)
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    /* One line each, whatever a quoted value holds. */
    for (int i = 0; i < n; i++)
        if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
            line[i] = '?';
    line[n++] = '\n';
    /* One write, so lines of concurrent threads and processes stay whole. */
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        errno = saved;
    errno = saved;
}
