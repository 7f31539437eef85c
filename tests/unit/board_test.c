/*
 * board_test.c - the board file (src/sched/board.c) without any runtime: its layout, pinned
 * field by field (a change is a new GP_BOARD_VERSION); creating, opening and refusing files;
 * slots and process records, owners alive and dead; the decision lock with a dead, an exec'd
 * and a stuck holder, and between threads of one process; priority requests, to queues' slots
 * and to records; waking on the sequence word; listing boards; which files of the directory a
 * reader takes for other users' boards (board_screen.h): names, owners, links, the limits, what it
 * says, a file swapped after the look at its name.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "board_screen.h"
#include "check.h"
#include "gp_options.h"

static char dir[64];

static void layout(void)
{
    CHECK_INT(sizeof(struct gp_board_header), 256);
    CHECK_INT(offsetof(struct gp_board_header, magic), 0);
    CHECK_INT(offsetof(struct gp_board_header, version), 8);
    CHECK_INT(offsetof(struct gp_board_header, header_size), 12);
    CHECK_INT(offsetof(struct gp_board_header, slot_size), 16);
    CHECK_INT(offsetof(struct gp_board_header, slot_count), 20);
    CHECK_INT(offsetof(struct gp_board_header, uid), 24);
    CHECK_INT(offsetof(struct gp_board_header, key), 32);
    CHECK_INT(offsetof(struct gp_board_header, seq), 96);
    CHECK_INT(offsetof(struct gp_board_header, lock_wake), 100);
    CHECK_INT(offsetof(struct gp_board_header, lock), 104);
    CHECK_INT(offsetof(struct gp_board_header, lock_sleepers), 112);
    CHECK_INT(offsetof(struct gp_board_header, slot_limit), 116);
    CHECK_INT(offsetof(struct gp_board_header, summary), 120);
    CHECK_INT(offsetof(struct gp_board_header, summary_seq), 128);
    CHECK_INT(sizeof(struct gp_board_slot), 136);
    CHECK_INT(offsetof(struct gp_board_slot, owner), 0);
    CHECK_INT(offsetof(struct gp_board_slot, owner_start), 8);
    CHECK_INT(offsetof(struct gp_board_slot, incarnation), 16);
    CHECK_INT(offsetof(struct gp_board_slot, stream), 24);
    CHECK_INT(offsetof(struct gp_board_slot, thread), 32);
    CHECK_INT(offsetof(struct gp_board_slot, device), 40);
    CHECK_INT(offsetof(struct gp_board_slot, flags), 44);
    CHECK_INT(offsetof(struct gp_board_slot, comm), 48);
    CHECK_INT(offsetof(struct gp_board_slot, request), 64);
    CHECK_INT(offsetof(struct gp_board_slot, request_seq), 68);
    CHECK_INT(offsetof(struct gp_board_slot, st), 72);
    CHECK_INT(offsetof(struct gp_board_slot, st.gate), 72);
    CHECK_INT(offsetof(struct gp_board_slot, st.priority), 80);
    CHECK_INT(offsetof(struct gp_board_slot, st.active), 84);
    CHECK_INT(offsetof(struct gp_board_slot, st.submitted), 88);
    CHECK_INT(offsetof(struct gp_board_slot, st.completed), 96);
    CHECK_INT(offsetof(struct gp_board_slot, st.held_ns), 104);
    CHECK_INT(offsetof(struct gp_board_slot, st.suspensions), 112);
    /* In a record, over st's counters. */
    CHECK_INT(offsetof(struct gp_board_slot, gemm.sliced), 88);
    CHECK_INT(offsetof(struct gp_board_slot, gemm.slices), 96);
    CHECK_INT(offsetof(struct gp_board_slot, gemm.whole[GP_RECORD_GEMM_SMALL]), 104);
    CHECK_INT(offsetof(struct gp_board_slot, gemm.whole[GP_RECORD_GEMM_CAPTURING]), 108);
    CHECK_INT(offsetof(struct gp_board_slot, gemm.whole[GP_RECORD_GEMM_UNSUPPORTED]), 112);
    CHECK_INT(offsetof(struct gp_board_slot, gemm.whole[GP_RECORD_GEMM_CHECK_FAILED]), 116);
    CHECK_INT(offsetof(struct gp_board_slot, pid_ns), 120);
    CHECK_INT(offsetof(struct gp_board_slot, unused_queues), 124);
    CHECK_INT(offsetof(struct gp_board_slot, longest_us), 124);
    CHECK_INT(offsetof(struct gp_board_slot, cu_usable), 128);
    CHECK_INT(offsetof(struct gp_board_slot, cu_total), 130);
    CHECK_INT(offsetof(struct gp_board_slot, cu_mask), 132);
    CHECK_INT(offsetof(struct gp_board_slot, mps), 133);
    CHECK_INT(offsetof(struct gp_board_slot, mps_share), 134);
    CHECK_INT(offsetof(struct gp_board_slot, liveness_lock), 135);
    CHECK_INT(offsetof(struct gp_board_file, gates), 73728); /* a page of its own */
    CHECK_INT(sizeof(struct dg_line), 64);
    CHECK_INT(offsetof(struct dg_line, word), 0);
    CHECK_INT(offsetof(struct dg_line, vtime), 8);
    CHECK_INT(offsetof(struct dg_line, owed), 16);
    CHECK_INT(offsetof(struct dg_line, mirrored), 20); /* reserved before mirrored gates */
    /* Reserved before GPUPRIO_LOG=info said who suspended a queue (docs/board.md). */
    CHECK_INT(offsetof(struct dg_line, suspended_by), 24);
    CHECK_INT(offsetof(struct dg_line, suspended_by_ns), 28);
    /* Where tell_suspended was (reserved again, 0), and reserved before suspended_at. */
    CHECK_INT(offsetof(struct dg_line, reserved_32), 32);
    CHECK_INT(offsetof(struct dg_line, suspended_at), 36);
    CHECK_INT(offsetof(struct dg_line, copy_fd), 40); /* reserved before the deciders' copies */
    CHECK_INT(offsetof(struct dg_line, reserved), 44);
    CHECK_INT(sizeof(struct gp_board_file), 73728 + 64 * GP_BOARD_SLOTS);
}

static void create_and_share(void)
{
    struct gp_board a, b;
    const char *why = NULL;
    CHECK_INT(gp_board_open("0000:c1:00.0", &a, &why), 0);
    CHECK_INT(gp_board_open("0000:c1:00.0", &b, &why), 0);
    char want[256];
    snprintf(want, sizeof want, "%s/gpuprio-%u-v%u-0000_c1_00.0", dir, (unsigned)geteuid(),
             GP_BOARD_VERSION);
    CHECK(strcmp(a.path, want) == 0);
    struct stat st;
    CHECK(stat(a.path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == geteuid());
    CHECK(strcmp(a.f->h.key, "0000:c1:00.0") == 0);
    CHECK_INT(a.f->h.version, GP_BOARD_VERSION);

    CHECK_INT(gp_board_slots_used(&a), 0);
    struct gp_board_slot *s = gp_board_claim(&a);
    CHECK(s != NULL);
    CHECK_INT(GP_SLOT_STATE(atomic_load(&s->owner)), GP_SLOT_CLAIMED);
    /* Scans stop after the highest slot ever claimed; a bad limit is bounded by the size. */
    CHECK_INT(gp_board_slots_used(&b), (s - a.f->slots) + 1);
    atomic_store(&a.f->h.slot_limit, 99999);
    CHECK_INT(gp_board_slots_used(&b), GP_BOARD_SLOTS);
    atomic_store(&a.f->h.slot_limit, (uint32_t)(s - a.f->slots) + 1);
    s->stream = 0x1234;
    gp_board_publish(&a, s);
    /* The other mapping sees the same slot, live and owned by this process. */
    struct gp_board_slot *t = &b.f->slots[s - a.f->slots];
    CHECK_INT(GP_SLOT_STATE(atomic_load(&t->owner)), GP_SLOT_LIVE);
    CHECK_INT(GP_SLOT_OWNER(atomic_load(&t->owner)), getpid());
    CHECK_INT(t->stream, 0x1234);
    CHECK(gp_board_owner_alive(&b, t));

    /* Priority requests reach the owner's slot; a pid with no slot is -ESRCH. */
    uint32_t seq = atomic_load(&t->request_seq);
    CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), false, 0, 10), 1);
    CHECK_INT(atomic_load(&s->request), 10);
    CHECK(atomic_load(&s->request_seq) != seq);
    CHECK(atomic_load(&s->request_seq) & GP_REQUEST_PROCESS);
    CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), true, 0x1234, -10), 1);
    CHECK(!(atomic_load(&s->request_seq) & GP_REQUEST_PROCESS));
    CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), true, 0x9999, -10), -ESRCH);
    CHECK_INT(gp_board_request(&b, 999999999u, false, 0, 10), -ESRCH);

    /* The process's record: published as such, judged alive like a queue's slot. A request for
     * the whole process reaches it too, and counts the unused queues it stands for; one for a
     * stream never does, not even for stream 0 (the null stream's handle, and a record's). */
    struct gp_board_slot *r = gp_board_claim(&a);
    CHECK(r != NULL);
    if (r) {
        atomic_store(&r->unused_queues, 7);
        gp_board_publish_record(&a, r);
        struct gp_board_slot *rb = &b.f->slots[r - a.f->slots];
        CHECK_INT(GP_SLOT_STATE(atomic_load(&rb->owner)), GP_SLOT_PROCESS);
        CHECK(GP_SLOT_PUBLISHED(atomic_load(&rb->owner)));
        CHECK(!GP_SLOT_PUBLISHED(atomic_load(&a.f->slots[GP_BOARD_SLOTS - 1].owner)));
        CHECK(gp_board_owner_alive(&b, rb));
        CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), false, 0, 20), 1 + 7);
        CHECK_INT(atomic_load(&r->request), 20);
        CHECK(atomic_load(&r->request_seq) & GP_REQUEST_PROCESS);
        uint32_t record_seq = atomic_load(&r->request_seq);
        CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), true, 0, 5), -ESRCH);
        CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), true, 0x1234, 5), 1);
        CHECK_INT(atomic_load(&r->request_seq), record_seq);
        CHECK_INT(atomic_load(&r->request), 20);
        /* A record is all the process has here: reached, with its unused queues. */
        gp_board_free(&a, s);
        CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), false, 0, 10), 7);
        atomic_store(&r->unused_queues, 0);
        CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), false, 0, 10), 0);
        /* Freed, it is a free slot like any other: its count goes with it. */
        atomic_store(&r->unused_queues, 3);
        gp_board_free(&a, r);
        CHECK_INT(atomic_load(&rb->owner), 0);
        CHECK_INT(atomic_load(&rb->unused_queues), 0);
        CHECK_INT(gp_board_request(&b, (uint32_t)getpid(), false, 0, 10), -ESRCH);
    }

    gp_board_free(&a, s); /* freed already when the record was tested: nothing happens */
    CHECK_INT(atomic_load(&t->owner), 0);
    gp_board_close(&a);
    gp_board_close(&b);
}

/* In the child of fork, as the shim does there: this image's identity again, the board opened
 * again (its own file, and its own liveness locks), and a slot claimed. NULL when it cannot. */
static struct gp_board_slot *claim_as_child(const char *key, struct gp_board *own)
{
    const char *why;
    gp_board_self_reset();
    return gp_board_open(key, own, &why) == 0 ? gp_board_claim(own) : NULL;
}

static void dead_owners(void)
{
    struct gp_board b;
    const char *why;
    CHECK_INT(gp_board_open("dead", &b, &why), 0);
    pid_t child = fork();
    if (child == 0) {
        struct gp_board own;
        struct gp_board_slot *s = claim_as_child("dead", &own);
        if (s)
            gp_board_publish(&own, s);
        const struct gp_board_owner *me = gp_board_self();
        atomic_store(&b.f->h.lock, GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation)); /* dies in it */
        _exit(s && s->liveness_lock ? 0 : 1);
    }
    int status;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct gp_board_slot *dead = NULL;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++)
        if (GP_SLOT_OWNER(atomic_load(&b.f->slots[i].owner)) == (uint32_t)child)
            dead = &b.f->slots[i];
    CHECK(dead != NULL);
    if (dead) {
        CHECK(!gp_board_owner_alive(&b, dead));
        gp_board_free(&b, dead); /* reclaimed by whoever noticed */
        CHECK_INT(atomic_load(&dead->owner), 0);
    }
    /* The dead holder's lock is taken over. */
    const struct gp_board_owner *me = gp_board_self();
    const uint64_t mine = GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation);
    CHECK_INT(gp_board_lock(&b), 0);
    CHECK_INT(atomic_load(&b.f->h.lock), mine);
    gp_board_unlock(&b);
    CHECK_INT(atomic_load(&b.f->h.lock), 0);
    /* So is the lock of this pid's earlier image (held when the process exec'd). */
    atomic_store(&b.f->h.lock, GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation + 2));
    CHECK_INT(gp_board_lock(&b), 0);
    CHECK_INT(atomic_load(&b.f->h.lock), mine);
    gp_board_unlock(&b);

    /* A live process with another start time is not the owner (its pid was reused): pid 1
     * started long before this process. */
    struct gp_board_slot *s = gp_board_claim(&b);
    CHECK(s != NULL);
    if (s) {
        gp_board_publish(&b, s);
        atomic_store(&s->owner, (uint64_t)1 << 32 | GP_SLOT_LIVE);
        s->incarnation = 1;
        s->liveness_lock = 0; /* judged by pid, as a library before the locks wrote it */
        CHECK(!gp_board_owner_alive(&b, s));
        gp_board_free(&b, s);
    }
    /* A live process holding the lock too long: the board is given up, not waited for; a look a
     * second later (and not before) takes it back once the holder let go, and one that finds it
     * still held keeps it given up. */
    atomic_store(&b.f->h.lock, GP_BOARD_LOCK_HOLDER(getppid(), 1));
    CHECK_INT(gp_board_lock(&b), -ETIMEDOUT);
    CHECK(gp_board_given_up(&b));
    CHECK_INT(gp_board_lock(&b), -ETIMEDOUT);
    struct timespec retry = {1, 100000000};
    nanosleep(&retry, NULL);
    CHECK_INT(gp_board_lock(&b), -ETIMEDOUT); /* the look: still held */
    CHECK(gp_board_given_up(&b));
    atomic_store(&b.f->h.lock, 0);
    CHECK_INT(gp_board_lock(&b), -ETIMEDOUT); /* free now, but the next look is a second away */
    nanosleep(&retry, NULL);
    CHECK_INT(gp_board_lock(&b), 0);
    CHECK(!gp_board_given_up(&b));
    CHECK_INT(atomic_load(&b.f->h.lock), mine);
    gp_board_unlock(&b);
    CHECK_INT(gp_board_lock(&b), 0); /* and it waits for holders again, as before */
    gp_board_unlock(&b);
    gp_board_close(&b);
}

/* A claimed slot of pid as a claimer left it right after its claim: its identity (the pid
 * namespace included) not written yet, and no lock taken. */
static struct gp_board_slot *forge_claim(struct gp_board *b, uint32_t pid)
{
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++) {
        struct gp_board_slot *s = &b->f->slots[i];
        if (atomic_load(&s->owner))
            continue;
        if (atomic_load(&b->f->h.slot_limit) < i + 1)
            atomic_store(&b->f->h.slot_limit, i + 1);
        s->pid_ns = 0;
        s->owner_start = s->incarnation = 0;
        atomic_store(&s->liveness_lock, 0);
        atomic_store(&s->owner, (uint64_t)pid << 32 | GP_SLOT_CLAIMED);
        return s;
    }
    return NULL;
}

/*
 * A slot claimed and not yet published has no identity of its own yet, so its claimer is judged by
 * the slot's liveness lock, by its pid, and by how long the slot has stayed claimed. One killed
 * right after its claim is gone once the slot stayed claimed, unlocked, for GP_BOARD_CLAIM_MAX_NS
 * (judged by its pid alone it was alive for ever: its namespace was not written); so is one whose
 * pid runs again (reused); one whose pid no longer runs in the namespace the slot names is gone at
 * once, a zombie included (killed, not reaped: kill(pid, 0) still succeeds); one that holds its
 * claim is alive however long it has been claimed.
 */
static void dead_claimers(void)
{
    struct gp_board b;
    const char *why;
    CHECK_INT(gp_board_open("claim", &b, &why), 0);
    pid_t ended = fork();
    if (ended == 0)
        _exit(0);
    waitpid(ended, NULL, 0);
    struct gp_board_slot *s = forge_claim(&b, (uint32_t)ended);
    CHECK(s != NULL);
    if (s) {
        CHECK(!gp_board_claimer_gone(&b, s, 0));
        CHECK(!gp_board_claimer_gone(&b, s, GP_BOARD_CLAIM_MAX_NS - 1));
        CHECK(gp_board_claimer_gone(&b, s, GP_BOARD_CLAIM_MAX_NS));
        s->pid_ns = gp_board_self()->pid_ns; /* written: the vanished pid tells at once */
        CHECK(gp_board_claimer_gone(&b, s, 0));
        gp_board_free(&b, s);
        CHECK_INT(atomic_load(&s->owner), 0);
    }
    /* A pid that runs (our parent's, as if reused) tells nothing against the time. */
    s = forge_claim(&b, (uint32_t)getppid());
    CHECK(s != NULL);
    if (s) {
        s->pid_ns = gp_board_self()->pid_ns;
        CHECK(!gp_board_claimer_gone(&b, s, 0));
        CHECK(gp_board_claimer_gone(&b, s, GP_BOARD_CLAIM_MAX_NS));
        gp_board_free(&b, s);
    }
    int ready[2];
    CHECK_INT(pipe(ready), 0);
    pid_t claimer = fork();
    if (claimer == 0) {
        struct gp_board own;
        struct gp_board_slot *c = claim_as_child("claim", &own);
        char locked = c && atomic_load(&c->liveness_lock);
        if (write(ready[1], &locked, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char locked = 0;
    CHECK(read(ready[0], &locked, 1) == 1 && locked);
    s = NULL;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++)
        if (atomic_load(&b.f->slots[i].owner) == ((uint64_t)claimer << 32 | GP_SLOT_CLAIMED))
            s = &b.f->slots[i];
    CHECK(s != NULL);
    if (s) {
        CHECK(!gp_board_claimer_gone(&b, s, 10 * GP_BOARD_CLAIM_MAX_NS));
        kill(claimer, SIGKILL);
        siginfo_t info;
        CHECK_INT(waitid(P_PID, (id_t)claimer, &info, WEXITED | WNOWAIT), 0); /* a zombie now */
        CHECK_INT(kill(claimer, 0), 0);
        CHECK(gp_board_claimer_gone(&b, s, 0));
        gp_board_free(&b, s);
    }
    waitpid(claimer, NULL, 0);
    close(ready[0]);
    close(ready[1]);
    gp_board_close(&b);
}

/*
 * A process of another pid namespace (a container sharing the board directory) is judged by its
 * slot's liveness lock, not by its pid, which may be ours (every container's first process is
 * pid 1): alive while it runs, its lock not taken over even though its pid is this process's;
 * dead once killed, and its lock then taken over. A slot without the lock (a library before it)
 * stays alive from another namespace, as before.
 */
static void other_namespace(void)
{
    struct gp_board b;
    const char *why;
    CHECK_INT(gp_board_open("namespace", &b, &why), 0);
    uint32_t parent = (uint32_t)getpid();
    int ready[2];
    CHECK_INT(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        struct gp_board own;
        struct gp_board_slot *s = claim_as_child("namespace", &own);
        if (!s || !s->liveness_lock)
            _exit(1);
        atomic_store(&s->pid_ns, gp_board_self()->pid_ns + 1);
        atomic_store(&s->owner, (uint64_t)parent << 32 | GP_SLOT_LIVE); /* its pid there is ours */
        atomic_store(&own.f->h.lock, GP_BOARD_LOCK_HOLDER(parent, s->incarnation));
        (void)!write(ready[1], "r", 1);
        pause();
        _exit(0);
    }
    char c;
    CHECK_INT(read(ready[0], &c, 1), 1);
    struct gp_board_slot *theirs = NULL;
    for (unsigned i = 0; i < gp_board_slots_used(&b); i++)
        if (b.f->slots[i].incarnation != gp_board_self()->incarnation &&
            GP_SLOT_OWNER(atomic_load(&b.f->slots[i].owner)) == parent)
            theirs = &b.f->slots[i];
    if (!CHECK(theirs != NULL)) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        gp_board_close(&b);
        return;
    }
    CHECK(gp_board_owner_alive(&b, theirs));
    CHECK_INT(gp_board_lock(&b), -ETIMEDOUT); /* a live holder: waited for, then given up */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK(!gp_board_owner_alive(&b, theirs));
    struct timespec retry = {1, 100000000};
    nanosleep(&retry, NULL);
    const struct gp_board_owner *me = gp_board_self();
    CHECK_INT(gp_board_lock(&b), 0); /* the dead holder's lock is taken over */
    CHECK_INT(atomic_load(&b.f->h.lock), GP_BOARD_LOCK_HOLDER(me->pid, me->incarnation));
    gp_board_unlock(&b);
    theirs->liveness_lock = 0;
    CHECK(gp_board_owner_alive(&b, theirs));
    gp_board_free(&b, theirs);
    CHECK_INT(atomic_load(&theirs->owner), 0);
    close(ready[0]);
    close(ready[1]);
    gp_board_close(&b);
}

/* Takes (type F_RDLCK) or drops (F_UNLCK) a lock on slot s's liveness byte through fd, another
 * open file description of b's file, as any reader of the file can; 0 or -errno. */
static int lock_byte(int fd, const struct gp_board *b, const struct gp_board_slot *s, short type)
{
    struct flock l = {.l_type = type,
                      .l_whence = SEEK_SET,
                      .l_start = (off_t)((const char *)s - (const char *)b->f),
                      .l_len = 1};
    return fcntl(fd, F_OFD_SETLK, &l) == 0 ? 0 : -errno;
}

/* How a claimer child leaves its slot (claimer()). */
enum claimer_as {
    AS_CLAIMED,   /* claimed, as this library does, and published */
    AS_READ_LOCK, /* the same, then as a library before write locks: a read lock, liveness 1 */
};

/*
 * A child that claims a slot of board key (published as its pid's), as `as` says, with its pid
 * namespace said to be another (other_ns: its pid cannot tell), and then waits to be killed; its
 * slot on b, NULL when it failed. *child: its pid.
 */
static struct gp_board_slot *claimer(const char *key, struct gp_board *b, enum claimer_as as,
                                     bool other_ns, pid_t *child)
{
    int ready[2];
    if (!CHECK_INT(pipe(ready), 0))
        return NULL;
    *child = fork();
    if (*child == 0) {
        struct gp_board own;
        struct gp_board_slot *s = claim_as_child(key, &own);
        if (s && as == AS_READ_LOCK) {
            struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1};
            l.l_start = (off_t)((char *)s - (char *)own.f);
            if (fcntl(own.fd, F_OFD_SETLK, &l) != 0) /* converts its write lock */
                s = NULL;
            else
                atomic_store(&s->liveness_lock, GP_LIVENESS_READ_LOCK);
        }
        if (s && other_ns)
            atomic_store(&s->pid_ns, gp_board_self()->pid_ns + 1);
        if (s)
            gp_board_publish(&own, s);
        char said = s ? (char)atomic_load(&s->liveness_lock) : -1;
        (void)!write(ready[1], &said, 1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char said = -1;
    CHECK_INT(read(ready[0], &said, 1), 1);
    close(ready[0]);
    for (unsigned i = 0; i < gp_board_slots_used(b); i++)
        if (said >= 0 &&
            atomic_load(&b->f->slots[i].owner) == ((uint64_t)*child << 32 | GP_SLOT_LIVE))
            return &b->f->slots[i];
    return NULL;
}

static void end_child(pid_t child)
{
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

/*
 * Only the board's writers can prove an owner alive: a claimer takes a write lock (liveness 2),
 * and read locks, which any reader of the file can take and keep (a hostile neighbour, on a
 * board of mode 0644), prove nothing of such a slot. The owners here say they are of another pid
 * namespace, so that their pids cannot tell. A write-lock slot is alive while its owner runs,
 * on the board and on a copy (probed through a read-only descriptor), and dead once the owner is
 * killed although a reader then holds a read lock on it (before: alive for ever). A slot of a
 * library before write locks (liveness 1, a read lock) is judged as that library did: alive while
 * its owner runs, dead once it is killed. A value the library does not know is no lock: judged by
 * pid, and never alive on a copy from another namespace, whatever lock is held. Claims where a
 * reader holds read locks on every slot's byte: the write lock refused, the slot says no lock
 * (judged by pid and start time), alive while its owner runs and dead once it is killed; a claimed
 * slot, its claimer gone from this namespace, is gone whatever the reader holds (before: a read
 * lock kept it for ever), and one whose pid cannot tell is gone after GP_BOARD_CLAIM_MAX_NS.
 */
static void liveness_values(void)
{
    struct gp_board b, c;
    const char *why;
    CHECK_INT(gp_board_open("values", &b, &why), 0);
    int reader = open(b.path, O_RDONLY | O_CLOEXEC);
    CHECK(reader >= 0);

    pid_t child;
    struct gp_board_slot *s = claimer("values", &b, AS_CLAIMED, true, &child);
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(atomic_load(&s->liveness_lock), GP_LIVENESS_WRITE_LOCK);
        CHECK(gp_board_owner_alive(&b, s));
        CHECK_INT(lock_byte(reader, &b, s, F_RDLCK), -EAGAIN); /* nobody shares a write lock */
        CHECK_INT(gp_board_open_copy(b.path, &c, &why), 0);
        struct gp_board_slot *copied = &c.f->slots[s - b.f->slots];
        CHECK(gp_board_owner_alive(&c, copied));
        atomic_store(&copied->liveness_lock, 7); /* unknown: no lock, and another namespace's */
        CHECK(!gp_board_owner_alive(&c, copied));
        gp_board_close(&c);
        atomic_store(&s->liveness_lock, 7); /* on its own board, another namespace's is kept */
        CHECK(gp_board_owner_alive(&b, s));
        atomic_store(&s->liveness_lock, GP_LIVENESS_WRITE_LOCK);
        end_child(child);
        CHECK_INT(lock_byte(reader, &b, s, F_RDLCK), 0); /* the neighbour's, once it can */
        CHECK(!gp_board_owner_alive(&b, s));
        gp_board_free(&b, s);
        CHECK_INT(lock_byte(reader, &b, s, F_UNLCK), 0);
    }

    s = claimer("values", &b, AS_READ_LOCK, true, &child);
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(atomic_load(&s->liveness_lock), GP_LIVENESS_READ_LOCK);
        CHECK(gp_board_owner_alive(&b, s));
        end_child(child);
        CHECK(!gp_board_owner_alive(&b, s));
        gp_board_free(&b, s);
    }

    /* The reader holds a read lock on every slot's byte first. */
    unsigned held = 0;
    for (unsigned i = 0; i < GP_BOARD_SLOTS; i++)
        held += lock_byte(reader, &b, &b.f->slots[i], F_RDLCK) == 0;
    CHECK_INT(held, GP_BOARD_SLOTS);
    s = claimer("values", &b, AS_CLAIMED, false, &child);
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(atomic_load(&s->liveness_lock), GP_LIVENESS_PID);
        CHECK(gp_board_owner_alive(&b, s));
        end_child(child);
        CHECK(!gp_board_owner_alive(&b, s));
        gp_board_free(&b, s);
    }
    pid_t ended = fork();
    if (ended == 0)
        _exit(0);
    waitpid(ended, NULL, 0);
    s = forge_claim(&b, (uint32_t)ended);
    CHECK(s != NULL);
    if (s) {
        CHECK(!gp_board_claimer_gone(&b, s, GP_BOARD_CLAIM_MAX_NS - 1)); /* its namespace unsaid */
        CHECK(gp_board_claimer_gone(&b, s, GP_BOARD_CLAIM_MAX_NS));
        s->pid_ns = gp_board_self()->pid_ns;
        CHECK(gp_board_claimer_gone(&b, s, 0));
        gp_board_free(&b, s);
    }
    s = forge_claim(&b, (uint32_t)getppid()); /* a pid that runs: read locks are a live claimer's */
    CHECK(s != NULL);
    if (s) {
        s->pid_ns = gp_board_self()->pid_ns;
        CHECK(!gp_board_claimer_gone(&b, s, 10 * GP_BOARD_CLAIM_MAX_NS));
        gp_board_free(&b, s);
    }
    close(reader);
    gp_board_close(&b);
}

/*
 * A process that execs a program without gpuprio keeps its pid and start time, but not the board
 * file (close-on-exec), and with it its slots' liveness locks: its slots are dead while it runs.
 */
static void exec_without_gpuprio(void)
{
    struct gp_board b;
    const char *why;
    CHECK_INT(gp_board_open("exec", &b, &why), 0);
    pid_t child = fork();
    if (child == 0) {
        struct gp_board own;
        struct gp_board_slot *s = claim_as_child("exec", &own);
        if (!s)
            _exit(1);
        gp_board_publish(&own, s);
        execl("/bin/sleep", "sleep", "10", (char *)NULL);
        _exit(127);
    }
    struct gp_board_slot *theirs = NULL;
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 2000 && !theirs; i++, nanosleep(&ms, NULL))
        for (unsigned j = 0; j < gp_board_slots_used(&b); j++)
            if (atomic_load(&b.f->slots[j].owner) == ((uint64_t)child << 32 | GP_SLOT_LIVE))
                theirs = &b.f->slots[j];
    bool dead = false;
    for (int i = 0; i < 2000 && theirs && !(dead = !gp_board_owner_alive(&b, theirs)); i++)
        nanosleep(&ms, NULL);
    CHECK(theirs != NULL && dead);
    CHECK_INT(kill(child, 0), 0); /* while the process runs on */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (theirs)
        gp_board_free(&b, theirs);
    gp_board_close(&b);
}

struct second_taker {
    struct gp_board *b;
    _Atomic bool *holder_inside;
    _Atomic bool locked;
    bool holder_was_inside;
};

static void *second_taker_main(void *arg)
{
    struct second_taker *t = arg;
    if (CHECK_INT(gp_board_lock(t->b), 0)) {
        t->holder_was_inside = atomic_load(t->holder_inside);
        atomic_store(&t->locked, true);
        gp_board_unlock(t->b);
    }
    return NULL;
}

/*
 * The lock excludes the threads of one process from each other, as the board listener's reclaim
 * and a decision on another thread need: a second thread of the holder's process waits until the
 * holder unlocks, however long that takes, and never takes the lock over.
 */
static void own_threads_excluded(void)
{
    struct gp_board b;
    const char *why;
    CHECK_INT(gp_board_open("threads", &b, &why), 0);
    _Atomic bool inside = false;
    CHECK_INT(gp_board_lock(&b), 0);
    atomic_store(&inside, true);
    struct second_taker t = {.b = &b, .holder_inside = &inside};
    pthread_t thread;
    CHECK_INT(pthread_create(&thread, NULL, second_taker_main, &t), 0);
    /* It goes to sleep on the lock, long past the 64 yields after which it used to take it
     * over; a little later it still has not got it. */
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 2000 && !atomic_load(&b.f->h.lock_sleepers) && !atomic_load(&t.locked); i++)
        nanosleep(&ms, NULL);
    CHECK(atomic_load(&b.f->h.lock_sleepers) > 0);
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
    CHECK(!atomic_load(&t.locked));
    atomic_store(&inside, false);
    gp_board_unlock(&b);
    pthread_join(thread, NULL);
    CHECK(atomic_load(&t.locked));
    CHECK(!t.holder_was_inside);
    CHECK(!gp_board_given_up(&b));
    CHECK_INT(atomic_load(&b.f->h.lock), 0);
    gp_board_close(&b);
}

/* Writes a board for key with one thing wrong, then checks the refusal. */
static void refused(const char *key, void (*spoil)(const char *path), const char *says)
{
    struct gp_board b;
    const char *why = NULL;
    char path[256];
    CHECK_INT(gp_board_open(key, &b, &why), 0);
    snprintf(path, sizeof path, "%s", b.path);
    gp_board_close(&b);
    spoil(path);
    int rc = gp_board_open(key, &b, &why);
    if (!CHECK(rc < 0) || !CHECK(why && strstr(why, says)))
        fprintf(stderr, "  %s: rc %d, why '%s', expected '%s'\n", key, rc, why ? why : "", says);
    if (rc == 0)
        gp_board_close(&b);
}

static void write_at(const char *path, off_t offset, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0 || pwrite(fd, data, n, offset) != (ssize_t)n)
        CHECK(!"cannot spoil the board file");
    if (fd >= 0)
        close(fd);
}

static void spoil_version(const char *path)
{
    uint32_t v = GP_BOARD_VERSION + 1;
    write_at(path, offsetof(struct gp_board_header, version), &v, sizeof v);
}

static void spoil_size(const char *path)
{
    CHECK(truncate(path, 4096) == 0);
}

static void spoil_garbage(const char *path)
{
    static unsigned char junk[sizeof(struct gp_board_file)];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 131 + 7);
    write_at(path, 0, junk, sizeof junk);
}

static void spoil_mode(const char *path)
{
    CHECK(chmod(path, 0644) == 0);
}

static void spoil_symlink(const char *path)
{
    char target[300];
    snprintf(target, sizeof target, "%s.real", path);
    CHECK(rename(path, target) == 0);
    CHECK(symlink(target, path) == 0);
}

/* A FIFO at the board's path (anyone may make one in a shared directory). */
static void spoil_fifo(const char *path)
{
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
}

/* A reader (gpuprio top, another user's process) opening a FIFO named like a board is refused at
 * once: an open for reading would wait for a writer for ever. */
static void fifo_never_blocks(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/gpuprio-4243-v%u-fifo", dir, GP_BOARD_VERSION);
    CHECK(mkfifo(path, 0644) == 0);
    alarm(20); /* a hang fails the test instead of stalling it */
    struct gp_board b;
    const char *why = NULL;
    CHECK(gp_board_open_file(path, false, &b, &why) < 0 && why && strstr(why, "regular file"));
    why = NULL;
    CHECK(gp_board_open_copy(path, &b, &why) < 0 && why && strstr(why, "regular file"));
    alarm(0);
    unlink(path);
}

/*
 * Another user's file at this user's board path (made before this user's first process): the
 * user meets its other processes on a board under an alternate name instead, every process the
 * same one, and says whose the file is; once unused, the alternate is removed like any board.
 */
static void squatted(void)
{
    struct gp_board b, second;
    const char *why = NULL;
    char usual[256];
    CHECK_INT(gp_board_path("owner", usual, sizeof usual), 0);
    int fd = open(usual, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0 && fchown(fd, 65534, 65534) == 0);
    if (fd >= 0)
        close(fd);
    CHECK_INT(gp_board_open("owner", &b, &why), 0);
    CHECK(b.squatter == 65534);
    CHECK(strncmp(b.path, usual, strlen(usual)) == 0 && b.path[strlen(usual)] == '+');
    uid_t uid;
    const char *name = strrchr(b.path, '/') + 1;
    CHECK(gp_board_name_of(name, "owner", &uid) && uid == geteuid());
    CHECK_INT(gp_board_open("owner", &second, &why), 0);
    CHECK(strcmp(second.path, b.path) == 0 && second.ino == b.ino);
    CHECK(gp_board_first(&b));
    gp_board_close(&second);
    /* Another of the user's alternates, first in name order (another process made one at the
     * same moment): this one is not the board to meet on, and the next open takes the first. */
    char earlier[300];
    snprintf(earlier, sizeof earlier, "%s+0000000000000000", usual);
    if (strcmp(earlier, b.path) != 0) {
        CHECK(link(b.path, earlier) == 0);
        CHECK(!gp_board_first(&b));
        CHECK_INT(gp_board_open("owner", &second, &why), 0);
        CHECK(strcmp(second.path, earlier) == 0 && gp_board_first(&second));
        gp_board_close(&second);
        CHECK(unlink(earlier) == 0);
    }
    CHECK_INT(gp_board_lock(&b), 0);
    CHECK(gp_board_remove_unused(&b));
    gp_board_unlock(&b);
    struct stat st;
    CHECK(lstat(b.path, &st) != 0 && errno == ENOENT);
    gp_board_close(&b);
    unlink(usual);
}

static void refusals(void)
{
    refused("version", spoil_version, "another board version");
    refused("size", spoil_size, "wrong size");
    refused("garbage", spoil_garbage, "not a gpuprio board");
    refused("mode", spoil_mode, "open to other users");
    refused("symlink", spoil_symlink, "symbolic link");
    refused("fifo", spoil_fifo, "is not a regular file");
    if (geteuid() == 0)
        squatted();
    else
        fprintf(stderr, "board_test: not root, so a board of another owner is not tested\n");
    fifo_never_blocks();
    /* A board directory that cannot be written: refused, with a reason. */
    struct gp_board b;
    const char *why = NULL;
    setenv("GPUPRIO_BOARD_DIR", "/nonexistent/gpuprio", 1);
    gp_opts_load(); /* the library reads its variables once */
    CHECK(gp_board_open("x", &b, &why) < 0 && why && strstr(why, "cannot be created"));
    setenv("GPUPRIO_BOARD_DIR", dir, 1);
    gp_opts_load();
}

/* Board names: a board's of any device and version, and of one device. */
static void board_names(void)
{
    uid_t uid = 0;
    char device[64];
    CHECK(gp_board_name_parse("gpuprio-12-v4-a.b_c-d", &uid, device, sizeof device));
    CHECK(uid == 12 && strcmp(device, "v4-a.b_c-d") == 0);
    CHECK(gp_board_name_parse("gpuprio-12-v4-x+0123456789abcdef", &uid, device, sizeof device));
    CHECK(strcmp(device, "v4-x") == 0);
    CHECK(gp_board_name_parse("gpuprio-4294967295-v3-x", &uid, device, sizeof device));
    CHECK(uid == 4294967295u && strcmp(device, "v3-x") == 0);
    CHECK(!gp_board_name_of("gpuprio-12-v3-x", "x", &uid));
    CHECK(gp_board_name_of("gpuprio-12-v4-x+0123456789abcdef", "x", &uid) && uid == 12);
    static const char *const not_boards[] = {"gpuprio-012-v4-x",
                                             "gpuprio--1-v4-x",
                                             "gpuprio-4294967296-v4-x",
                                             "gpuprio-12-v4-",
                                             "gpuprio-12-v4-+0123456789abcdef",
                                             "gpuprio-12-4-x",
                                             "gpuprio-12-v-x",
                                             "gpuprio-12-v4x",
                                             "gpuprio-12-v4-x y",
                                             "gpuprio-12-v4-x+0123",
                                             "gpuprio-12-v4-x+0123456789ABCDEF",
                                             "gpuprio-12-garbage"};
    for (size_t i = 0; i < sizeof not_boards / sizeof *not_boards; i++)
        if (!CHECK(!gp_board_name_parse(not_boards[i], &uid, device, sizeof device)))
            fprintf(stderr, "  taken for a board's name: %s\n", not_boards[i]);
    CHECK(!gp_board_name_parse("gpuprio-12-v4-a-longer-key", &uid, device, 8)); /* no room */
}

/* ---- the screen (board_screen.h) ---- */

static char screen_dir[96];
static struct gp_board_file *screen_image; /* a board of this process's, to copy */

/* A board of uid for device key at NAME in screen_dir (a copy of screen_image, its recorded owner
 * uid), owned by owner. */
static void screen_board_of(const char *name, uid_t uid, uid_t owner, const char *key)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", screen_dir, name);
    screen_image->h.uid = uid;
    snprintf(screen_image->h.key, sizeof screen_image->h.key, "%s", key);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0 &&
          pwrite(fd, screen_image, sizeof *screen_image, 0) == (ssize_t)sizeof *screen_image);
    CHECK(fd >= 0 && fchown(fd, owner, owner) == 0);
    if (fd >= 0)
        close(fd);
}

static void screen_board(const char *name, uid_t uid, uid_t owner)
{
    screen_board_of(name, uid, owner, "scr");
}

struct screen_listing {
    struct gp_screen *s;
    unsigned taken, of[128]; /* boards taken, and of each uid 5000 + i */
    char last[256];          /* the last board taken */
};

static int screen_take(struct gp_board *b, void *arg)
{
    struct screen_listing *l = arg;
    l->taken++;
    if (b->uid >= 5000 && b->uid < 5128)
        l->of[b->uid - 5000]++;
    snprintf(l->last, sizeof l->last, "%s", b->path);
    gp_board_close(b);
    return 0;
}

static struct screen_listing screen_list(struct gp_screen *s)
{
    struct screen_listing l = {.s = s};
    CHECK_INT(gp_screen_list(s, screen_dir, (uid_t)-1, screen_take, &l), 0);
    return l;
}

/* What this process wrote on stderr (gp_log's warnings) since it was sent to a file. */
static int said_fd = -1, saved_stderr = -1;
static void say_into_file(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/said", dir);
    fflush(stderr);
    said_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    saved_stderr = dup(2);
    CHECK(said_fd >= 0 && saved_stderr >= 0 && dup2(said_fd, 2) == 2);
}

/* How many lines said so far have `what` in them; stderr back where it was. */
static int lines_saying(const char *what)
{
    static char text[65536];
    ssize_t n = pread(said_fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    int lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        lines += strstr(line, what) != NULL;
    return lines;
}

static void said_back(void)
{
    dup2(saved_stderr, 2);
    close(saved_stderr);
    close(said_fd);
}

/*
 * A reader of device "scr" (root, reading every user's boards as gpuprio top does): 33 other users
 * with boards, one of them (5000) with 5 under its uid's names, and one (5001) with its board
 * hard-linked under an alternate name: each user's boards count once against the users' limit,
 * so the first 32 users are read, 2 boards of 5000 and 1 of 5001, and the 33rd is left out with
 * one warning in two listings. User 5099's 7 files named as other users' are refused: 4 warnings
 * and one line for the others (before: that line again for each later file).
 */
static void screen_limits(void)
{
    struct gp_screen s = {.key = "scr"};
    char name[128];
    screen_board("gpuprio-5000-v4-scr", 5000, 5000);
    for (unsigned i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "gpuprio-5000-v4-scr+%016x", i);
        screen_board(name, 5000, 5000);
    }
    screen_board("gpuprio-5001-v4-scr", 5001, 5001);
    char from[256], to[256];
    snprintf(from, sizeof from, "%s/gpuprio-5001-v4-scr", screen_dir);
    snprintf(to, sizeof to, "%s/gpuprio-5001-v4-scr+0000000000000000", screen_dir);
    CHECK(link(from, to) == 0);
    for (uid_t uid = 5002; uid <= 5032; uid++) {
        snprintf(name, sizeof name, "gpuprio-%u-v4-scr", (unsigned)uid);
        screen_board(name, uid, uid);
    }
    for (uid_t uid = 6000; uid < 6007; uid++) {
        snprintf(name, sizeof name, "gpuprio-%u-v4-scr", (unsigned)uid);
        screen_board(name, 5099, 5099);
    }
    say_into_file();
    struct screen_listing first = screen_list(&s), again = screen_list(&s);
    int users = lines_saying("more than 32 other users have boards of one device");
    int forged = lines_saying("is named as user 600");
    int summed = lines_saying("user 5099's files in");
    said_back();
    for (int i = 0; i < 2; i++) {
        struct screen_listing *l = i ? &again : &first;
        CHECK_INT(l->taken, 2 + 1 + 30);
        CHECK_INT(l->of[0], 2);
        CHECK_INT(l->of[1], 1);
        CHECK_INT(l->of[31], 1); /* the 32nd user */
        CHECK_INT(l->of[32], 0); /* the 33rd */
    }
    CHECK_INT(users, 1);
    CHECK_INT(forged, GP_SCREEN_SAID_PER_USER);
    CHECK_INT(summed, 1);
    gp_screen_free(&s);
}

/*
 * A file replaced between the reader's look at its name and its open: another user's board (a
 * good one, of its own uid) at user 5050's name is refused as misnamed, and a hard link to a
 * board taken already is not taken twice (before: both were taken, by the look alone).
 */
static void screen_swapped(void)
{
    struct gp_screen s = {.key = "scr"};
    char usual[200], other[200], alternate[256], tmp[200];
    snprintf(usual, sizeof usual, "%s/gpuprio-5050-v4-scr", screen_dir);
    snprintf(alternate, sizeof alternate, "%s+0000000000000001", usual);
    snprintf(other, sizeof other, "%s/other", screen_dir);
    snprintf(tmp, sizeof tmp, "%s/tmp", screen_dir);
    screen_board("gpuprio-5050-v4-scr", 5050, 5050);
    screen_board("gpuprio-5050-v4-scr+0000000000000001", 5050, 5050);
    screen_board("other", 5051, 5051);
    struct gp_board b;
    struct stat seen;
    say_into_file();
    gp_screen_begin(&s);
    CHECK(lstat(usual, &seen) == 0 && seen.st_uid == 5050);
    CHECK(rename(other, usual) == 0); /* 5051's board at 5050's name */
    int misnamed = gp_screen_take_seen(&s, usual, &seen, &b);
    if (misnamed == 0)
        gp_board_close(&b);
    CHECK_INT(gp_screen_take(&s, alternate, &b), 0);
    gp_board_close(&b);
    CHECK(unlink(usual) == 0); /* 5050's own board at its name again, */
    screen_board("gpuprio-5050-v4-scr", 5050, 5050);
    CHECK(lstat(usual, &seen) == 0 && seen.st_uid == 5050);
    CHECK(link(alternate, tmp) == 0 && rename(tmp, usual) == 0); /* then the alternate there */
    int linked = gp_screen_take_seen(&s, usual, &seen, &b);
    if (linked == 0)
        gp_board_close(&b);
    gp_screen_end(&s, false);
    int said = lines_saying("is named as user 5050's board but belongs to user 5051");
    said_back();
    CHECK_INT(misnamed, 1);
    CHECK_INT(said, 1);
    CHECK_INT(linked, 1);
    gp_screen_free(&s);
}

/*
 * A reader of every device (gpuprio top): user 5070's board hard-linked under 3 made-up devices'
 * names that sort before its own is read once, under its own name (the links, whose board is of
 * another device than they say, are refused under those names only: the first with one warning,
 * which remembers the file and its device, the others skipped unopened and unsaid); user 5071's
 * boards of 65 devices (copies, each saying its device) are read for the first 64, with one
 * warning.
 */
static void screen_devices(void)
{
    char sub[128], name[128], from[300], to[300];
    snprintf(sub, sizeof sub, "%s/devices", screen_dir);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(screen_dir + strlen(screen_dir), sizeof screen_dir - strlen(screen_dir), "/devices");
    screen_board("gpuprio-5070-v4-scr", 5070, 5070);
    snprintf(from, sizeof from, "%s/gpuprio-5070-v4-scr", screen_dir);
    for (int i = 0; i < 3; i++) {
        snprintf(to, sizeof to, "%s/gpuprio-5070-v4-aaa%d", screen_dir, i);
        CHECK(link(from, to) == 0);
    }
    for (int i = 0; i < GP_SCREEN_DEVICES + 1; i++) {
        char key[16];
        snprintf(key, sizeof key, "d%02d", i);
        snprintf(name, sizeof name, "gpuprio-5071-v4-%s", key);
        screen_board_of(name, 5071, 5071, key);
    }
    struct gp_screen s = {.key = NULL};
    struct gp_screen one = {.key = "scr"};
    say_into_file();
    struct screen_listing every = screen_list(&s), again = screen_list(&s);
    struct screen_listing of_scr = screen_list(&one);
    int devices = lines_saying("user 5071 has boards of more than 64 devices");
    int linked = lines_saying("is named as a board of another device than its own");
    said_back();
    for (int i = 0; i < 2; i++) {
        struct screen_listing *l = i ? &again : &every;
        CHECK_INT(l->of[70], 1);
        CHECK_INT(l->of[71], GP_SCREEN_DEVICES);
        CHECK_INT(l->taken, 1 + GP_SCREEN_DEVICES);
    }
    CHECK_INT(devices, 1);
    CHECK_INT(linked, 1);
    CHECK_INT(of_scr.taken, 1); /* a reader of one device: its board, the others not looked at */
    CHECK(strcmp(of_scr.last, from) == 0);
    gp_screen_free(&s);
    gp_screen_free(&one);
    *strrchr(screen_dir, '/') = '\0';
}

/*
 * A reader out of file descriptors (EMFILE) while it lists: user 5080's good board is not taken
 * by that listing, with one warning that does not blame the board, and is taken by the next
 * (before: it was refused as a board that cannot be opened, and never taken again).
 */
static void screen_fd_limit(void)
{
    char sub[128];
    snprintf(sub, sizeof sub, "%s/fds", screen_dir);
    CHECK(mkdir(sub, 0700) == 0);
    snprintf(screen_dir + strlen(screen_dir), sizeof screen_dir - strlen(screen_dir), "/fds");
    screen_board("gpuprio-5080-v4-scr", 5080, 5080);
    struct gp_screen s = {.key = "scr"};
    struct rlimit was, low;
    CHECK(getrlimit(RLIMIT_NOFILE, &was) == 0);
    low = was;
    low.rlim_cur = 64;
    say_into_file();
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    /* Every descriptor taken but one, for the listing's own opendir. */
    int fds[64], n = 0;
    while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        n++;
    CHECK(n > 0 && n < 64 && errno == EMFILE);
    if (n > 0)
        close(fds[--n]);
    struct screen_listing at_limit = screen_list(&s);
    while (n > 0)
        close(fds[--n]);
    CHECK(setrlimit(RLIMIT_NOFILE, &was) == 0);
    struct screen_listing later = screen_list(&s);
    int said = lines_saying("cannot be opened now (Too many open files)");
    int blamed = lines_saying("is ignored");
    said_back();
    CHECK_INT(at_limit.taken, 0);
    CHECK_INT(later.taken, 1);
    CHECK_INT(later.of[80], 1);
    CHECK_INT(said, 1);
    CHECK_INT(blamed, 0);
    gp_screen_free(&s);
    *strrchr(screen_dir, '/') = '\0';
}

static void screen(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "board_test: not root, so boards of other users are not screened\n");
        return;
    }
    struct gp_board b;
    const char *why;
    CHECK_INT(gp_board_open("scr", &b, &why), 0);
    screen_image = calloc(1, sizeof *screen_image);
    CHECK(screen_image &&
          pread(b.fd, screen_image, sizeof *screen_image, 0) == (ssize_t)sizeof *screen_image);
    gp_board_close(&b);
    snprintf(screen_dir, sizeof screen_dir, "%s/screen", dir);
    CHECK(mkdir(screen_dir, 0700) == 0);
    if (screen_image) {
        screen_limits();
        screen_swapped();
        screen_devices();
        screen_fd_limit();
    }
    free(screen_image);
}

static void *notifier(void *arg)
{
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    gp_board_notify(arg);
    return NULL;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void waking(void)
{
    struct gp_board b;
    const char *why;
    CHECK_INT(gp_board_open("wake", &b, &why), 0);
    uint32_t seq = atomic_load(&b.f->h.seq);
    uint64_t t0 = now_ms();
    CHECK_INT(gp_board_wait(&b, seq, 30000000), seq); /* nothing changed: the timeout */
    CHECK(now_ms() - t0 >= 25);
    pthread_t t;
    pthread_create(&t, NULL, notifier, &b);
    t0 = now_ms();
    CHECK(gp_board_wait(&b, seq, 5000000000ull) != seq);
    CHECK(now_ms() - t0 < 2000);
    pthread_join(t, NULL);
    gp_board_close(&b);
}

static int count_board(const char *path, void *arg)
{
    (void)path;
    ++*(int *)arg;
    return 0;
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/gpuprio-unit-board-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    setenv("GPUPRIO_BOARD_DIR", dir, 1);
    layout();
    create_and_share();
    dead_owners();
    dead_claimers();
    other_namespace();
    liveness_values();
    exec_without_gpuprio();
    own_threads_excluded();
    waking();
    int n = 0;
    CHECK_INT(gp_board_list(dir, geteuid(), count_board, &n), 0);
    /* 0000:c1:00.0, dead, claim, namespace, values, exec, threads, wake; nothing hidden */
    CHECK_INT(n, 8);
    refusals();
    board_names();
    screen();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_finish("unit.board");
}
