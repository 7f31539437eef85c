/*
 * top_format.c - prints what `gpuprio top` read from the boards: the table a person reads, the
 * line of processes above it, and the JSON document a script reads (docs/cli.md lists its
 * fields). Queues that never ran have no slot, so they are shown as each process's count of
 * unused queues per device (from its record), never one by one.
 *
 * Every string in the JSON output comes from a shared file that any process of the user can
 * write (a command name, a device key), so each is escaped completely: quotes, backslashes,
 * control characters, and bytes that are not valid UTF-8 (as \u00XX of the byte, so the output
 * is always valid JSON; a command name has them as U+FFFD already, queues.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "tool.h"

const char *gp_row_state(const struct gp_queue_row *r)
{
    if (!r->active)
        return "idle";
    return r->gate & XQ_GATE_STALLED ? "stalled" : "active";
}

int gp_row_level(const struct gp_queue_row *r)
{
    return r->gate & XQ_GATE_DEVICE ? 2 : 1;
}

bool gp_row_lower(const struct gp_queue_row *r)
{
    return (r->gate & (XQ_GATE_SUSPENDED | XQ_GATE_THROTTLED)) != 0;
}

const char *gp_row_gate(const struct gp_queue_row *r)
{
    return (r->gate & XQ_GATE_SUSPENDED)   ? "suspended"
           : (r->gate & XQ_GATE_THROTTLED) ? "throttled"
           : (r->gate & XQ_GATE_TRACKED)   ? "tracked"
                                           : "none";
}

/* Its CU mask's kind for JSON, or NULL: not known. */
static const char *cu_mask_name(const struct gp_queue_row *r)
{
    switch (r->cus.mask) {
    case XQ_CU_ALL:
        return "all";
    case XQ_CU_MASKED:
        return "masked";
    case XQ_CU_RESERVED:
        return "reserved";
    case XQ_CU_UNMASKABLE:
        return "unmaskable";
    default:
        return NULL;
    }
}

size_t gp_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n;
    uint32_t c, min;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, c = s[0] & 0x1fu, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, c = s[0] & 0x0fu, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, c = s[0] & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* the terminating NUL stops here too */
            return 0;
        c = c << 6 | (s[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return n;
}

void gp_utf8_clean(char *out, size_t size, const char *text)
{
    static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD REPLACEMENT CHARACTER */
    const unsigned char *s = (const unsigned char *)text;
    size_t used = 0;
    while (*s) {
        size_t n = gp_utf8_len(s);
        const char *from = n ? (const char *)s : replacement;
        size_t len = n ? n : sizeof replacement - 1;
        if (used + len >= size)
            break;
        memcpy(out + used, from, len);
        used += len;
        s += n ? n : 1;
    }
    out[used] = '\0';
}

bool gp_char_steers(const unsigned char *s, size_t n)
{
    if (n == 0)
        return s[0] >= 0x80 && s[0] < 0xa0;
    if (n == 1)
        return s[0] < 0x20 || s[0] == 0x7f;
    if (n == 2)
        return s[0] == 0xc2 && s[1] < 0xa0; /* U+0080 to U+009F */
    /* U+202A..U+202E are e2 80 aa..ae, U+2066..U+2069 e2 81 a6..a9. */
    return n == 3 && s[0] == 0xe2 &&
           ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
            (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9));
}

void gp_printable(char *out, size_t size, const char *in)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t used = 0;
    while (*s && used < size - 1) {
        size_t n = gp_utf8_len(s);
        if (gp_char_steers(s, n)) {
            out[used++] = '?';
            s += n ? n : 1;
            continue;
        }
        n = n ? n : 1; /* another invalid byte, as it was: Latin-1 to some terminals */
        if (used + n > size - 1)
            break;
        memcpy(out + used, s, n);
        used += n;
        s += n;
    }
    out[used] = '\0';
}

static void json_string(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    putchar('"');
    while (*s) {
        size_t n = gp_utf8_len(s);
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", stdout);
        else if (*s == '\t')
            fputs("\\t", stdout);
        else if (*s < 0x20 || *s == 0x7f || n == 0)
            printf("\\u%04x", *s); /* an invalid byte becomes the character of that value */
        else if (gp_char_steers(s, n)) {
            /* Valid JSON either way, but escaped it reaches no terminal that shows the output. */
            printf("\\u%04x", n == 2 ? (unsigned)(s[1] & 0x3f) | 0x80
                                     : 0x2000u | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3fu));
            s += n;
            continue;
        } else {
            fwrite(s, 1, n, stdout);
            s += n;
            continue;
        }
        s++;
    }
    putchar('"');
}

/* Orders records by what finds a row's: the process's pid and image, and the board. */
static int by_owner(const void *pa, const void *pb)
{
    const struct gp_record_row *a = *(const struct gp_record_row *const *)pa,
                               *b = *(const struct gp_record_row *const *)pb;
    if (a->id.pid != b->id.pid)
        return a->id.pid < b->id.pid ? -1 : 1;
    if (a->id.incarnation != b->id.incarnation)
        return a->id.incarnation < b->id.incarnation ? -1 : 1;
    return strcmp(a->id.board, b->id.board);
}

const struct gp_record_row **gp_sample_owners(const struct gp_sample *s)
{
    const struct gp_record_row **index = s->nrec ? malloc(s->nrec * sizeof *index) : NULL;
    if (!index)
        return NULL;
    for (size_t j = 0; j < s->nrec; j++)
        index[j] = &s->records[j];
    qsort(index, s->nrec, sizeof *index, by_owner);
    return index;
}

const char *const gp_gemm_whole_labels[GP_RECORD_GEMM_WHOLE_COUNT] = {
#define GEMM_WHOLE_LABEL(name, label, what) [GP_RECORD_GEMM_##name] = label,
    GP_RECORD_GEMM_WHOLE(GEMM_WHOLE_LABEL)
#undef GEMM_WHOLE_LABEL
};

uint64_t gp_gemm_sum(uint64_t a, uint64_t b)
{
    a = a < GP_RECORD_GEMM_MAX ? a : GP_RECORD_GEMM_MAX;
    b = b < GP_RECORD_GEMM_MAX ? b : GP_RECORD_GEMM_MAX;
    return a + b < GP_RECORD_GEMM_MAX ? a + b : GP_RECORD_GEMM_MAX;
}

const struct gp_record_row *gp_sample_record(const struct gp_sample *s,
                                             const struct gp_record_row **index,
                                             const struct gp_queue_row *r)
{
    struct gp_record_row want = {.id = r->id};
    const struct gp_record_row *key = &want;
    if (index) {
        const struct gp_record_row **found = bsearch(&key, index, s->nrec, sizeof *index, by_owner);
        return found ? *found : NULL;
    }
    for (size_t j = 0; j < s->nrec; j++)
        if (by_owner(&key, &(const struct gp_record_row *){&s->records[j]}) == 0)
            return &s->records[j];
    return NULL;
}

/*
 * Calls row for each queue row and, with all, unused for each record with unused queues or
 * queues without a slot, in the table's order: a device's queues, then its processes' unused
 * queues (both lists are sorted by device first).
 */
static void each_row(const struct gp_sample *s, bool all,
                     void (*row)(const struct gp_queue_row *r, void *arg),
                     void (*unused)(const struct gp_record_row *p, void *arg), void *arg)
{
    size_t i = 0, j = all ? 0 : s->nrec;
    while (i < s->n || j < s->nrec) {
        if (j < s->nrec && (i == s->n || strcmp(s->records[j].id.key, s->rows[i].id.key) < 0)) {
            const struct gp_record_row *p = &s->records[j++];
            if (p->unused_queues || p->unslotted_queues)
                unused(p, arg);
        } else {
            row(&s->rows[i++], arg);
        }
    }
}

struct gp_user {
    bool used;
    uint32_t uid;
    char name[64];
};

/* uid's entry in a table of cap entries (a free one where it has none). */
static struct gp_user *user_entry(struct gp_user *table, size_t cap, uint32_t uid)
{
    size_t i = (uid * 2654435761u) & (cap - 1);
    while (table[i].used && table[i].uid != uid)
        i = (i + 1) & (cap - 1);
    return &table[i];
}

/* Makes room for one more name (the table at most half full); false when out of memory. */
static bool room_for_user(struct gp_users *u)
{
    if ((u->n + 1) * 2 <= u->cap)
        return true;
    size_t cap = u->cap ? 2 * u->cap : 64;
    struct gp_user *table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    for (size_t i = 0; i < u->cap; i++)
        if (u->table[i].used)
            *user_entry(table, cap, u->table[i].uid) = u->table[i];
    free(u->table);
    u->table = table;
    u->cap = cap;
    return true;
}

const char *gp_user_name(struct gp_users *u, uint32_t uid)
{
    struct gp_user *e = u->cap ? user_entry(u->table, u->cap, uid) : NULL;
    if (e && e->used)
        return e->name;
    e = room_for_user(u) ? user_entry(u->table, u->cap, uid) : NULL;
    char *name = e ? e->name : u->spare;
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &found) == 0 && found &&
        strlen(found->pw_name) < sizeof u->spare)
        snprintf(name, sizeof u->spare, "%s", found->pw_name);
    else
        snprintf(name, sizeof u->spare, "%" PRIu32, uid);
    if (e) {
        e->used = true;
        e->uid = uid;
        u->n++;
    }
    return name;
}

void gp_users_free(struct gp_users *u)
{
    free(u->table);
    *u = (struct gp_users){.n = 0};
}

struct json_ctx {
    const struct gp_sample *s;
    const struct gp_record_row **records; /* gp_sample_owners */
    size_t printed;
    struct gp_users users;
};

/* Opens the next object of the array: its kind, and where it comes from. */
static void json_open(struct json_ctx *c, const char *kind, const struct gp_slot_id *id)
{
    fputs(c->printed++ ? ",\n  {" : "\n  {", stdout);
    printf("\"kind\": \"%s\", \"device\": ", kind);
    json_string(id->key);
    fputs(", \"board\": ", stdout);
    json_string(id->board);
    printf(", \"pid\": %" PRIu32 ", \"command\": ", id->pid);
    json_string(id->comm);
    printf(", \"uid\": %" PRIu32 ", \"user\": ", id->uid);
    json_string(gp_user_name(&c->users, id->uid));
}

/* Whether the process is an MPS client on the device, from its record (null: not known). */
static void json_mps(const struct gp_record_row *p)
{
    fputs(", \"mps\": ", stdout);
    fputs(!p || p->mps == GP_MPS_UNKNOWN ? "null"
          : p->mps == GP_MPS_CLIENT      ? "true"
                                         : "false",
          stdout);
    if (p && p->mps == GP_MPS_CLIENT && p->mps_share)
        printf(", \"mps_share\": %u, \"mps_sms\": %u", (unsigned)p->mps_share,
               (unsigned)p->mps_sms);
    else
        fputs(", \"mps_share\": null, \"mps_sms\": null", stdout);
}

/* The process's long GEMMs on the device, from its record (null: no record). */
static void json_gemm(const struct gp_record_row *p)
{
    if (!p) {
        fputs(", \"gemm\": null", stdout);
        return;
    }
    printf(", \"gemm\": {\"sliced\": %" PRIu64 ", \"slices\": %" PRIu64 ", \"whole\": {",
           p->gemm_sliced, p->gemm_slices);
    for (int k = 0; k < GP_RECORD_GEMM_WHOLE_COUNT; k++)
        printf("%s\"%s\": %" PRIu64, k ? ", " : "", gp_gemm_whole_labels[k], p->gemm_whole[k]);
    fputs("}}", stdout);
}

static void json_row(const struct gp_queue_row *r, void *arg)
{
    struct json_ctx *c = arg;
    json_open(c, "queue", &r->id);
    printf(", \"stream\": \"0x%" PRIx64 "\", \"thread\": %" PRIu64 ", \"device_index\": %d"
           ", \"priority\": %d, \"state\": \"%s\", \"gate\": \"%s\", \"level\": %d"
           ", \"gates\": %s, \"in_flight\": %u, \"submitted\": %" PRIu64
           ", \"completed\": %" PRIu64,
           r->stream, r->thread, (int)r->id.device, (int)r->priority, gp_row_state(r),
           gp_row_gate(r), gp_row_level(r),
           gp_row_level(r) < 2 ? "null"
           : r->mirrored       ? "\"mirrored\""
                               : "\"direct\"",
           (unsigned)XQ_GATE_IN_FLIGHT(r->gate), r->submitted, r->completed);
    if (r->capped)
        printf(", \"cap\": %d", r->cap);
    else
        fputs(", \"cap\": null", stdout);
    if (r->submitted_per_s >= 0)
        printf(", \"submitted_per_s\": %.1f", r->submitted_per_s);
    else
        fputs(", \"submitted_per_s\": null", stdout);
    printf(", \"held_ns\": %" PRIu64 ", \"suspensions\": %" PRIu64, r->held_ns, r->suspensions);
    if (r->longest_us)
        printf(", \"longest_command_ns\": %" PRIu64, (uint64_t)r->longest_us * 1000);
    else
        fputs(", \"longest_command_ns\": null", stdout);
    const char *cu_mask = cu_mask_name(r);
    if (cu_mask)
        printf(", \"cu_mask\": \"%s\"", cu_mask);
    else
        fputs(", \"cu_mask\": null", stdout);
    if (r->cus.total)
        printf(", \"cu_usable\": %u, \"cu_total\": %u", (unsigned)r->cus.usable,
               (unsigned)r->cus.total);
    else
        fputs(", \"cu_usable\": null, \"cu_total\": null", stdout);
    const struct gp_record_row *p = gp_sample_record(c->s, c->records, r);
    if (p)
        printf(", \"unused_queues\": %" PRIu32 ", \"unslotted_queues\": %" PRIu32, p->unused_queues,
               p->unslotted_queues);
    else
        fputs(", \"unused_queues\": null, \"unslotted_queues\": null", stdout);
    json_mps(p);
    json_gemm(p);
    putchar('}');
}

static void json_unused(const struct gp_record_row *p, void *arg)
{
    struct json_ctx *c = arg;
    json_open(c, "unused", &p->id);
    printf(", \"device_index\": %d, \"unused_queues\": %" PRIu32 ", \"unslotted_queues\": %" PRIu32,
           (int)p->id.device, p->unused_queues, p->unslotted_queues);
    json_mps(p);
    json_gemm(p);
    putchar('}');
}

void gp_print_json(const struct gp_sample *s, bool all)
{
    struct json_ctx c = {s, gp_sample_owners(s), 0, {.n = 0}};
    fputs("[", stdout);
    each_row(s, all, json_row, json_unused, &c);
    fputs(c.printed ? "\n]\n" : "]\n", stdout);
    free(c.records);
    gp_users_free(&c.users);
}

void gp_duration_text(char *buf, size_t size, uint64_t ns)
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

struct table_ctx {
    size_t max_rows, printed, more;
    struct gp_users users;
};

/* Whether another row fits; counts those that do not. */
static bool fits(struct table_ctx *c)
{
    if (c->max_rows && c->printed >= c->max_rows) {
        c->more++;
        return false;
    }
    c->printed++;
    return true;
}

/* The CUS column: "-" (not known), "all", "6/8" (masked; "6/8*" by GPUPRIO_CU_RESERVE), "null"
 * (the null or a per-thread stream, which cannot be masked). */
static void cus_text(char *buf, size_t size, const struct xq_cus *cus)
{
    if (cus->mask == XQ_CU_ALL)
        snprintf(buf, size, "all");
    else if (cus->mask == XQ_CU_UNMASKABLE)
        snprintf(buf, size, "null");
    else if ((cus->mask == XQ_CU_MASKED || cus->mask == XQ_CU_RESERVED) && cus->total)
        snprintf(buf, size, "%u/%u%s", (unsigned)cus->usable, (unsigned)cus->total,
                 cus->mask == XQ_CU_RESERVED ? "*" : "");
    else
        snprintf(buf, size, "-");
}

static void table_row(const struct gp_queue_row *r, void *arg)
{
    if (!fits(arg))
        return;
    struct table_ctx *c = arg;
    char key[17], comm[GP_COMM_MAX], user[11], queue[48], rate[24], held[24], cus[24],
        cap[12] = "-", whole[24] = "-";
    gp_printable(key, sizeof key, r->id.key);
    gp_printable(comm, sizeof comm, r->id.comm);
    if (r->thread)
        snprintf(queue, sizeof queue, "0x%" PRIx64 "/%" PRIu64, r->stream, r->thread);
    else
        snprintf(queue, sizeof queue, "0x%" PRIx64, r->stream);
    if (r->submitted_per_s >= 0)
        snprintf(rate, sizeof rate, "%.0f", r->submitted_per_s);
    else
        snprintf(rate, sizeof rate, "-");
    gp_duration_text(held, sizeof held, r->held_ns);
    if (r->longest_us && gp_row_lower(r))
        gp_duration_text(whole, sizeof whole, (uint64_t)r->longest_us * 1000);
    cus_text(cus, sizeof cus, &r->cus);
    gp_printable(user, sizeof user, gp_user_name(&c->users, r->id.uid));
    if (r->capped)
        snprintf(cap, sizeof cap, "%d", r->cap);
    printf("%-16s %8" PRIu32 " %-15s %-10s %-24s %5d %4s %-6s %-9s %3d %5u %9s %9s %9s %s\n", key,
           r->id.pid, comm, user, queue, (int)r->priority, cap, gp_row_state(r), gp_row_gate(r),
           gp_row_level(r), (unsigned)XQ_GATE_IN_FLIGHT(r->gate), rate, held, whole, cus);
}

/* A process's unused queues on a device, and those that got no slot on a full board: one row, as
 * counts (they have no slot each). */
static void table_unused(const struct gp_record_row *p, void *arg)
{
    if (!fits(arg))
        return;
    struct table_ctx *c = arg;
    char key[17], comm[GP_COMM_MAX], user[11], queue[48];
    gp_printable(key, sizeof key, p->id.key);
    gp_printable(comm, sizeof comm, p->id.comm);
    gp_printable(user, sizeof user, gp_user_name(&c->users, p->id.uid));
    if (!p->unslotted_queues)
        snprintf(queue, sizeof queue, "%" PRIu32 " unused", p->unused_queues);
    else
        snprintf(queue, sizeof queue, "%" PRIu32 " unused, %" PRIu32 " no slot", p->unused_queues,
                 p->unslotted_queues);
    printf("%-16s %8" PRIu32 " %-15s %-10s %-24s %5s %4s %-6s %-9s %3s %5s %9s %9s %9s %s\n", key,
           p->id.pid, comm, user, queue, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-");
}

void gp_print_table(const struct gp_sample *s, size_t max_rows, bool all)
{
    printf("%-16s %8s %-15s %-10s %-24s %5s %4s %-6s %-9s %3s %5s %9s %9s %9s %s\n", "DEVICE",
           "PID", "COMMAND", "USER", "QUEUE", "PRIO", "CAP", "STATE", "GATE", "LVL", "INFL",
           "SUBMIT/S", "HELD", "WHOLE", "CUS");
    struct table_ctx c = {.max_rows = max_rows, .users = {.n = 0}};
    each_row(s, all, table_row, table_unused, &c);
    if (c.more)
        printf("... %zu more\n", c.more);
    gp_users_free(&c.users);
}

/* One process of the line above the table: every device's queues and unused queues together. */
struct process_sum {
    uint32_t pid;
    char comm[GP_COMM_MAX];
    size_t queues;
    uint64_t unused, unslotted;
    bool counted;                /* it has a record: its unused queues are known */
    bool mps;                    /* a record says it is an MPS client */
    unsigned mps_share, mps_sms; /* and the share and SMs MPS lets it use, when it limits it */
    /* Its long GEMMs on every device (gp_gemm_sum: at most GP_RECORD_GEMM_MAX each). */
    uint64_t gemm_sliced, gemm_slices, gemm_whole[GP_RECORD_GEMM_WHOLE_COUNT];
};

/* One row's or record's part in the line: its process, and where it came in the sample (the
 * first part of a process names it). */
struct process_part {
    uint32_t pid;
    size_t order;
    const char *comm;
    const struct gp_record_row *record; /* NULL: a queue row */
};

static int by_pid_then_order(const void *pa, const void *pb)
{
    const struct process_part *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* The processes of s, by pid, each with what its rows and records add up to, into ps (room for
 * s->n + s->nrec); how many. Sorted, then summed in one pass: a sample of many processes costs
 * their number times its logarithm, not its square. -ENOMEM: out of memory. */
static long sum_processes(const struct gp_sample *s, struct process_sum *ps)
{
    size_t total = s->n + s->nrec, n = 0;
    struct process_part *parts = total ? malloc(total * sizeof *parts) : NULL;
    if (total && !parts)
        return -ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        parts[i] = (struct process_part){s->rows[i].id.pid, i, s->rows[i].id.comm, NULL};
    for (size_t i = 0; i < s->nrec; i++)
        parts[s->n + i] = (struct process_part){s->records[i].id.pid, s->n + i,
                                                s->records[i].id.comm, &s->records[i]};
    if (total)
        qsort(parts, total, sizeof *parts, by_pid_then_order);
    for (size_t i = 0; i < total; i++) {
        struct process_sum *p = &ps[n];
        if (!n || ps[n - 1].pid != parts[i].pid) {
            memset(p, 0, sizeof *p);
            p->pid = parts[i].pid;
            gp_printable(p->comm, sizeof p->comm, parts[i].comm);
            n++;
        } else {
            p = &ps[n - 1];
        }
        const struct gp_record_row *r = parts[i].record;
        if (!r) {
            p->queues++;
            continue;
        }
        p->unused += r->unused_queues;
        p->unslotted += r->unslotted_queues;
        p->counted = true;
        p->gemm_sliced = gp_gemm_sum(p->gemm_sliced, r->gemm_sliced);
        p->gemm_slices = gp_gemm_sum(p->gemm_slices, r->gemm_slices);
        for (int k = 0; k < GP_RECORD_GEMM_WHOLE_COUNT; k++)
            p->gemm_whole[k] = gp_gemm_sum(p->gemm_whole[k], r->gemm_whole[k]);
        if (r->mps == GP_MPS_CLIENT) {
            p->mps = true;
            if (r->mps_share) {
                p->mps_share = r->mps_share;
                p->mps_sms = r->mps_sms;
            }
        }
    }
    free(parts);
    return (long)n;
}

bool gp_gemm_text(char *buf, size_t size, const char *lead, uint64_t sliced, uint64_t slices,
                  const uint64_t whole_by[GP_RECORD_GEMM_WHOLE_COUNT])
{
    uint64_t whole = 0;
    for (int k = 0; k < GP_RECORD_GEMM_WHOLE_COUNT; k++)
        whole = gp_gemm_sum(whole, whole_by[k]);
    buf[0] = '\0';
    if (!sliced && !slices && !whole)
        return false;
    int used = snprintf(buf, size,
                        "%sGEMMs %" PRIu64 " sliced (%" PRIu64 " slices), %" PRIu64 " left whole",
                        lead, sliced, slices, whole);
    for (int k = 0, first = 1; k < GP_RECORD_GEMM_WHOLE_COUNT; k++) {
        if (!whole_by[k] || used < 0 || (size_t)used >= size)
            continue;
        used += snprintf(buf + used, size - (size_t)used, "%s %" PRIu64 " %s", first ? ":" : ",",
                         whole_by[k], gp_gemm_whole_labels[k]);
        first = 0;
    }
    return true;
}

size_t gp_print_processes(const struct gp_sample *s, size_t width)
{
    static const char lead[] = "processes:";
    struct process_sum *ps = calloc(s->n + s->nrec + 1, sizeof *ps);
    long counted = ps ? sum_processes(s, ps) : -ENOMEM;
    if (counted < 0) {
        free(ps);
        puts("processes: (out of memory)");
        return 1;
    }
    size_t n = (size_t)counted;
    fputs(lead, stdout);
    size_t lines = 1, column = sizeof lead - 1;
    if (!n) {
        fputs(" none", stdout);
    }
    for (size_t i = 0; i < n; i++) {
        char entry[400], unused[64] = "", mps[40] = "", gemm[240] = "";
        if (ps[i].counted && ps[i].unslotted)
            snprintf(unused, sizeof unused, ", %" PRIu64 " unused, %" PRIu64 " without a slot",
                     ps[i].unused, ps[i].unslotted);
        else if (ps[i].counted)
            snprintf(unused, sizeof unused, ", %" PRIu64 " unused", ps[i].unused);
        if (ps[i].mps_share)
            snprintf(mps, sizeof mps, ", MPS %u%%: %u SMs", ps[i].mps_share, ps[i].mps_sms);
        else if (ps[i].mps)
            snprintf(mps, sizeof mps, ", MPS");
        gp_gemm_text(gemm, sizeof gemm, "; ", ps[i].gemm_sliced, ps[i].gemm_slices,
                     ps[i].gemm_whole);
        int len = snprintf(entry, sizeof entry, " %" PRIu32 " %s (%zu queue%s%s%s%s)%s", ps[i].pid,
                           ps[i].comm, ps[i].queues, ps[i].queues == 1 ? "" : "s", unused, mps,
                           gemm, i + 1 < n ? "," : "");
        if (width && i && column + (size_t)len > width) {
            printf("\n%*s", (int)(sizeof lead - 1), "");
            column = sizeof lead - 1;
            lines++;
        }
        fputs(entry, stdout);
        column += (size_t)len;
    }
    putchar('\n');
    free(ps);
    return lines;
}
