/*
 * gp_priority.c - see gp_priority.h.
 */
#include "gp_priority.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpuprio.h"

static const struct {
    const char *name;
    int value;
} levels[] = {
    {"idle", GPUPRIO_PRIORITY_IDLE},         {"low", GPUPRIO_PRIORITY_LOW},
    {"normal", GPUPRIO_PRIORITY_NORMAL},     {"high", GPUPRIO_PRIORITY_HIGH},
    {"critical", GPUPRIO_PRIORITY_CRITICAL},
};

int gp_priority_valid(int p)
{
    return p >= GPUPRIO_PRIORITY_MIN && p <= GPUPRIO_PRIORITY_MAX;
}

/* Parses text[0..len). */
static int parse_n(const char *text, size_t len, int *out)
{
    while (len && (*text == ' ' || *text == '\t'))
        text++, len--;
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
        len--;
    if (!len || len > 15)
        return -EINVAL;
    char buf[16];
    memcpy(buf, text, len);
    buf[len] = '\0';
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcasecmp(buf, levels[i].name) == 0) {
            *out = levels[i].value;
            return 0;
        }
    char *end;
    if (!(buf[0] >= '0' && buf[0] <= '9') && buf[0] != '-' && buf[0] != '+')
        return -EINVAL; /* strtol would skip other white space */
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || *end || end == buf || v < GPUPRIO_PRIORITY_MIN || v > GPUPRIO_PRIORITY_MAX)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

int gp_priority_parse(const char *text, int *out)
{
    return text ? parse_n(text, strlen(text), out) : -EINVAL;
}

int gp_priority_parse_list(const char *text, int *out, int max)
{
    int n = 0;
    for (const char *p = text;; n++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (n == max || parse_n(p, len, &out[n]) < 0)
            return -EINVAL;
        if (!comma)
            return n + 1;
        p = comma + 1;
    }
}

int gp_priority_from_stream_priority(int stream_priority)
{
    long p = -(long)stream_priority * GPUPRIO_PRIORITY_HIGH;
    return p < GPUPRIO_PRIORITY_MIN   ? GPUPRIO_PRIORITY_MIN
           : p > GPUPRIO_PRIORITY_MAX ? GPUPRIO_PRIORITY_MAX
                                      : (int)p;
}

int gp_priority_to_stream_priority(int p, int least, int greatest)
{
    int step = GPUPRIO_PRIORITY_HIGH,
        s = p >= 0 ? -((p + step / 2) / step) : (-p + step / 2) / step;
    return s > least ? least : s < greatest ? greatest : s;
}
