/*
 * result.c - gpuprio-demo's result line: what a row's process measured, as one line of text
 * from the child to the parent, and the sum of such lines over a cross-process row's processes.
 *
 * A line, not shared memory or a binary struct: the child is a separate program run (possibly by
 * hand, `--scenario ID`), its stdout is what the parent reads anyway, and a line can be read by a
 * person. "RESULT_TAG scenario=ID key=value ...": the numbers, then the text fields (no spaces;
 * "-" for empty). The keys are a table of offsets into row_result, so the printer, the parser
 * and the merge cannot disagree on the fields, and the parser can insist on all of them: a child
 * built from other sources fails the row instead of reading as zeros.
 *
 * The text fields are lists "WHO:value,..." (stream -> hardware queue, stream -> gpuprio
 * priority), built in stream creation order; the same helpers read them back for the checks of
 * the priority order and the notes.
 *
 * The last word, lc_lat_ns=v,v,... ("-" without LC), carries the LC client's latencies for the
 * picture: the parent only gets percentiles otherwise, and an empirical CDF needs the requests
 * themselves. At most DEMO_LAT_POINTS of them (evenly spaced in rank beyond that), so the line
 * stays a few kilobytes whatever --seconds and --rate are.
 */
#include "demo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A word of the line: its key and where its value lives in row_result. */
typedef struct result_key {
    const char *key;
    size_t offset;
} result_key;

static const result_key result_fields[] = {
    {"window_ns", offsetof(row_result, window_ns)},
    {"slots", offsetof(row_result, slots)},
    {"lc_reqs", offsetof(row_result, lc.reqs)},
    {"lc_p50_ns", offsetof(row_result, lc.p50_ns)},
    {"lc_p99_ns", offsetof(row_result, lc.p99_ns)},
    {"lc_max_ns", offsetof(row_result, lc.max_ns)},
    {"lc_max_late_ns", offsetof(row_result, lc.max_late_ns)},
    {"lc2_reqs", offsetof(row_result, lc2.reqs)},
    {"lc2_p50_ns", offsetof(row_result, lc2.p50_ns)},
    {"lc2_p99_ns", offsetof(row_result, lc2.p99_ns)},
    {"lc2_max_ns", offsetof(row_result, lc2.max_ns)},
    {"lc2_max_late_ns", offsetof(row_result, lc2.max_late_ns)},
    {"be_kernels", offsetof(row_result, be_kernels)},
    {"be_busy_ns", offsetof(row_result, be_busy_ns)},
    {"be_suspensions", offsetof(row_result, be_suspensions)},
};
#define NRESULT_FIELDS (sizeof result_fields / sizeof result_fields[0])

/* Text fields: no spaces; "-" on the line stands for empty. */
static const result_key result_strings[] = {
    {"hwq", offsetof(row_result, hwq)},
    {"prio", offsetof(row_result, prio)},
};
#define NRESULT_STRINGS (sizeof result_strings / sizeof result_strings[0])

#define LAT_KEY "lc_lat_ns"

static uint64_t *result_field(row_result *r, size_t i)
{
    return (uint64_t *)(void *)((char *)r + result_fields[i].offset);
}

static char *result_string(row_result *r, size_t i)
{
    return (char *)r + result_strings[i].offset;
}

void demo_print_result_line(FILE *f, const scenario *sc, row_result *r)
{
    fprintf(f, RESULT_TAG " scenario=%s", sc->id);
    for (size_t i = 0; i < NRESULT_FIELDS; i++)
        fprintf(f, " %s=%" PRIu64, result_fields[i].key, *result_field(r, i));
    for (size_t i = 0; i < NRESULT_STRINGS; i++) {
        const char *s = result_string(r, i);
        fprintf(f, " %s=%s", result_strings[i].key, s[0] ? s : "-");
    }
    fprintf(f, " " LAT_KEY "=%s", r->lc_nlat ? "" : "-");
    for (uint32_t i = 0; i < r->lc_nlat && i < DEMO_LAT_POINTS; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", r->lc_lat_ns[i]);
    fprintf(f, "\n");
    fflush(f);
}

/* Parses the value of LAT_KEY into r (the count, then the values); false if malformed. */
static bool parse_latencies(const char *val, row_result *r)
{
    r->lc_nlat = 0;
    if (strcmp(val, "-") == 0)
        return true;
    for (const char *p = val;; p++) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno != 0 || end == p || r->lc_nlat >= DEMO_LAT_POINTS || (*end && *end != ','))
            return false;
        r->lc_lat_ns[r->lc_nlat++] = (uint64_t)v;
        if (!*end)
            return true;
        p = end;
    }
}

bool demo_parse_result_line(char *text, const char *id, row_result *r)
{
    memset(r, 0, sizeof *r);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, RESULT_TAG " ", sizeof RESULT_TAG) != 0)
            continue;
        bool id_ok = false;
        size_t seen = 0;
        char *save = NULL;
        for (char *w = strtok_r(line + sizeof RESULT_TAG, " ", &save); w;
             w = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(w, '=');
            if (!eq)
                return false;
            *eq = '\0';
            const char *val = eq + 1;
            if (strcmp(w, "scenario") == 0)
                id_ok = strcmp(val, id) == 0;
            if (strcmp(w, LAT_KEY) == 0) {
                if (!parse_latencies(val, r))
                    return false;
                seen++;
            }
            for (size_t i = 0; i < NRESULT_STRINGS; i++)
                if (strcmp(w, result_strings[i].key) == 0)
                    snprintf(result_string(r, i), RESULT_STRING_LEN, "%s",
                             strcmp(val, "-") == 0 ? "" : val);
            for (size_t i = 0; i < NRESULT_FIELDS; i++) {
                if (strcmp(w, result_fields[i].key) != 0)
                    continue;
                char *end = NULL;
                errno = 0;
                unsigned long long v = strtoull(val, &end, 10);
                if (errno != 0 || end == val || *end != '\0')
                    return false;
                *result_field(r, i) = (uint64_t)v;
                seen++;
            }
        }
        return id_ok && seen == NRESULT_FIELDS + 1;
    }
    return false;
}

void demo_keep_latencies(row_result *r, const uint64_t *sorted, size_t n)
{
    /* Point k is the nearest-rank quantile (k+1)/kept, so the picture can put it at that
     * fraction of the requests whether or not they were all kept. */
    size_t kept = n < DEMO_LAT_POINTS ? n : DEMO_LAT_POINTS;
    for (size_t k = 0; k < kept; k++)
        r->lc_lat_ns[k] = sorted[((k + 1) * n + kept - 1) / kept - 1];
    r->lc_nlat = (uint32_t)kept;
}

/* Counts add up, the window and the slots are the same in all processes, and a client's
 * statistics (and LC's latencies) come from the one process that ran it (they are zero in the
 * others). Lists are concatenated in process order. */
void demo_merge_result(row_result *into, row_result *part)
{
    for (size_t i = 0; i < NRESULT_FIELDS; i++) {
        size_t off = result_fields[i].offset;
        bool same = off == offsetof(row_result, window_ns) || off == offsetof(row_result, slots);
        *result_field(into, i) = (same ? 0 : *result_field(into, i)) + *result_field(part, i);
    }
    for (size_t i = 0; i < NRESULT_STRINGS; i++) {
        char *s = result_string(into, i);
        const char *add = result_string(part, i);
        size_t len = strlen(s);
        snprintf(s + len, RESULT_STRING_LEN - len, "%s%s", len && add[0] ? "," : "", add);
    }
    if (part->lc_nlat) {
        into->lc_nlat = part->lc_nlat;
        memcpy(into->lc_lat_ns, part->lc_lat_ns, part->lc_nlat * sizeof part->lc_lat_ns[0]);
    }
}

void demo_append_item(char *buf, size_t size, const char *who, int value)
{
    size_t len = strlen(buf);
    if (len < size)
        snprintf(buf + len, size - len, "%s%s:%d", len ? "," : "", who, value);
}

int demo_parse_items(const char *list, char who[][8], int *v, int max)
{
    int n = 0;
    const char *p = list;
    while (p && *p && n < max) {
        if (sscanf(p, "%7[^:,]:%d", who[n], &v[n]) == 2)
            n++;
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return n;
}

/* Distinct, or gpuprio would not tell the streams apart and the row would not test scheduling
 * at all. */
bool demo_prio_ordered(const char *prio)
{
    char who[MAX_ITEMS][8];
    int v[MAX_ITEMS];
    int n = demo_parse_items(prio, who, v, MAX_ITEMS);
    int rank[MAX_ITEMS];
    for (int i = 0; i < n; i++)
        rank[i] = strcmp(who[i], "LC") == 0 ? 0 : strcmp(who[i], "LC2") == 0 ? 1 : 2;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (rank[i] < rank[j] && v[i] <= v[j])
                return false;
    return true;
}
