/*
 * cmd_set.c - `gpuprio set PID PRIORITY [--stream HANDLE]`: changes the priority of a running
 * process's queues, like renice(1) changes a niceness.
 *
 * The request goes through the boards (gp_board_request_copy): the tool writes the priority into
 * the slots of the process's queues and wakes the board, and the process's own listener applies it,
 * as gpuprio_stream_set_priority would (the strongest source; without --stream also for the
 * queues the process creates later). Without --stream it also goes into the process's record,
 * through which the process gives it to its queues that never ran (they hold no slot), so a
 * process none of whose queues ran yet is reached too. The tool then waits up to a second to see
 * the slots (and the record) take the new priority, so that on success the change has happened,
 * not only been asked for.
 * Permissions are the board's: only boards the caller can open for writing (the caller's own,
 * or, for root, every user's) can be asked.
 *
 * A request is a store into the owner's board. For root, that is another user's file, which its
 * owner can truncate or replace at any moment (docs/board.md, "Threat model"), and an access
 * through a mapping past the file's new end raises SIGBUS: so the board is never mapped here
 * (only its header's page, for the futex wake, which only the kernel touches). It is read into a
 * private copy (gp_board_open_copy_writable, gp_board_read: pread, which a shrunk file answers
 * short), and the request words are written with pwrite (gp_board_request_copy). A board that
 * shrank or stopped being one while it was asked or watched is dropped with one message. Opening
 * never blocks (a FIFO at a board's name is refused by its type), and the wait for the owner is
 * bounded, so no board makes the command hang either.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "board.h"
#include "gp_conf_file.h"
#include "gp_priority.h"
#include "tool.h"

#define APPLY_WAIT_NS 1000000000ull

static const char help_set[] =
    "Usage: gpuprio set PID PRIORITY [--stream HANDLE]\n"
    "Change the priority of every queue of the running process PID, and of the queues it\n"
    "creates from now on; with --stream, only of the queue of the stream HANDLE (as gpuprio top\n"
    "shows it, e.g. 0x55d0c3a41230).\n"
    "\n"
    "PRIORITY: " GP_PRIORITY_ACCEPTED ".\n"
    "\n"
    "Options:\n"
    "      --stream HANDLE  only the queue of this stream (hexadecimal with 0x, or decimal)\n"
    "  -h, --help           show this text\n"
    "\n"
    "The request is applied by the process itself, through the board it shares with the user's\n"
    "other gpuprio processes (GPUPRIO_BOARD_DIR, default /dev/shm); only boards the caller may\n"
    "write are asked (the caller's own; every user's for root).\n"
    "\n"
    "Exit status: 0 when the priority was set; 1 when no process PID (or no such stream of it)\n"
    "is on any board, a queue of it did not take the priority within a second, or its board\n"
    "changed under the command (its owner truncated it); 2 for a bad argument or priority.\n";

struct set_req {
    uint32_t pid;
    int priority;
    bool stream_only;
    uint64_t stream;
};

/* A board that was asked, kept open to watch the request being applied, and which of its slots
 * were asked (the process's own, found so once): watched by their owner word and incarnation,
 * not judged again (a slot that stops looking like the process's, or is freed, is no longer
 * waited for, and is not taken for done either). */
struct asked_board {
    struct gp_board b;
    uint64_t asked[GP_BOARD_SLOTS / 64];
    uint64_t word[GP_BOARD_SLOTS], incarnation[GP_BOARD_SLOTS];
};

/* The boards that were asked. */
struct set_ctx {
    const struct set_req *req;
    struct asked_board **boards;
    size_t n;
    bool reached; /* a slot or record of the process was asked */
    int dropped;  /* boards that changed under the command (their owner truncated them) */
    int asked;    /* queues asked: slots, and the unused queues records count */
    /* Which files are boards to ask (board_screen.h): named as their owner's, each file once,
     * within the limits, as every reader takes them; in root's view, the administrator's shared
     * directory too. */
    struct gp_tool_view view;
    char comm[16];
};

static int usage_error(const char *fmt, const char *arg)
{
    fputs("gpuprio set: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return GP_EXIT_USAGE;
}

/* Whether slot s of b (its copy) is one of the slots the request went to (as
 * gp_board_request_copy chooses them: the process's own, not a slot another user wrote its pid
 * into). */
static bool matches(const struct set_req *r, const struct gp_board *b,
                    const struct gp_board_slot *s)
{
    uint64_t word = atomic_load(&s->owner);
    if (GP_SLOT_OWNER(word) != r->pid)
        return false;
    bool chosen =
        GP_SLOT_STATE(word) == GP_SLOT_PROCESS
            ? !r->stream_only
            : GP_SLOT_STATE(word) == GP_SLOT_LIVE && (!r->stream_only || s->stream == r->stream);
    return chosen && gp_board_slot_is(b, s, r->pid);
}

/* Drops a board that changed under the command, with one message: why. */
static void drop(struct set_ctx *c, struct gp_board *b, const char *why)
{
    fprintf(stderr,
            "gpuprio set: the board %s %s while it was being asked; dropped, the process may or "
            "may not take the priority from it\n",
            b->path, why);
    gp_board_close(b);
    c->dropped++;
}

/* Asks a board the screen took, and keeps it to watch (or closes it). */
static int ask_board(struct gp_board *taken, void *arg)
{
    struct set_ctx *c = arg;
    struct gp_board b = *taken;
    int rc = gp_board_request_copy(&b, c->req->pid, c->req->stream_only, c->req->stream,
                                   c->req->priority);
    if (rc < 0 && rc != -ESRCH) {
        drop(c, &b, "could not be written (its owner truncated or replaced it)");
        return 0;
    }
    if (rc < 0) {
        gp_board_close(&b);
        return 0;
    }
    c->reached = true;
    c->asked = rc > INT_MAX - c->asked ? INT_MAX : c->asked + rc;
    struct asked_board *a = calloc(1, sizeof *a);
    struct asked_board **boards = a ? realloc(c->boards, (c->n + 1) * sizeof *boards) : NULL;
    if (!boards) {
        free(a);
        gp_board_close(&b);
        return 0; /* asked, just not watched */
    }
    a->b = b;
    for (unsigned i = 0; i < gp_board_copy_slots(b.f); i++) {
        const struct gp_board_slot *s = &b.f->slots[i];
        if (!matches(c->req, &b, s))
            continue;
        a->asked[i / 64] |= 1ull << (i % 64);
        a->word[i] = atomic_load(&s->owner);
        a->incarnation[i] = atomic_load(&s->incarnation);
        if (!c->comm[0])
            memcpy(c->comm, s->comm, sizeof c->comm - 1);
    }
    c->boards = boards;
    c->boards[c->n++] = a;
    return 0;
}

/* The priority the owners of b's processes take when asked for priority: the cap of b's user
 * where the configuration file sets one below it (gp_conf_file.h), with *line where (if line). */
static int effective(int priority, const struct gp_board *b, unsigned *line)
{
    int cap;
    unsigned at;
    if (gp_conf_lookup(gp_conf_get(), GP_CONF_CAP, b->uid, &cap, &at) != 0 || cap >= priority)
        return priority;
    if (line)
        *line = at;
    return cap;
}

/* How many of the asked slots and records of a's board (read again into its copy) have not
 * applied the priority yet, into *left, and the queues they stand for, added to *queues. */
static void pending_in(const struct set_req *req, const struct asked_board *a, int *left,
                       int *queues)
{
    int want = effective(req->priority, &a->b, NULL);
    const struct gp_board_file *copy = a->b.f;
    for (unsigned i = 0; i < gp_board_copy_slots(copy); i++) {
        const struct gp_board_slot *s = &copy->slots[i];
        if (!(a->asked[i / 64] >> (i % 64) & 1) || atomic_load(&s->owner) != a->word[i] ||
            atomic_load(&s->incarnation) != a->incarnation[i] ||
            atomic_load(&s->st.priority) == want)
            continue;
        ++*left;
        if (GP_SLOT_STATE(atomic_load(&s->owner)) == GP_SLOT_PROCESS) {
            uint32_t unused = atomic_load(&s->unused_queues);
            *queues += unused < (uint32_t)(INT_MAX - *queues) ? (int)unused : 0;
        } else if (*queues < INT_MAX) {
            ++*queues;
        }
    }
}

/* How many of the asked slots and records have not applied the priority yet; *queues: how many
 * queues they stand for (a record, for the unused queues it counts). A board that shrank is
 * dropped (and what it had left is not counted). */
static int pending(struct set_ctx *c, int *queues)
{
    int left = 0;
    *queues = 0;
    for (size_t j = 0; j < c->n;) {
        const char *why;
        struct gp_board *b = &c->boards[j]->b;
        if (gp_board_read(b, b->f, &why) != 0) {
            drop(c, b, why);
            free(c->boards[j]);
            c->boards[j] = c->boards[--c->n];
            continue;
        }
        pending_in(c->req, c->boards[j], &left, queues);
        j++;
    }
    return left;
}

static int parse(int argc, char **argv, struct set_req *r)
{
    const char *pos[2] = {NULL, NULL}, *stream = NULL;
    int npos = 0;
    bool options = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* Priorities may be negative ("-10"): only these are options. */
        if (options && strcmp(a, "--") == 0)
            options = false;
        else if (options && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            fputs(help_set, stdout);
            return GP_PARSED_HELP;
        } else if (options && strcmp(a, "--stream") == 0) {
            if (++i == argc)
                return usage_error("%s needs a stream handle (gpuprio set --help)", a);
            stream = argv[i];
        } else if (options && strncmp(a, "--stream=", 9) == 0)
            stream = a + 9;
        else if (options && strncmp(a, "--", 2) == 0)
            return usage_error("unknown option '%s' (gpuprio set --help)", a);
        else if (npos < 2)
            pos[npos++] = a;
        else
            return usage_error("unexpected argument '%s' (gpuprio set --help)", a);
    }
    if (npos < 2)
        return usage_error("%s", "usage: gpuprio set PID PRIORITY [--stream HANDLE]");
    char *end;
    errno = 0;
    unsigned long pid = strtoul(pos[0], &end, 10);
    if (!(pos[0][0] >= '0' && pos[0][0] <= '9') || errno || *end || pid < 1 || pid > INT_MAX)
        return usage_error("'%s' is not a process id", pos[0]);
    r->pid = (uint32_t)pid;
    if (gp_priority_parse(pos[1], &r->priority) != 0)
        return usage_error("'%s' is not a priority; accepted: " GP_PRIORITY_ACCEPTED, pos[1]);
    if (stream) {
        errno = 0;
        unsigned long long h = strtoull(stream, &end, 0);
        if (!(stream[0] >= '0' && stream[0] <= '9') || errno || *end)
            return usage_error("'%s' is not a stream handle (hexadecimal with 0x, or decimal)",
                               stream);
        r->stream_only = true;
        r->stream = h;
    }
    return GP_PARSED_GO;
}

int gp_cmd_set(int argc, char **argv)
{
    struct set_req req = {0};
    int rc = parse(argc, argv, &req);
    if (rc == GP_PARSED_HELP)
        return 0;
    if (rc)
        return rc;
    struct set_ctx c = {.req = &req};
    gp_tool_view_init(&c.view, true);
    rc = gp_tool_view_list(&c.view, true, ask_board, &c);
    if (rc < 0) {
        fprintf(stderr, "gpuprio set: cannot read the board directory %s: %s\n", c.view.names,
                strerror(-rc));
        rc = GP_EXIT_FAILURE;
        goto out;
    }
    if (!c.reached) {
        if (req.stream_only)
            fprintf(stderr,
                    "gpuprio set: process %u has no queue for stream 0x%llx on any board in %s\n",
                    (unsigned)req.pid, (unsigned long long)req.stream, c.view.names);
        else
            fprintf(stderr, "gpuprio set: no process %u on any board in %s\n", (unsigned)req.pid,
                    c.view.names);
        rc = GP_EXIT_FAILURE;
        goto out;
    }
    uint64_t deadline = gp_tool_now_ns() + APPLY_WAIT_NS;
    int left, queues_left;
    while ((left = pending(&c, &queues_left)) > 0 && gp_tool_now_ns() < deadline) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (c.dropped && !c.n) { /* every board it was asked on changed under us: nothing to show */
        fprintf(stderr,
                "gpuprio set: process %u was asked, but its board changed under the command: "
                "whether it took priority %d is unknown (gpuprio top shows it)\n",
                (unsigned)req.pid, req.priority);
        rc = GP_EXIT_FAILURE;
        goto out;
    }
    if (left > 0)
        fprintf(stderr,
                "gpuprio set: asked process %u; %d of its %d queue%s did not take priority %d "
                "within a second (it applies requests while its GPU library runs; the request "
                "stays)\n",
                (unsigned)req.pid, queues_left, c.asked, c.asked == 1 ? "" : "s", req.priority);
    else
        printf("%u (%s): priority %d on %d queue%s%s\n", (unsigned)req.pid, c.comm,
               c.n ? effective(req.priority, &c.boards[0]->b, NULL) : req.priority, c.asked,
               c.asked == 1 ? "" : "s",
               req.stream_only ? "" : " and the queues it creates from now on");
    unsigned line = 0;
    if (c.n && effective(req.priority, &c.boards[0]->b, &line) != req.priority)
        printf("  (priority %d is above the cap of its user, set in %s line %u)\n", req.priority,
               gp_conf_get()->path, line);
    rc = left > 0 ? GP_EXIT_FAILURE : 0; /* not every queue took it: not done */
out:
    for (size_t i = 0; i < c.n; i++) {
        gp_board_close(&c.boards[i]->b);
        free(c.boards[i]);
    }
    free(c.boards);
    gp_tool_view_free(&c.view);
    return rc;
}
