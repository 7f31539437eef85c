/*
 * gp_log.c - see gp_log.h. It reads no configuration: the level is set by gp_options.c, which
 * reads GPUPRIO_LOG before any other variable so that the level applies to their warnings.
 */
#include "gp_log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum gp_log_level log_level = GP_LOG_WARN;

const char *const gp_log_level_names[] = {
#define GP_LOG_LEVEL_NAME(id, name) name,
    GP_LOG_LEVELS(GP_LOG_LEVEL_NAME)
#undef GP_LOG_LEVEL_NAME
        NULL,
};

void gp_log_set_level(enum gp_log_level level)
{
    log_level = level;
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
    int n = snprintf(line, sizeof line, "gpuprio: %s: ", gp_log_level_names[level]);
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
