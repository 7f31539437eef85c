/*
 * tenants.c - see tenants.h.
 */
#include "tenants.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gp_clock.h"
#include "gp_conf.h"
#include "gp_log.h"
#include "gp_priority.h"
#include "xqueue.h"

/* Once per file: a refused board or a user not admitted would be said on every listing. */
static bool warned_before(struct tn_device *td, ino_t ino)
{
    for (unsigned i = 0; i < td->n_warned; i++)
        if (td->warned[i] == ino)
            return true;
    if (td->n_warned < TN_MAX_BOARDS)
        td->warned[td->n_warned++] = ino;
    return false;
}

static bool known(const struct tn_device *td, dev_t dev, ino_t ino)
{
    for (unsigned i = 0; i < td->n; i++)
        if (td->boards[i]->b.dev == dev && td->boards[i]->b.ino == ino)
            return true;
    return false;
}

struct listing {
    struct tn_device *td;
    struct tn_board *found[TN_MAX_BOARDS];
    unsigned n;
    bool full;
};

static struct tn_board *open_board(struct tn_device *td, const char *path, uid_t uid)
{
    struct tn_board *t = calloc(1, sizeof *t);
    const char *why = NULL;
    if (!t)
        return NULL;
    if (gp_board_open_file(path, false, &t->b, &why) != 0) {
        struct stat st;
        if (lstat(path, &st) == 0 && !warned_before(td, st.st_ino))
            gp_log(GP_LOG_WARN, "the board %s of user %u %s: it is ignored", path, (unsigned)uid,
                   why);
        goto fail;
    }
    t->uid = (uid_t)t->b.f->h.uid; /* the file's owner: check_and_map compared them */
    const struct gp_conf *conf = gp_conf_get();
    if (!gp_conf_admits(conf, t->uid)) {
        if (!warned_before(td, t->b.ino))
            gp_log(GP_LOG_WARN,
                   "the board %s belongs to user %u, whom %s does not admit: it is ignored", path,
                   (unsigned)t->uid, conf ? conf->path : "the configuration file");
        gp_board_close(&t->b);
        goto fail;
    }
    unsigned line;
    int share;
    t->capped = gp_conf_lookup(conf, GP_CONF_CAP, t->uid, &t->cap, &line) == 0;
    t->may_be_owed = gp_conf_lookup(conf, GP_CONF_SHARE, t->uid, &share, &line) == 0 && share > 0;
    t->summary_seen = atomic_load(&t->b.f->h.summary_seq);
    return t;
fail:
    free(t);
    return NULL;
}

static int take(const char *path, void *arg)
{
    struct listing *l = arg;
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    uid_t uid;
    struct stat st;
    if (!gp_board_name_of(name, l->td->key, &uid) || uid == geteuid() || lstat(path, &st) != 0 ||
        known(l->td, st.st_dev, st.st_ino))
        return 0;
    if (l->td->n + l->n >= TN_MAX_BOARDS) {
        l->full = true;
        return 0;
    }
    struct tn_board *t = open_board(l->td, path, uid);
    if (t)
        l->found[l->n++] = t;
    return 0;
}

bool tn_refresh(struct tn_device *td, bool poke)
{
    if (!gp_board_shared())
        return false;
    struct listing l = {.td = td};
    gp_board_list(gp_board_dir(), (uid_t)-1, take, &l);
    if (l.full && !warned_before(td, 0))
        gp_log(GP_LOG_WARN,
               "more than %d other users' boards for one device in %s: the rest are "
               "ignored",
               TN_MAX_BOARDS, gp_board_dir());
    /* Removed files are found before the scheduling lock is taken (a path lookup each): only
     * this thread changes the set, so they are still where they were found once it is held. */
    bool linked[TN_MAX_BOARDS];
    for (unsigned i = 0; i < td->n; i++)
        linked[i] = gp_board_linked(&td->boards[i]->b);
    struct tn_board *gone[TN_MAX_BOARDS];
    unsigned n_gone = 0, kept = 0;
    xq_sched_lock();
    for (unsigned i = 0; i < td->n; i++)
        if (linked[i])
            td->boards[kept++] = td->boards[i];
        else
            gone[n_gone++] = td->boards[i];
    td->n = kept;
    for (unsigned i = 0; i < l.n; i++)
        td->boards[td->n++] = l.found[i];
    xq_sched_unlock();
    for (unsigned i = 0; i < n_gone; i++) {
        gp_board_close(&gone[i]->b);
        free(gone[i]);
    }
    for (unsigned i = 0; poke && i < l.n; i++)
        gp_board_poke(&l.found[i]->b);
    return l.n || n_gone;
}

/* One slot of another user's board at a look; true when its marks changed. */
static bool look_at(struct tn_board *t, unsigned i, uint64_t now, uint64_t watchdog_ns,
                    bool *watching)
{
    const struct gp_board_slot *s = &t->b.f->slots[i];
    struct tn_slot *w = &t->slots[i];
    uint64_t owner = atomic_load(&s->owner), incarnation = atomic_load(&s->incarnation);
    if (GP_SLOT_STATE(owner) != GP_SLOT_LIVE || atomic_load(&w->dead) == incarnation)
        return false;
    if (!gp_board_owner_alive(&t->b, s)) {
        atomic_store(&w->dead, incarnation);
        return true;
    }
    uint64_t moves = atomic_load(&s->st.submitted) + atomic_load(&s->st.completed);
    bool active = atomic_load(&s->st.active) && !(atomic_load(&s->st.gate) & XQ_GATE_STALLED);
    bool stalled = atomic_load(&w->stalled) == incarnation;
    if (!active || incarnation != w->incarnation || moves != w->moves) {
        w->incarnation = incarnation;
        w->moves = moves;
        w->since = now;
        if (stalled)
            atomic_store(&w->stalled, 0); /* it moved again: it holds ours back again */
        return stalled;
    }
    if (stalled) {
        *watching = true;
        return false;
    }
    if (now - w->since < watchdog_ns)
        return false;
    atomic_store(&w->stalled, incarnation);
    *watching = true;
    gp_log(GP_LOG_INFO,
           "queue %#llx of process %u (user %u) on %s was active with nothing submitted or "
           "completed for %llu ms: it holds nobody back until it moves again",
           (unsigned long long)s->stream, GP_SLOT_OWNER(owner), (unsigned)t->uid, t->b.path,
           (unsigned long long)(watchdog_ns / 1000000));
    return true;
}

bool tn_look(struct tn_device *td, uint64_t now, uint64_t watchdog_ns, bool *watching)
{
    bool changed = tn_refresh(td, false);
    *watching = false;
    for (unsigned j = 0; j < td->n; j++)
        for (unsigned i = 0; i < gp_board_slots_used(&td->boards[j]->b); i++)
            changed |= look_at(td->boards[j], i, now, watchdog_ns, watching);
    return changed;
}

bool tn_summaries_moved(struct tn_device *td)
{
    bool moved = false;
    for (unsigned j = 0; j < td->n; j++) {
        uint32_t seq = atomic_load(&td->boards[j]->b.f->h.summary_seq);
        moved |= seq != td->boards[j]->summary_seen;
        td->boards[j]->summary_seen = seq;
    }
    return moved;
}

uint32_t tn_wait(struct tn_device *td, struct gp_board *own, uint32_t seen, uint64_t timeout_ns,
                 bool *poked)
{
    *poked = false;
    uint64_t from = gp_now_ns();
#ifdef SYS_futex_waitv
    struct futex_waitv w[1 + TN_MAX_BOARDS];
    unsigned n = 0;
    w[n++] =
        (struct futex_waitv){.val = seen, .uaddr = (uintptr_t)&own->f->h.seq, .flags = FUTEX_32};
    for (unsigned j = 0; j < td->n; j++)
        w[n++] = (struct futex_waitv){.val = td->boards[j]->summary_seen,
                                      .uaddr = (uintptr_t)&td->boards[j]->b.f->h.summary_seq,
                                      .flags = FUTEX_32};
    uint64_t until = from + timeout_ns;
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    long rc = syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC);
    if (rc >= 0 || errno != ENOSYS) {
        uint32_t now_seq = atomic_load(&own->f->h.seq);
        *poked = rc == 0 && now_seq == seen;
        return now_seq;
    }
#endif
    /* No futex_waitv (Linux before 5.16): the others' summaries are looked at every 2 ms. */
    uint64_t step = td->n && timeout_ns > 2000000 ? 2000000 : timeout_ns;
    uint32_t now_seq = gp_board_wait(own, seen, step);
    *poked = now_seq == seen && gp_now_ns() < from + step;
    return now_seq;
}

void tn_foreach_queue(struct tn_device *td,
                      void (*fn)(const struct sched_queue *q, struct xq_state *st, void *arg),
                      void *arg)
{
    for (unsigned j = 0; j < td->n; j++) {
        struct tn_board *t = td->boards[j];
        for (unsigned i = 0; i < gp_board_slots_used(&t->b); i++) {
            struct gp_board_slot *s = &t->b.f->slots[i];
            uint64_t incarnation = atomic_load(&s->incarnation);
            if (GP_SLOT_STATE(atomic_load(&s->owner)) != GP_SLOT_LIVE ||
                atomic_load(&t->slots[i].dead) == incarnation)
                continue;
            int priority = atomic_load(&s->st.priority);
            if (!gp_priority_valid(priority))
                continue; /* not a value any gpuprio writes: ignored rather than obeyed */
            if (t->capped && priority > t->cap)
                priority = t->cap;
            uint64_t gate = atomic_load(&s->st.gate);
            const struct dg_line *line = gp_board_gate(&t->b, s);
            struct sched_queue q = {
                .priority = priority,
                .active = atomic_load(&s->st.active) && !(gate & XQ_GATE_STALLED) &&
                          atomic_load(&t->slots[i].stalled) != incarnation,
                .owed = t->may_be_owed && atomic_load(&line->owed),
                .vtime = atomic_load(&line->vtime),
                .identity = GP_BOARD_QUEUE_IDENTITY(t->uid, i),
                .running = !(gate & XQ_GATE_SUSPENDED),
            };
            fn(&q, &s->st, arg);
        }
    }
}

void tn_close(struct tn_device *td)
{
    for (unsigned j = 0; j < td->n; j++) {
        gp_board_close(&td->boards[j]->b);
        free(td->boards[j]);
    }
    td->n = 0;
}
