/*
 * tenants.c - see tenants.h.
 */
#include "tenants.h"

#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gp_clock.h"
#include "gp_conf_file.h"
#include "gp_log.h"
#include "gp_priority.h"
#include "xqueue.h"

struct listing {
    struct tn_device *td;
    struct tn_board *found[TN_MAX_BOARDS];
    unsigned n;
};

/* A board the screen took (board_screen.h: its name, owner and file checked, within the limits),
 * with what the configuration file sets for its user; NULL when it took none. */
static struct tn_board *open_board(struct tn_device *td, const struct gp_board_entry *e)
{
    struct gp_board b;
    if (gp_screen_take_entry(&td->screen, e, &b) != 0)
        return NULL;
    struct tn_board *t = calloc(1, sizeof *t);
    if (!t || !(t->next = calloc(1, sizeof *t->next))) {
        free(t);
        gp_board_close(&b);
        return NULL;
    }
    memcpy(&t->b, &b, sizeof b);
    t->uid = t->b.uid; /* the file's owner, which its name and header agree with */
    const struct gp_conf *conf = gp_conf_get();
    unsigned line;
    int share;
    t->capped = gp_conf_lookup(conf, GP_CONF_CAP, t->uid, &t->cap, &line) == 0;
    t->may_be_owed = gp_conf_lookup(conf, GP_CONF_SHARE, t->uid, &share, &line) == 0 && share > 0;
    t->summary_seen = atomic_load(&t->b.f->h.summary_seq);
    return t;
}

static void free_board(struct tn_board *t)
{
    gp_board_close(&t->b);
    free(t->next);
    free(t);
}

static int take(const struct gp_board_entry *e, void *arg)
{
    struct listing *l = arg;
    /* The screen's limits keep the boards of one device within TN_MAX_BOARDS. */
    if (l->td->n + l->n >= TN_MAX_BOARDS)
        return 0;
    struct tn_board *t = open_board(l->td, e);
    if (t)
        l->found[l->n++] = t;
    return 0;
}

/* Lists again at most this often when the directory keeps changing (someone keeps replacing
 * files in it): its changes are looked for before each sleep of the listener. */
#define TN_RELIST_NS 20000000ull
/* And at least this often whatever the directory's time says: a file system whose directory
 * times lag (attributes cached over NFS) or a poke lost while the listener was busy must not
 * leave a new user's board unseen for good. Paced like any listing, so it costs little. */
#define TN_SAFETY_RELIST_NS 2000000000ull
/*
 * A listing reads at most TN_LIST_STEP entries of the directory a step (gp_board_cursor_step),
 * and after any step the listener lists nothing for TN_LIST_PAUSE times as long as the step took.
 * So whatever the directory holds (another user's hundreds of thousands of names), the listener
 * is away from its other work (following the others' summaries, its liveness looks) for one
 * step at a time, and lists for at most a quarter of its time: a listing of the whole directory
 * at every look took 170 ms over 10,000 links to one board, and its user's scheduling with the
 * others with it.
 */
#define TN_LIST_STEP 2048u
#define TN_LIST_PAUSE 3u
/* Directories' timestamps come from a clock that moves a tick at a time (1-10 ms): a change
 * within the tick after a listing leaves the time the listing saw. */
#define TN_TIMESTAMP_TICK_NS 20000000ll

static int64_t ts_ns(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Before a listing: the directory's modification time, which a board's appearing changes. */
static void note_listing(struct tn_device *td)
{
    struct stat st;
    struct timespec now;
    td->listed_ns = gp_now_ns();
    if (stat(gp_board_dir(), &st) != 0 || clock_gettime(CLOCK_REALTIME, &now) != 0) {
        /* Nothing to compare with (nor, then, at the next sleep): pokes and looks only. */
        td->dir_mtime = (struct timespec){0, 0};
        td->dir_unsettled = false;
        return;
    }
    int64_t age = ts_ns(now) - ts_ns(st.st_mtim);
    td->dir_mtime = st.st_mtim;
    td->dir_unsettled = age > -TN_TIMESTAMP_TICK_NS && age < TN_TIMESTAMP_TICK_NS;
}

/* Whether the directory may hold a board that the last listing did not see. */
static bool dir_moved(const struct tn_device *td)
{
    struct stat st;
    if (!td->listed_ns)
        return false; /* never listed: not the shared directory */
    if (td->dir_unsettled)
        return true;
    return stat(gp_board_dir(), &st) == 0 && (st.st_mtim.tv_sec != td->dir_mtime.tv_sec ||
                                              st.st_mtim.tv_nsec != td->dir_mtime.tv_nsec);
}

/* When the next listing may start (none in progress): asked for (a poke), at once; for what the
 * directory may hold that the last one did not see (it changed, or a file was left for later),
 * TN_RELIST_NS after the last one started at the earliest; TN_SAFETY_RELIST_NS after it in any
 * case; each once the pause after the last step passed. When its next step may come, for one in
 * progress. UINT64_MAX: none. */
static uint64_t listing_due(const struct tn_device *td, bool moved)
{
    if (td->cursor.d || td->wanted)
        return td->next_ns;
    bool changed = td->skipped || moved;
    if (!changed && !td->listed_ns)
        return UINT64_MAX;
    uint64_t due = td->listed_ns + (changed ? TN_RELIST_NS : TN_SAFETY_RELIST_NS);
    return due > td->next_ns ? due : td->next_ns;
}

/*
 * When a glance at the directory's first names may come, during a listing that began before the
 * directory changed or a poke came: at most every TN_RELIST_NS, after the pause. A new user's
 * board is looked for there at once (tmpfs lists the newest names first) rather than a listing
 * later: the listing in progress may have passed the new name, and over 150,000 names a listing
 * takes 100s of ms, during which the newcomer's queues went unseen.
 */
static uint64_t glance_due(const struct tn_device *td, bool moved)
{
    if (!td->cursor.d || !(td->wanted || moved))
        return UINT64_MAX;
    uint64_t due = td->glanced_ns + TN_RELIST_NS;
    return due > td->next_ns ? due : td->next_ns;
}

/* Starts a listing: false when it cannot (no count to keep the limits by, no directory). */
static bool start_listing(struct tn_device *td, uint64_t now)
{
    struct gp_screen *screen = &td->screen;
    screen->key = td->key;
    screen->skip_own = true;      /* this process's own board is its sched_board.c's */
    screen->admitted_only = true; /* nobody yields to a user the file does not admit */
    note_listing(td);
    td->wanted = false;
    td->glanced_ns = now; /* its first step is a glance */
    gp_screen_begin(screen);
    int rc = 0;
    for (unsigned i = 0; i < td->n && !rc; i++)
        rc = gp_screen_hold(screen, &td->boards[i]->b);
    if (rc || gp_board_cursor_open(&td->cursor, gp_board_dir()) != 0) {
        gp_screen_end(screen, false);
        td->skipped = rc != 0;
        return false;
    }
    return true;
}

/* One step of listing into l, the boards it takes (counted against the limits with those held
 * from earlier, board_screen.h): of the listing in progress, starting one where there is none,
 * or, with glance, of a listing of the directory's first names counted with it. */
static void list_step(struct tn_device *td, struct listing *l, bool glance)
{
    uint64_t from = gp_now_ns();
    int rc = 0;
    if (glance) {
        struct gp_board_cursor first;
        td->glanced_ns = from;
        if (gp_board_cursor_open(&first, gp_board_dir()) == 0 &&
            gp_board_cursor_step(&first, TN_LIST_STEP, take, l) == 0)
            gp_board_cursor_close(&first);
    } else if (td->cursor.d || start_listing(td, from)) {
        rc = gp_board_cursor_step(&td->cursor, TN_LIST_STEP, take, l);
    }
    uint64_t now = gp_now_ns();
    td->next_ns = now + TN_LIST_PAUSE * (now - from);
    if (rc == 0)
        return; /* a glance, more of the directory at the next step, or no listing */
    gp_screen_end(&td->screen, rc == 1);
    td->skipped = rc != 1 || td->screen.skipped;
    td->pokes = false;
}

/* Wakes that changed nothing, per word and window, before the word is looked at instead of waited
 * on for a window (struct tn_wakes); and how often such a word is looked at. */
#define TN_WAKE_WINDOW_NS 100000000ull
#define TN_IDLE_WAKES_MAX 8u
#define TN_MUTED_POLL_NS 2000000ull
/* Late wakes a word is allowed, at most: changes seen count up to this. */
#define TN_LATE_MAX 64u

/* n changes of a word seen (each sent one wake, which may come after we saw it). */
static void changes_seen(struct tn_wakes *w, uint32_t n)
{
    w->late = n >= TN_LATE_MAX - w->late ? TN_LATE_MAX : w->late + n;
}

static bool muted(const struct tn_wakes *w, uint64_t now)
{
    return now < w->muted_until;
}

/* A wake that found its word as it was: counted, unless a change already seen may have sent it
 * late. */
static void idle_wake(struct tn_wakes *w, uint64_t now)
{
    if (w->late) {
        w->late--;
        return;
    }
    if (now - w->window_ns >= TN_WAKE_WINDOW_NS) {
        w->window_ns = now;
        w->idle = 0;
    }
    if (++w->idle > TN_IDLE_WAKES_MAX) {
        w->muted_until = now + TN_WAKE_WINDOW_NS;
        w->window_ns = w->muted_until;
        w->idle = 0;
    }
}

/* Reads every board again (and, with list, looks for new ones and removed ones in the
 * directory): the boards whose file is removed or no longer a board are dropped. The copies are
 * read outside the scheduling lock and put in place under it. True when the set changed; into
 * *moved, whether a board's summary moved since the last call (and takes note). */
static bool update(struct tn_device *td, bool list, bool *moved)
{
    struct listing l = {.td = td};
    *moved = false;
    bool poke = td->pokes; /* of those it finds: the listing began with this process's joining */
    if (list) {
        uint64_t now = gp_now_ns();
        bool dir = dir_moved(td), glance = now >= glance_due(td, dir);
        list = glance || now >= listing_due(td, dir);
        if (list)
            list_step(td, &l, glance);
    }
    /* Only this thread changes the set or the copies in place, so what it reads here is still
     * where it was found once the lock is held. */
    bool read[TN_MAX_BOARDS], linked[TN_MAX_BOARDS];
    const char *why[TN_MAX_BOARDS];
    for (unsigned i = 0; i < td->n; i++) {
        struct tn_board *t = td->boards[i];
        linked[i] = !list || gp_board_linked(&t->b);
        read[i] = linked[i] && gp_board_read(&t->b, t->next, &why[i]) == 0;
    }
    struct tn_board *gone[TN_MAX_BOARDS];
    const char *gone_why[TN_MAX_BOARDS]; /* NULL: removed */
    unsigned n_gone = 0, kept = 0;
    xq_sched_lock();
    for (unsigned i = 0; i < td->n; i++) {
        struct tn_board *t = td->boards[i];
        if (read[i]) {
            struct gp_board_file *f = t->b.f;
            t->b.f = t->next;
            t->next = f;
            td->boards[kept++] = t;
        } else {
            gone_why[n_gone] = linked[i] ? why[i] : NULL;
            gone[n_gone++] = t;
        }
    }
    td->n = kept;
    for (unsigned i = 0; i < l.n; i++)
        td->boards[td->n++] = l.found[i];
    xq_sched_unlock();
    for (unsigned i = 0; i < n_gone; i++) {
        struct tn_board *t = gone[i];
        if (gone_why[i])
            gp_screen_drop(&td->screen, &t->b, gone_why[i]);
        free_board(t);
    }
    for (unsigned i = 0; i < td->n; i++) {
        uint32_t seq = atomic_load(&td->boards[i]->b.f->h.summary_seq);
        *moved |= seq != td->boards[i]->summary_seen;
        changes_seen(&td->boards[i]->wakes, seq - td->boards[i]->summary_seen);
        td->boards[i]->summary_seen = seq;
    }
    for (unsigned i = 0; poke && i < l.n; i++)
        gp_board_poke(&l.found[i]->b);
    return l.n || n_gone;
}

bool tn_refresh(struct tn_device *td, bool poke)
{
    if (!gp_board_shared())
        return false;
    td->wanted |= poke;
    td->pokes |= poke;
    bool moved = false, changed = update(td, true, &moved);
    return changed || moved; /* a summary move seen here is not seen again */
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
    /* No listing here: the listener lists whenever the directory changed, or a poke asked
     * (tn_wait), and a listing at every look cost a flooded directory's size every 20 ms. */
    bool changed = false;
    *watching = false;
    for (unsigned j = 0; j < td->n; j++)
        for (unsigned i = 0; i < gp_board_slots_used(&td->boards[j]->b); i++)
            changed |= look_at(td->boards[j], i, now, watchdog_ns, watching);
    return changed;
}

bool tn_summaries_moved(struct tn_device *td)
{
    bool moved;
    if (!td->n)
        return false;
    bool changed = update(td, false, &moved);
    return changed || moved;
}

/* Whether t's summary word moved since we last decided on it, read from the file (one word; never
 * through the mapping, which its owner can truncate). A board that cannot be read counts as moved:
 * reading it again drops it. */
static bool summary_moved(const struct tn_board *t)
{
    uint32_t seq;
    ssize_t n =
        pread(t->b.fd, &seq, sizeof seq, (off_t)offsetof(struct gp_board_header, summary_seq));
    return n != (ssize_t)sizeof seq || seq != t->summary_seen;
}

/* tn_wait's sleep, from `from` for at most timeout_ns. */
static uint32_t sleep_on(struct tn_device *td, struct gp_board *own, uint32_t seen,
                         uint64_t timeout_ns, uint64_t from, bool *poked)
{
    uint64_t until = from + timeout_ns;
#ifdef SYS_futex_waitv
    for (;;) {
        uint64_t now = gp_now_ns();
        struct futex_waitv w[1 + TN_MAX_BOARDS];
        int whose[1 + TN_MAX_BOARDS]; /* -1: our own board's sequence word; else the board's */
        unsigned n = 0;
        bool looking = false; /* a word is looked at, not waited on */
        if (!muted(&td->own_wakes, now)) {
            whose[n] = -1;
            w[n++] = (struct futex_waitv){
                .val = seen, .uaddr = (uintptr_t)&own->f->h.seq, .flags = FUTEX_32};
        } else {
            looking = true;
        }
        for (unsigned j = 0; j < td->n; j++) {
            if (muted(&td->boards[j]->wakes, now)) {
                looking = true;
                continue;
            }
            whose[n] = (int)j;
            w[n++] = (struct futex_waitv){.val = td->boards[j]->summary_seen,
                                          .uaddr = (uintptr_t)&td->boards[j]->b.live->summary_seq,
                                          .flags = FUTEX_32};
        }
        uint64_t wake = looking && now + TN_MUTED_POLL_NS < until ? now + TN_MUTED_POLL_NS : until;
        struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        long rc = -1;
        if (n) {
            rc = syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC);
        } else {
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
            errno = ETIMEDOUT;
        }
        /* EFAULT: a board's owner truncated its page away. The copies, read again, drop it; until
         * then, polled like a kernel without futex_waitv, so that it cannot make us spin. */
        if (rc < 0 && (errno == ENOSYS || errno == EFAULT))
            break;
        uint32_t now_seq = atomic_load(&own->f->h.seq);
        now = gp_now_ns();
        if (now_seq != seen) {
            changes_seen(&td->own_wakes, now_seq - seen);
            return now_seq; /* ours moved: looked at by the caller */
        }
        if (rc < 0 && errno == EAGAIN)
            return now_seq; /* a word had moved before the wait: looked at by the caller */
        if (rc >= 0 && whose[rc] < 0) {
            if (td->own_wakes.late) { /* a change we saw sent it late */
                td->own_wakes.late--;
                continue;
            }
            idle_wake(&td->own_wakes, now);
            *poked = true; /* ours as it was: another process asks for a listing */
            return now_seq;
        }
        if (rc >= 0) {
            struct tn_board *t = td->boards[whose[rc]];
            if (summary_moved(t))
                return now_seq;
            idle_wake(&t->wakes, now); /* a wake that changed nothing: sleep on */
        }
        for (unsigned j = 0; j < td->n; j++)
            if (muted(&td->boards[j]->wakes, now) && summary_moved(td->boards[j]))
                return now_seq;
        if (now >= until)
            return now_seq;
    }
#endif
    /* No futex_waitv (Linux before 5.16): the others' summaries are looked at every 2 ms. */
    uint64_t now = gp_now_ns(), left = until > now ? until - now : 0;
    bool own_muted = muted(&td->own_wakes, now);
    uint64_t step = (td->n || own_muted) && left > TN_MUTED_POLL_NS ? TN_MUTED_POLL_NS : left;
    if (own_muted) { /* our own word looked at, not waited on */
        struct timespec ts = {(time_t)(step / 1000000000u), (long)(step % 1000000000u)};
        nanosleep(&ts, NULL);
        return atomic_load(&own->f->h.seq);
    }
    uint32_t now_seq = gp_board_wait(own, seen, step);
    *poked = now_seq == seen && gp_now_ns() < now + step;
    if (*poked)
        idle_wake(&td->own_wakes, gp_now_ns());
    else if (now_seq != seen)
        changes_seen(&td->own_wakes, now_seq - seen);
    return now_seq;
}

uint32_t tn_wait(struct tn_device *td, struct gp_board *own, uint32_t seen, uint64_t timeout_ns,
                 bool *poked)
{
    *poked = false;
    uint64_t from = gp_now_ns();
    /* A board that appeared while we were awake may have poked nobody: the directory is listed
     * again once it changed, when its listing is due (the sleep ends then), as is a listing's
     * next step. */
    bool dir = dir_moved(td);
    uint64_t due = listing_due(td, dir), glance = glance_due(td, dir);
    due = glance < due ? glance : due;
    if (due != UINT64_MAX) {
        if (from >= due) {
            *poked = true;
            return atomic_load(&own->f->h.seq);
        }
        timeout_ns = due - from < timeout_ns ? due - from : timeout_ns;
    }
    uint32_t now_seq = sleep_on(td, own, seen, timeout_ns, from, poked);
    /* A poke asks for a listing, which comes when it is due (at once, but after the pause that
     * the last step of listing earned: a user poking all the time costs us a quarter of our
     * time at most). */
    td->wanted |= *poked && gp_board_shared();
    *poked |= gp_now_ns() >= due;
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
    for (unsigned j = 0; j < td->n; j++)
        free_board(td->boards[j]);
    td->n = 0;
    gp_board_cursor_close(&td->cursor);
    gp_screen_free(&td->screen);
}
