/*
 * metrics_format.c - writes what `gpuprio metrics` read from the boards in the Prometheus text
 * exposition format (version 0.0.4), for a scraper or node_exporter's textfile collector. The
 * families, their types and labels are listed in docs/cli.md; this file is the one place that
 * knows them.
 *
 * Design:
 * - Every family has its HELP and TYPE lines and all its samples together, written family by
 *   family (the format wants one block per name), from one table, so a family cannot be
 *   forgotten in one place and written in another. A family with no samples still has its two
 *   lines: scrapers accept that, and dashboards see the names exist.
 * - A queue's series is named by what a person recognises: device (the PCI bus id) and its index
 *   in the process, pid, command, user, stream (and thread for a per-thread queue), priority.
 *   Priority is a label as well as the value of gpuprio_queue_priority, as the issue asks, so a
 *   change of priority starts new series (the counters of the new series start at the queue's
 *   current totals, which Prometheus' rate() reads as a new series, not as a reset).
 * - Counters are the board's own totals, never reset by the tool: monotonic for a queue. Seconds
 *   are printed exactly from nanoseconds (seconds, a point, nine digits), never through a double.
 * - The scheduler's decision is a state set: gpuprio_queue_decision with a `decision` label, one
 *   series per decision, exactly one of them 1 (the Prometheus way to expose an enumeration).
 * - Command names and device keys come from a shared file that any process of the user writes,
 *   so label values are escaped completely: backslash, double quote and newline as the format
 *   says, and a byte that is not valid UTF-8 (a name cut in the middle of a character by the
 *   kernel's 15-byte limit, or garbage) becomes U+FFFD, since scrapers reject a whole exposition
 *   that is not UTF-8.
 * - Two rows with the same labels would be a duplicate series, for which node_exporter rejects
 *   the whole file: it happens only for a moment (a process's image after exec, before it
 *   reclaims the old image's slots), and the second row is left out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "board.h"
#include "tool.h"

/* A label value: \\, \" and \n escaped, invalid UTF-8 replaced. */
static void label_value(FILE *out, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        size_t n = gp_utf8_len(s);
        if (*s == '\\')
            fputs("\\\\", out);
        else if (*s == '"')
            fputs("\\\"", out);
        else if (*s == '\n')
            fputs("\\n", out);
        else if (n == 0)
            fputs("\xef\xbf\xbd", out); /* U+FFFD REPLACEMENT CHARACTER */
        else {
            fwrite(s, 1, n, out);
            s += n;
            continue;
        }
        s++;
    }
}

/* HELP text: only backslash and newline are escaped there. */
static void help_text(FILE *out, const char *text)
{
    for (const char *s = text; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", out);
        else if (*s == '\n')
            fputs("\\n", out);
        else
            putc(*s, out);
    }
}

static void family_head(FILE *out, const char *name, const char *type, const char *help)
{
    fprintf(out, "# HELP %s ", name);
    help_text(out, help);
    fprintf(out, "\n# TYPE %s %s\n", name, type);
}

/* The labels a process has on a device: those of its queues' series before stream. */
static void process_labels(FILE *out, const struct gp_slot_id *id, struct gp_users *u)
{
    fputs("{device=\"", out);
    label_value(out, id->key);
    fprintf(out, "\",device_index=\"%d\",pid=\"%" PRIu32 "\",command=\"", (int)id->device, id->pid);
    label_value(out, id->comm);
    fputs("\",user=\"", out);
    label_value(out, gp_user_name(u, id->uid));
    putc('"', out);
}

/* A queue's labels, without the closing brace (decision adds one). */
static void queue_labels(FILE *out, const struct gp_queue_row *r, struct gp_users *u)
{
    process_labels(out, &r->id, u);
    fprintf(out, ",stream=\"0x%" PRIx64 "\"", r->stream);
    if (r->thread)
        fprintf(out, ",thread=\"%" PRIu64 "\"", r->thread);
    fprintf(out, ",priority=\"%d\"", (int)r->priority);
}

static bool same_process_labels(const struct gp_slot_id *a, const struct gp_slot_id *b)
{
    return a->pid == b->pid && a->device == b->device && a->uid == b->uid &&
           strcmp(a->key, b->key) == 0 && strcmp(a->comm, b->comm) == 0;
}

/* Whether row i has the labels of an earlier row (a process's queue seen on two of its user's
 * boards): rows are sorted by their labels first (queues.c), so such a row follows one. */
static bool duplicate_row(const struct gp_sample *s, size_t i)
{
    const struct gp_queue_row *r = &s->rows[i], *p = &s->rows[i - (i > 0)];
    return i > 0 && strcmp(p->id.key, r->id.key) == 0 && p->priority == r->priority &&
           p->id.pid == r->id.pid && p->stream == r->stream && p->thread == r->thread &&
           same_process_labels(&p->id, &r->id);
}

/* The same for records, sorted by their labels first too. */
static bool duplicate_record(const struct gp_sample *s, size_t i)
{
    const struct gp_record_row *r = &s->records[i], *p = &s->records[i - (i > 0)];
    return i > 0 && same_process_labels(&p->id, &r->id);
}

enum queue_value {
    Q_PRIORITY,
    Q_ACTIVE,
    Q_GATED_ON_DEVICE,
    Q_IN_FLIGHT,
    Q_SUBMITTED,
    Q_COMPLETED,
    Q_SUSPENSIONS,
    Q_HELD_SECONDS,
    Q_LONGEST_SECONDS, /* only for queues where one is known */
};

struct queue_family {
    const char *name, *type, *help;
    enum queue_value value;
};

/* The decision's state set is written between active and gated_on_device (see below). */
static const struct queue_family queue_families[] = {
    {"gpuprio_queue_priority", "gauge",
     "The queue's priority: higher runs first (-1000 to 1000). Also its priority label.",
     Q_PRIORITY},
    {"gpuprio_queue_active", "gauge",
     "1 when the queue has work in flight, a thread waiting to submit, or finished work within "
     "the grace window; 0 when idle.",
     Q_ACTIVE},
    {"gpuprio_queue_gated_on_device", "gauge",
     "1 when the queue is held on the device by gates (Level 2), 0 when on the host (Level 1).",
     Q_GATED_ON_DEVICE},
    {"gpuprio_queue_in_flight_commands", "gauge",
     "Commands admitted to the queue and not yet seen finished.", Q_IN_FLIGHT},
    {"gpuprio_queue_submitted_commands_total", "counter",
     "Commands put on the queue's stream through gpuprio since it was created.", Q_SUBMITTED},
    {"gpuprio_queue_completed_commands_total", "counter",
     "Commands of the queue seen finished (followed only while the queue is scheduled).",
     Q_COMPLETED},
    {"gpuprio_queue_suspensions_total", "counter", "Times the scheduler suspended the queue.",
     Q_SUSPENSIONS},
    {"gpuprio_queue_held_seconds_total", "counter",
     "Time threads were held back before submitting to the queue.", Q_HELD_SECONDS},
    {"gpuprio_queue_longest_command_seconds", "gauge",
     "The longest GPU time of a command the queue ran recently (completed within its last 2 to 4 "
     "seconds of work), which a higher priority arriving while it runs waits for whole; no series "
     "until one is known.",
     Q_LONGEST_SECONDS},
};

static void queue_value(FILE *out, const struct gp_queue_row *r, enum queue_value v)
{
    switch (v) {
    case Q_PRIORITY:
        fprintf(out, "%d", (int)r->priority);
        break;
    case Q_ACTIVE:
        putc(r->active ? '1' : '0', out);
        break;
    case Q_GATED_ON_DEVICE:
        putc(gp_row_level(r) == 2 ? '1' : '0', out);
        break;
    case Q_IN_FLIGHT:
        fprintf(out, "%u", (unsigned)XQ_GATE_IN_FLIGHT(r->gate));
        break;
    case Q_SUBMITTED:
        fprintf(out, "%" PRIu64, r->submitted);
        break;
    case Q_COMPLETED:
        fprintf(out, "%" PRIu64, r->completed);
        break;
    case Q_SUSPENSIONS:
        fprintf(out, "%" PRIu64, r->suspensions);
        break;
    case Q_HELD_SECONDS:
        fprintf(out, "%" PRIu64 ".%09" PRIu64, r->held_ns / 1000000000u, r->held_ns % 1000000000u);
        break;
    case Q_LONGEST_SECONDS:
        fprintf(out, "%" PRIu32 ".%06" PRIu32, r->longest_us / 1000000u, r->longest_us % 1000000u);
        break;
    }
}

static void queue_family(FILE *out, const struct gp_sample *s, const struct queue_family *f,
                         struct gp_users *u)
{
    family_head(out, f->name, f->type, f->help);
    for (size_t i = 0; i < s->n; i++) {
        if (duplicate_row(s, i) || (f->value == Q_LONGEST_SECONDS && !s->rows[i].longest_us))
            continue;
        fputs(f->name, out);
        queue_labels(out, &s->rows[i], u);
        fputs("} ", out);
        queue_value(out, &s->rows[i], f->value);
        putc('\n', out);
    }
}

/* The decision as a state set: one series per decision gp_row_gate names, the current one 1. */
static void decision_family(FILE *out, const struct gp_sample *s, struct gp_users *u)
{
    static const char name[] = "gpuprio_queue_decision";
    static const char *const decisions[] = {"suspended", "throttled", "tracked", "none"};
    family_head(out, name, "gauge",
                "The scheduler's decision for the queue, one series per decision, the current one "
                "1: suspended (nothing admitted), throttled (a budget in flight), tracked "
                "(followed, not held), none (not scheduled).");
    for (size_t i = 0; i < s->n; i++) {
        if (duplicate_row(s, i))
            continue;
        const char *now = gp_row_gate(&s->rows[i]);
        for (size_t d = 0; d < sizeof decisions / sizeof decisions[0]; d++) {
            fputs(name, out);
            queue_labels(out, &s->rows[i], u);
            fprintf(out, ",decision=\"%s\"} %d\n", decisions[d], strcmp(now, decisions[d]) == 0);
        }
    }
}

#define HELP_REASON(name, label, what) label " (" what "); "

/* A process's long GEMMs on a device (its record's counts): sliced calls, their slices, and
 * calls left whole by reason, one series per reason. */
static void gemm_families(FILE *out, const struct gp_sample *s, struct gp_users *u)
{
    family_head(out, "gpuprio_process_gemm_sliced_total", "counter",
                "GEMM calls of the process on the device issued as slices of their output, each "
                "short enough for a higher priority to get the device between them.");
    for (size_t i = 0; i < s->nrec; i++) {
        if (duplicate_record(s, i))
            continue;
        fputs("gpuprio_process_gemm_sliced_total", out);
        process_labels(out, &s->records[i].id, u);
        fprintf(out, "} %" PRIu64 "\n", s->records[i].gemm_sliced);
    }
    family_head(out, "gpuprio_process_gemm_slices_total", "counter",
                "Slices the process's sliced GEMM calls on the device were issued as.");
    for (size_t i = 0; i < s->nrec; i++) {
        if (duplicate_record(s, i))
            continue;
        fputs("gpuprio_process_gemm_slices_total", out);
        process_labels(out, &s->records[i].id, u);
        fprintf(out, "} %" PRIu64 "\n", s->records[i].gemm_slices);
    }
    family_head(out, "gpuprio_process_gemm_whole_total", "counter",
                "GEMM calls of the process on the device left whole that a higher priority would "
                "wait for, by reason: " GP_RECORD_GEMM_WHOLE(HELP_REASON) "counted modulo 2^32.");
    for (size_t i = 0; i < s->nrec; i++) {
        if (duplicate_record(s, i))
            continue;
        for (int k = 0; k < GP_RECORD_GEMM_WHOLE_COUNT; k++) {
            fputs("gpuprio_process_gemm_whole_total", out);
            process_labels(out, &s->records[i].id, u);
            fprintf(out, ",reason=\"%s\"} %" PRIu64 "\n", gp_gemm_whole_labels[k],
                    s->records[i].gemm_whole[k]);
        }
    }
}

void gp_metrics_write(FILE *out, const struct gp_sample *s)
{
    struct gp_users u = {.n = 0};
    family_head(out, "gpuprio_boards", "gauge",
                "Boards read: one per user and device in the board directory.");
    fprintf(out, "gpuprio_boards %u\n", s->boards);
    for (size_t f = 0; f < sizeof queue_families / sizeof queue_families[0]; f++) {
        queue_family(out, s, &queue_families[f], &u);
        if (queue_families[f].value == Q_ACTIVE)
            decision_family(out, s, &u);
    }
    family_head(out, "gpuprio_process_unused_queues", "gauge",
                "Queues the process created on the device that never ran anything (nor were "
                "named): they hold no board slot and have no queue series.");
    for (size_t i = 0; i < s->nrec; i++) {
        if (duplicate_record(s, i))
            continue;
        fputs("gpuprio_process_unused_queues", out);
        process_labels(out, &s->records[i].id, &u);
        fprintf(out, "} %" PRIu32 "\n", s->records[i].unused_queues);
    }
    family_head(out, "gpuprio_process_unslotted_queues", "gauge",
                "Queues of the process on the device that joined scheduling when its board was "
                "full: scheduled within the process only, they hold no board slot and have no "
                "queue series.");
    for (size_t i = 0; i < s->nrec; i++) {
        if (duplicate_record(s, i))
            continue;
        fputs("gpuprio_process_unslotted_queues", out);
        process_labels(out, &s->records[i].id, &u);
        fprintf(out, "} %" PRIu32 "\n", s->records[i].unslotted_queues);
    }
    gemm_families(out, s, &u);
    gp_users_free(&u);
}
