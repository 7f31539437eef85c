/*
 * queues.c - reads the boards (src/sched/board.h) into rows for `gpuprio top` and `gpuprio
 * metrics`: one row per live slot whose owner still runs, and one record row per process record
 * (the process's unused queues on that device, which hold no slot).
 *
 * The tool never maps a board: its owner may truncate it at any moment, and a load from a mapping
 * past the file's end would kill the tool with SIGBUS (root's included). It reads a private copy
 * of each board (gp_board_open_copy, which never blocks: a FIFO at a board's name is refused), and
 * then the board again: the owner may be changing a slot while it is copied, so a row is kept
 * only if the second copy has the same owner word and identity in that slot (it was not freed or
 * claimed meanwhile). Counters are single words, so each is consistent on its own.
 *
 * Which files are boards to read is board_screen.h's to say, as for the library's readers: any
 * user can write the directory (/dev/shm, a shared one), and a board hard-linked or copied under
 * hundreds of names, or named as another user's, must neither show up as more queues nor cost
 * the tool more than a look per name. Nothing after the reading is quadratic in rows either.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "board_screen.h"
#include "gp_conf_file.h"
#include "gp_grow.h"
#include "gp_priority.h"
#include "tool.h"

uint64_t gp_tool_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool gp_parse_seconds(const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(d) || d < min || d > max)
        return false;
    *out = d;
    return true;
}

uid_t gp_tool_board_uid(bool to_write)
{
    return geteuid() == 0 || (!to_write && gp_board_shared()) ? (uid_t)-1 : geteuid();
}

static struct gp_queue_row *new_row(struct gp_sample *s)
{
    struct gp_queue_row *rows = gp_grow(s->rows, &s->cap, s->n, sizeof *rows, 64);
    if (!rows)
        return NULL;
    s->rows = rows;
    return memset(&rows[s->n], 0, sizeof *rows);
}

static struct gp_record_row *new_record(struct gp_sample *s)
{
    struct gp_record_row *records = gp_grow(s->records, &s->caprec, s->nrec, sizeof *records, 16);
    if (!records)
        return NULL;
    s->records = records;
    return memset(&records[s->nrec], 0, sizeof *records);
}

/* Where slot i of b comes from, its owner seen as word and incarnation. */
static void read_id(struct gp_slot_id *id, const struct gp_board *b, unsigned i, uint64_t word,
                    uint64_t incarnation)
{
    const struct gp_board_slot *slot = &b->f->slots[i];
    snprintf(id->board, sizeof id->board, "%s", b->path);
    memcpy(id->key, b->f->h.key, sizeof id->key);
    id->key[sizeof id->key - 1] = '\0';
    id->slot = i;
    id->pid = GP_SLOT_OWNER(word);
    id->owner_start = atomic_load(&slot->owner_start);
    id->incarnation = incarnation;
    char comm[sizeof slot->comm];
    memcpy(comm, slot->comm, sizeof comm);
    comm[sizeof comm - 1] = '\0';
    /* Cleaned before the rows are sorted and told apart: two names that differ only in bytes
     * that are not UTF-8 (x\xff, x\xfe) print the same, and metrics printed both, a duplicate
     * series for which a scraper refuses the whole exposition. */
    gp_utf8_clean(id->comm, sizeof id->comm, comm);
    id->device = slot->device;
    /* The board's recorded owner, which the open checked against the file's: whose processes
     * these are, with no second look at the file (which could have been replaced since). */
    id->uid = b->f->h.uid;
}

/* Whether slot i of the board's second copy has the owner and identity of the first. */
static bool unchanged(const struct gp_board_file *again, unsigned i, uint64_t word,
                      uint64_t incarnation)
{
    return i < gp_board_copy_slots(again) && atomic_load(&again->slots[i].owner) == word &&
           atomic_load(&again->slots[i].incarnation) == incarnation;
}

/* Copies a process's record (slot i of b, owner word seen as word) into a new record row of s.
 * 0 or -ENOMEM. */
static int read_record(struct gp_sample *s, const struct gp_board *b, unsigned i, uint64_t word,
                       uint64_t incarnation, const struct gp_board_file *again)
{
    struct gp_board_slot *slot = &b->f->slots[i];
    struct gp_record_row *r = new_record(s);
    if (!r)
        return -ENOMEM;
    read_id(&r->id, b, i, word, incarnation);
    r->unused_queues = atomic_load(&slot->unused_queues);
    r->unslotted_queues = atomic_load(&slot->unslotted_queues);
    r->mps = slot->mps;
    r->mps_share = slot->mps_share;
    r->mps_sms = slot->cu_usable;
    /* Any number its owner wrote: clamped, so that sums and outputs stay exact. */
    r->gemm_sliced = gp_gemm_sum(atomic_load(&slot->gemm.sliced), 0);
    r->gemm_slices = gp_gemm_sum(atomic_load(&slot->gemm.slices), 0);
    for (int k = 0; k < GP_RECORD_GEMM_WHOLE_COUNT; k++)
        r->gemm_whole[k] = atomic_load(&slot->gemm.whole[k]);
    if (unchanged(again, i, word, incarnation))
        s->nrec++;
    return 0;
}

/* The cap of a board's user (gp_conf_file.h), looked up once per board. */
struct user_cap {
    bool capped;
    int value;
};

/* Copies slot i of b into a new row of s if it is live (or a new record row if it is a record)
 * and its owner runs; its priority within cap. 0 or -ENOMEM. */
static int read_slot(struct gp_sample *s, const struct gp_board *b, unsigned i,
                     const struct user_cap *cap, const struct gp_board_file *again)
{
    struct gp_board_slot *slot = &b->f->slots[i];
    uint64_t word = atomic_load(&slot->owner);
    if (!GP_SLOT_PUBLISHED(word))
        return 0;
    uint64_t incarnation = atomic_load(&slot->incarnation);
    /* Alive, and the process its pid names as far as we can tell (not another user's process
     * that the board's owner named in its own board). */
    if (!gp_board_owner_alive(b, slot) || !gp_board_slot_pid_true(b, slot))
        return 0;
    if (GP_SLOT_STATE(word) == GP_SLOT_PROCESS)
        return read_record(s, b, i, word, incarnation, again);
    /* A priority no gpuprio writes (a forged board's) is ignored by the scheduler (tenants.c),
     * so shown by no command either: not as a queue that is obeyed, nor as the number written. */
    if (!gp_priority_valid(atomic_load(&slot->st.priority)))
        return 0;
    struct gp_queue_row *r = new_row(s);
    if (!r)
        return -ENOMEM;
    read_id(&r->id, b, i, word, incarnation);
    r->stream = slot->stream;
    r->thread = slot->thread;
    r->priority = atomic_load(&slot->st.priority);
    /* As every other user's process takes it: at most at its user's cap. */
    r->capped = cap->capped;
    r->cap = cap->value;
    if (r->capped && r->priority > r->cap)
        r->priority = r->cap;
    r->active = atomic_load(&slot->st.active) != 0;
    r->gate = atomic_load(&slot->st.gate);
    r->mirrored = atomic_load(&gp_board_gate(b, slot)->mirrored) != 0;
    r->submitted = atomic_load(&slot->st.submitted);
    r->completed = atomic_load(&slot->st.completed);
    r->held_ns = atomic_load(&slot->st.held_ns);
    r->suspensions = atomic_load(&slot->st.suspensions);
    r->submitted_per_s = -1;
    r->cus = (struct xq_cus){slot->cu_usable, slot->cu_total, slot->cu_mask};
    /* Any number its owner wrote: at most what an owner stores. */
    uint32_t longest = atomic_load(&slot->longest_us);
    r->longest_us = longest < GP_SLOT_LONGEST_MAX_US ? longest : GP_SLOT_LONGEST_MAX_US;
    /* Still the same owner's slot? Otherwise what was copied may be half someone else's. */
    if (unchanged(again, i, word, incarnation))
        s->n++;
    return 0;
}

struct take_ctx {
    struct gp_sample *s;
    struct gp_tool_view *view;
};

/* Reads a board the screen took into rows, and closes it. */
static int take_board(struct gp_board *taken, void *arg)
{
    struct take_ctx *t = arg;
    struct gp_board b = *taken;
    int rc = 0;
    const char *why;
    struct gp_board_file *again = malloc(sizeof *again);
    if (!again) {
        gp_board_close(&b);
        return -ENOMEM;
    }
    if (gp_board_read(&b, again, &why) != 0) {
        gp_screen_drop(&t->view->screen[t->view->at], &b, why);
        free(again);
        gp_board_close(&b);
        return 0;
    }
    t->s->boards++;
    struct user_cap cap = {false, 0};
    unsigned line;
    cap.capped = gp_conf_lookup(gp_conf_get(), GP_CONF_CAP, b.uid, &cap.value, &line) == 0;
    for (unsigned i = 0; i < gp_board_slots_used(&b) && !rc; i++)
        rc = read_slot(t->s, &b, i, &cap, again);
    free(again);
    gp_board_close(&b);
    return rc;
}

/* What tells apart rows of one device, priority, pid, stream and thread (a process's queue on
 * two of its user's boards, or slots that say the same): the labels `gpuprio metrics` gives them,
 * then where they come from. So rows of the same labels are next to each other. */
static int by_labels(const struct gp_slot_id *a, const struct gp_slot_id *b)
{
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->uid != b->uid)
        return a->uid < b->uid ? -1 : 1;
    int c = strcmp(a->comm, b->comm);
    if (c)
        return c;
    if ((c = strcmp(a->board, b->board)))
        return c;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static int by_row(const void *pa, const void *pb)
{
    const struct gp_queue_row *a = pa, *b = pb;
    int c = strcmp(a->id.key, b->id.key);
    if (c)
        return c;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->id.pid != b->id.pid)
        return a->id.pid < b->id.pid ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return by_labels(&a->id, &b->id);
}

static int by_record(const void *pa, const void *pb)
{
    const struct gp_record_row *a = pa, *b = pb;
    int c = strcmp(a->id.key, b->id.key);
    if (c)
        return c;
    if (a->id.pid != b->id.pid)
        return a->id.pid < b->id.pid ? -1 : 1;
    return by_labels(&a->id, &b->id);
}

/* Whether the directories a and b are one (by identity, however they are spelled). */
static bool same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return strcmp(a, b) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void gp_tool_view_init(struct gp_tool_view *v, bool writable)
{
    memset(v, 0, sizeof *v);
    const struct gp_conf *conf = gp_conf_get();
    const char *own = gp_board_dir();
    /* Root not admitted to the shared directory: it still reads it, as the administrator. */
    if (geteuid() == 0 && !gp_board_shared() && conf && conf->board_dir[0]) {
        v->dir[v->n] = conf->board_dir;
        v->shared[v->n++] = true;
        if (same_dir(own, conf->board_dir))
            own = NULL; /* GPUPRIO_BOARD_DIR names it too: read once, as the shared one */
    }
    if (own) {
        v->dir[v->n] = own;
        v->shared[v->n++] = gp_board_shared();
    }
    size_t used = 0;
    for (unsigned i = 0; i < v->n; i++) {
        v->screen[i] = (struct gp_screen){.key = NULL, .writable = writable};
        int n =
            snprintf(v->names + used, sizeof v->names - used, "%s%s", i ? " and " : "", v->dir[i]);
        used += n > 0 && (size_t)n < sizeof v->names - used ? (size_t)n : 0;
    }
}

void gp_tool_view_free(struct gp_tool_view *v)
{
    for (unsigned i = 0; i < v->n; i++)
        gp_screen_free(&v->screen[i]);
}

int gp_tool_view_list(struct gp_tool_view *v, bool to_write,
                      int (*fn)(struct gp_board *b, void *arg), void *arg)
{
    int first = 0;
    for (unsigned i = 0; i < v->n; i++) {
        /* In the administrator's shared directory the boards of users the file does not admit
         * are left out, as the library's readers leave them out: nobody schedules with them. */
        v->screen[i].admitted_only = v->shared[i];
        uid_t uid = v->shared[i] && !to_write ? (uid_t)-1 : gp_tool_board_uid(to_write);
        v->at = i;
        int rc = gp_screen_list(&v->screen[i], v->dir[i], uid, fn, arg);
        if (rc < 0 && rc != -ENOENT && !first) /* no directory: no boards */
            first = rc;
    }
    return first;
}

int gp_sample_take(struct gp_sample *s, struct gp_tool_view *view)
{
    s->n = 0;
    s->nrec = 0;
    s->boards = 0;
    struct take_ctx t = {s, view};
    int rc = gp_tool_view_list(view, false, take_board, &t);
    s->taken_ns = gp_tool_now_ns();
    if (s->n)
        qsort(s->rows, s->n, sizeof *s->rows, by_row);
    if (s->nrec)
        qsort(s->records, s->nrec, sizeof *s->records, by_record);
    return rc;
}

int gp_sample_or_report(struct gp_sample *s, struct gp_tool_view *view, const char *command)
{
    int rc = gp_sample_take(s, view);
    if (rc < 0) {
        fprintf(stderr, "gpuprio %s: cannot read the board directory %s: %s\n", command,
                view->names, strerror(-rc));
        return GP_EXIT_FAILURE;
    }
    return 0;
}

/* Orders rows by what makes them one queue: the board and slot, its owner's identity, the stream
 * and thread. */
static int by_queue(const void *pa, const void *pb)
{
    const struct gp_queue_row *a = *(const struct gp_queue_row *const *)pa,
                              *b = *(const struct gp_queue_row *const *)pb;
    if (a->id.slot != b->id.slot)
        return a->id.slot < b->id.slot ? -1 : 1;
    if (a->id.pid != b->id.pid)
        return a->id.pid < b->id.pid ? -1 : 1;
    if (a->id.incarnation != b->id.incarnation)
        return a->id.incarnation < b->id.incarnation ? -1 : 1;
    if (a->id.owner_start != b->id.owner_start)
        return a->id.owner_start < b->id.owner_start ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return strcmp(a->id.board, b->id.board);
}

void gp_sample_rates(struct gp_sample *cur, const struct gp_sample *prev)
{
    double dt = (double)(cur->taken_ns - prev->taken_ns) / 1e9;
    for (size_t i = 0; i < cur->n; i++)
        cur->rows[i].submitted_per_s = -1;
    /* The previous sample's rows sorted, each row's found by a binary search: a sample's rows
     * cost n log n, not n times n (an attacker's boards once held root's top for a minute). */
    const struct gp_queue_row **index = prev->n && dt > 0 ? malloc(prev->n * sizeof *index) : NULL;
    if (!index)
        return; /* no rates (out of memory: unknown, as for a new queue) */
    for (size_t j = 0; j < prev->n; j++)
        index[j] = &prev->rows[j];
    qsort(index, prev->n, sizeof *index, by_queue);
    for (size_t i = 0; i < cur->n; i++) {
        struct gp_queue_row *r = &cur->rows[i];
        const struct gp_queue_row *const *found =
            bsearch(&r, index, prev->n, sizeof *index, by_queue);
        if (!found)
            continue;
        const struct gp_queue_row *p = *found;
        r->submitted_per_s =
            r->submitted >= p->submitted ? (double)(r->submitted - p->submitted) / dt : 0;
    }
    free(index);
}

void gp_sample_free(struct gp_sample *s)
{
    free(s->rows);
    free(s->records);
    memset(s, 0, sizeof *s);
}
