/*
 * gp_log.c - see gp_log.h. It reads no configuration: the level is set by gp_options.c, which
 * reads GPUPRIO_LOG before any other variable so that the level applies to their warnings.
 */
#include "gp_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gp_lockrank.h"

static enum gp_log_level log_level = GP_LOG_WARN;

/* Lines held back until the process uses a GPU (gp_log_hold), in order; past the buffer, the
 * rest are dropped with a count. held_mu ranks last (LOG): a line may be logged with any other
 * lock held, and nothing but a write to stderr happens under it. */
#define HELD_MAX 8192
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool holding; /* only ever set by the constructor, then cleared */
static char held[HELD_MAX];
static size_t held_len;
static unsigned held_dropped;

void gp_log_hold(void)
{
    gp_mutex_lock(&held_mu, GP_RANK_LOG);
    atomic_store(&holding, true);
    gp_mutex_unlock(&held_mu, GP_RANK_LOG);
}

static void write_line(const char *line, size_t n)
{
    int saved = errno;
    /* One write, so lines of concurrent threads and processes stay whole. */
    if (write(STDERR_FILENO, line, n) < 0)
        errno = saved;
    errno = saved;
}

void gp_log_release(void)
{
    gp_mutex_lock(&held_mu, GP_RANK_LOG);
    for (size_t at = 0; at < held_len;) {
        size_t n = (size_t)((char *)memchr(held + at, '\n', held_len - at) - (held + at)) + 1;
        write_line(held + at, n);
        at += n;
    }
    if (held_dropped) {
        char line[96];
        int n = snprintf(line, sizeof line, "gpuprio: warn: %u more messages were dropped\n",
                         held_dropped);
        write_line(line, (size_t)n);
    }
    held_len = 0;
    held_dropped = 0;
    atomic_store(&holding, false);
    gp_mutex_unlock(&held_mu, GP_RANK_LOG);
}

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

void gp_log_printable(char *out, const char *in, size_t n)
{
    size_t i = 0;
    for (; i < n && in[i]; i++)
        out[i] = (unsigned char)in[i] >= 0x20 && (unsigned char)in[i] <= 0x7e ? in[i] : '?';
    out[i] = '\0';
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
    /* Once released, never held again: no lock (a child forked while another thread held it
     * could never log). */
    if (atomic_load(&holding)) {
        gp_mutex_lock(&held_mu, GP_RANK_LOG);
        if (!atomic_load(&holding)) {
            gp_mutex_unlock(&held_mu, GP_RANK_LOG);
            write_line(line, (size_t)n);
            errno = saved;
            return;
        }
        if (held_len + (size_t)n <= sizeof held) {
            memcpy(held + held_len, line, (size_t)n);
            held_len += (size_t)n;
        } else {
            held_dropped++;
        }
        gp_mutex_unlock(&held_mu, GP_RANK_LOG);
        errno = saved;
        return;
    }
    write_line(line, (size_t)n);
    errno = saved;
}
