/*
 * top_format.c - prints what `gpuprio top` read from the boards: the table a person reads, and
 * the JSON document a script reads (docs/cli.md lists its fields).
 *
 * Every string in the JSON output comes from a shared file that any process of the user can
 * write (a command name, a device key), so each is escaped completely: quotes, backslashes,
 * control characters, and bytes that are not valid UTF-8 (as \u00XX of the byte, so the output
 * is always valid JSON).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "tool.h"

const char *gp_row_state(const struct gp_queue_row *r)
{
    return r->active ? "active" : "idle";
}

const char *gp_row_gate(const struct gp_queue_row *r)
{
    return (r->gate & XQ_GATE_SUSPENDED)   ? "suspended"
           : (r->gate & XQ_GATE_THROTTLED) ? "throttled"
           : (r->gate & XQ_GATE_TRACKED)   ? "tracked"
                                           : "none";
}

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] < 0x80             ? 1
               : (s[0] & 0xe0) == 0xc0 ? 2
               : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
    if (n == 2 && s[0] < 0xc2)
        return 0; /* overlong */
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

static void json_string(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    putchar('"');
    while (*s) {
        size_t n = utf8_len(s);
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", stdout);
        else if (*s == '\t')
            fputs("\\t", stdout);
        else if (*s < 0x20 || *s == 0x7f || n == 0)
            printf("\\u%04x", *s); /* an invalid byte becomes the character of that value */
        else {
            fwrite(s, 1, n, stdout);
            s += n;
            continue;
        }
        s++;
    }
    putchar('"');
}

void gp_print_json(const struct gp_sample *s)
{
    fputs("[", stdout);
    for (size_t i = 0; i < s->n; i++) {
        const struct gp_queue_row *r = &s->rows[i];
        fputs(i ? ",\n  {" : "\n  {", stdout);
        fputs("\"device\": ", stdout);
        json_string(r->key);
        fputs(", \"board\": ", stdout);
        json_string(r->board);
        printf(", \"pid\": %" PRIu32 ", \"command\": ", r->pid);
        json_string(r->comm);
        printf(", \"stream\": \"0x%" PRIx64 "\", \"thread\": %" PRIu64 ", \"device_index\": %d"
               ", \"priority\": %d, \"state\": \"%s\", \"gate\": \"%s\", \"in_flight\": %u"
               ", \"submitted\": %" PRIu64 ", \"completed\": %" PRIu64,
               r->stream, r->thread, (int)r->device, (int)r->priority, gp_row_state(r),
               gp_row_gate(r), (unsigned)XQ_GATE_IN_FLIGHT(r->gate), r->submitted, r->completed);
        if (r->submitted_per_s >= 0)
            printf(", \"submitted_per_s\": %.1f", r->submitted_per_s);
        else
            fputs(", \"submitted_per_s\": null", stdout);
        printf(", \"held_ns\": %" PRIu64 ", \"suspensions\": %" PRIu64 "}", r->held_ns,
               r->suspensions);
    }
    fputs(s->n ? "\n]\n" : "]\n", stdout);
}

/* A duration for the table: "0", "850us", "12.3ms", "4.56s", "12m03s". */
static void duration(char *buf, size_t size, uint64_t ns)
{
    if (ns == 0)
        snprintf(buf, size, "0");
    else if (ns < 1000000)
        snprintf(buf, size, "%" PRIu64 "us", ns / 1000);
    else if (ns < 1000000000)
        snprintf(buf, size, "%.1fms", (double)ns / 1e6);
    else if (ns < UINT64_C(60000000000))
        snprintf(buf, size, "%.2fs", (double)ns / 1e9);
    else
        snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", ns / UINT64_C(60000000000),
                 ns / 1000000000 % 60);
}

/* A name for the table: control characters shown as '?'. */
static void printable(char *out, size_t size, const char *in)
{
    size_t i = 0;
    for (; in[i] && i < size - 1; i++)
        out[i] = (unsigned char)in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
    out[i] = '\0';
}

void gp_print_table(const struct gp_sample *s, size_t max_rows)
{
    printf("%-16s %8s %-15s %-24s %5s %-6s %-9s %5s %9s %9s\n", "DEVICE", "PID", "COMMAND", "QUEUE",
           "PRIO", "STATE", "GATE", "INFL", "SUBMIT/S", "HELD");
    for (size_t i = 0; i < s->n && (!max_rows || i < max_rows); i++) {
        const struct gp_queue_row *r = &s->rows[i];
        char key[17], comm[16], queue[48], rate[24], held[24];
        printable(key, sizeof key, r->key);
        printable(comm, sizeof comm, r->comm);
        if (r->thread)
            snprintf(queue, sizeof queue, "0x%" PRIx64 "/%" PRIu64, r->stream, r->thread);
        else
            snprintf(queue, sizeof queue, "0x%" PRIx64, r->stream);
        if (r->submitted_per_s >= 0)
            snprintf(rate, sizeof rate, "%.0f", r->submitted_per_s);
        else
            snprintf(rate, sizeof rate, "-");
        duration(held, sizeof held, r->held_ns);
        printf("%-16s %8" PRIu32 " %-15s %-24s %5d %-6s %-9s %5u %9s %9s\n", key, r->pid, comm,
               queue, (int)r->priority, gp_row_state(r), gp_row_gate(r),
               (unsigned)XQ_GATE_IN_FLIGHT(r->gate), rate, held);
    }
    if (max_rows && s->n > max_rows)
        printf("... %zu more\n", s->n - max_rows);
}
