/*
 * result.c - gpuprio-demo's result line: what a row's process measured, as one line of text
 * from the child to the parent; the sum of such lines over a cross-process row's processes and
 * over a row's rounds; and the percentiles worked out from the sum.
 *
 * A line, not shared memory or a binary struct: the child is a separate program run (possibly by
 * hand, `--scenario ID`), its stdout is what the parent reads anyway, and a line can be read by a
 * person. "RESULT_TAG scenario=ID key=value ...": the numbers, then the text fields (no spaces;
 * "-" for empty), then the latency lists. The keys are tables of offsets into row_result, so the
 * printer, the parser and the merge cannot disagree on the fields, and the parser can insist on
 * all of them: a child built from other sources fails the row instead of reading as zeros.
 *
 * The text fields are lists "WHO:value,..." (stream -> hardware queue, stream -> gpuprio
 * priority), built in stream creation order; the same helpers read them back for the checks of
 * the priority order and the notes.
 *
 * The latency lists (v,v,... or "-") carry each client's requests, those the host did not stall
 * and those it did apart: percentiles cannot be added up over rounds, the requests can. The
 * child sends at most its round's share of DEMO_LAT_MAX per list (every k-th request beyond
 * that, workload.c), so a row's lists never overflow and the line stays short; the percentiles
 * are worked out once, by the parent, from all of a row's rounds (demo_finish_result).
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
    {"lc_stalled", offsetof(row_result, lc.stalled)},
    {"lc_max_late_ns", offsetof(row_result, lc.max_late_ns)},
    {"lc2_reqs", offsetof(row_result, lc2.reqs)},
    {"lc2_stalled", offsetof(row_result, lc2.stalled)},
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

/* Latency lists: the count (uint32_t) and the values, DEMO_LAT_MAX of them at most. */
typedef struct result_list {
    const char *key;
    size_t count, values;
} result_list;

static const result_list result_lists[] = {
    {"lc_lat_ns", offsetof(row_result, lc.nkept), offsetof(row_result, lc.kept_ns)},
    {"lc_stalled_ns", offsetof(row_result, lc.nstalled_lat), offsetof(row_result, lc.stalled_ns)},
    {"lc2_lat_ns", offsetof(row_result, lc2.nkept), offsetof(row_result, lc2.kept_ns)},
    {"lc2_stalled_ns", offsetof(row_result, lc2.nstalled_lat),
     offsetof(row_result, lc2.stalled_ns)},
};
#define NRESULT_LISTS (sizeof result_lists / sizeof result_lists[0])

static uint64_t *result_field(row_result *r, size_t i)
{
    return (uint64_t *)(void *)((char *)r + result_fields[i].offset);
}

static char *result_string(row_result *r, size_t i)
{
    return (char *)r + result_strings[i].offset;
}

static uint32_t *list_count(row_result *r, size_t i)
{
    return (uint32_t *)(void *)((char *)r + result_lists[i].count);
}

static uint64_t *list_values(row_result *r, size_t i)
{
    return (uint64_t *)(void *)((char *)r + result_lists[i].values);
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
    for (size_t i = 0; i < NRESULT_LISTS; i++) {
        uint32_t n = *list_count(r, i);
        fprintf(f, " %s=%s", result_lists[i].key, n ? "" : "-");
        for (uint32_t k = 0; k < n && k < DEMO_LAT_MAX; k++)
            fprintf(f, "%s%" PRIu64, k ? "," : "", list_values(r, i)[k]);
    }
    fprintf(f, "\n");
    fflush(f);
}

/* Parses a list's value ("-", or v,v,...) into list i of r; false if malformed. */
static bool parse_list(const char *val, row_result *r, size_t i)
{
    uint32_t *n = list_count(r, i);
    uint64_t *v = list_values(r, i);
    *n = 0;
    if (strcmp(val, "-") == 0)
        return true;
    for (const char *p = val;; p++) {
        char *end = NULL;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (errno != 0 || end == p || *n >= DEMO_LAT_MAX || (*end && *end != ','))
            return false;
        v[(*n)++] = (uint64_t)x;
        if (!*end)
            return true;
        p = end;
    }
}

/* Parses one "key=value" word into r; counts what it filled in. False if malformed. */
static bool parse_word(const char *key, const char *val, row_result *r, size_t *seen)
{
    for (size_t i = 0; i < NRESULT_LISTS; i++)
        if (strcmp(key, result_lists[i].key) == 0) {
            (*seen)++;
            return parse_list(val, r, i);
        }
    for (size_t i = 0; i < NRESULT_STRINGS; i++)
        if (strcmp(key, result_strings[i].key) == 0)
            snprintf(result_string(r, i), RESULT_STRING_LEN, "%s",
                     strcmp(val, "-") == 0 ? "" : val);
    for (size_t i = 0; i < NRESULT_FIELDS; i++) {
        if (strcmp(key, result_fields[i].key) != 0)
            continue;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(val, &end, 10);
        if (errno != 0 || end == val || *end != '\0')
            return false;
        *result_field(r, i) = (uint64_t)v;
        (*seen)++;
    }
    return true;
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
            if (strcmp(w, "scenario") == 0)
                id_ok = strcmp(eq + 1, id) == 0;
            if (!parse_word(w, eq + 1, r, &seen))
                return false;
        }
        return id_ok && seen == NRESULT_FIELDS + NRESULT_LISTS;
    }
    return false;
}

/* Appends list i of part to list i of into (what does not fit is dropped: the rounds' shares
 * add up to DEMO_LAT_MAX). */
static void append_list(row_result *into, row_result *part, size_t i)
{
    uint32_t *n = list_count(into, i);
    uint32_t add = *list_count(part, i);
    if (add > DEMO_LAT_MAX - *n)
        add = DEMO_LAT_MAX - *n;
    memcpy(list_values(into, i) + *n, list_values(part, i), add * sizeof(uint64_t));
    *n += add;
}

/* Counts add up and lists are joined: a client's requests come from the one process that ran it
 * (zero in the others), and from every round. The window and the slots are the same in a row's
 * processes; the windows of its rounds add up. The worst late start is the worst of all. The
 * text lists are the processes' joined in process order, and the same in every round. */
void demo_merge_result(row_result *into, row_result *part, bool round)
{
    for (size_t i = 0; i < NRESULT_FIELDS; i++) {
        size_t off = result_fields[i].offset;
        uint64_t *to = result_field(into, i), v = *result_field(part, i);
        if (off == offsetof(row_result, lc.max_late_ns) ||
            off == offsetof(row_result, lc2.max_late_ns))
            *to = v > *to ? v : *to;
        else if (off == offsetof(row_result, slots) ||
                 (!round && off == offsetof(row_result, window_ns)))
            *to = v;
        else
            *to += v;
    }
    for (size_t i = 0; i < NRESULT_STRINGS; i++) {
        char *s = result_string(into, i);
        const char *add = result_string(part, i);
        size_t len = strlen(s);
        if (!round || len == 0)
            snprintf(s + len, RESULT_STRING_LEN - len, "%s%s", len && add[0] ? "," : "", add);
    }
    for (size_t i = 0; i < NRESULT_LISTS; i++)
        append_list(into, part, i);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t demo_percentile(const uint64_t *sorted, size_t n, unsigned pct)
{
    if (n == 0)
        return 0;
    size_t rank = ((size_t)pct * n + 99) / 100; /* ceil(pct/100 * n), 1-based */
    if (rank < 1)
        rank = 1;
    return sorted[(rank > n ? n : rank) - 1];
}

/* A client's percentiles: over the requests the host did not stall, and over all of them (the
 * two sorted lists merged). */
static void finish_client(client_result *c)
{
    qsort(c->kept_ns, c->nkept, sizeof c->kept_ns[0], cmp_u64);
    qsort(c->stalled_ns, c->nstalled_lat, sizeof c->stalled_ns[0], cmp_u64);
    c->p50_ns = demo_percentile(c->kept_ns, c->nkept, 50);
    c->p99_ns = demo_percentile(c->kept_ns, c->nkept, 99);
    c->max_ns = demo_percentile(c->kept_ns, c->nkept, 100);
    size_t n = (size_t)c->nkept + c->nstalled_lat;
    uint64_t *all = n ? malloc(n * sizeof *all) : NULL;
    if (!all) {
        c->p99_all_ns = c->p99_ns;
        return;
    }
    memcpy(all, c->kept_ns, c->nkept * sizeof *all);
    memcpy(all + c->nkept, c->stalled_ns, c->nstalled_lat * sizeof *all);
    qsort(all, n, sizeof *all, cmp_u64);
    c->p99_all_ns = demo_percentile(all, n, 99);
    free(all);
}

bool demo_client_measured(const client_result *c)
{
    return c->nkept > 0 && c->stalled * 100 <= c->reqs * DEMO_STALLED_MAX_PCT;
}

void demo_finish_result(row_result *r)
{
    finish_client(&r->lc);
    finish_client(&r->lc2);
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
