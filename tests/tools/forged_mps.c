/*
 * forged_mps.c - a process whose boards hold records whose MPS state (board.h's enum
 * gp_record_mps) is any byte, and many records and lower queues that no record matches, as a
 * process of the user could write its own boards; for doctor_hostile.sh.
 *
 *   tools_forged_mps STOPFILE BOARDS
 *
 * On the board of device key "forged-mps", an idle queue of priority 0 (stream 0xe00) under an
 * identity (incarnation) of its own, another process's; one lower queue (throttled, priority -10)
 * whose longest command is 5 ms per record, the queue under the record's identity: records of
 * MPS state 0 (unknown), 1 (not a client), 2 (a client), 3 and 255 (no state), streams 0xa00,
 * 0xa01, 0xa02, 0xa03 and 0xaff; and two more queues under the record of state 1: stream 0xb00,
 * whose longest command is 999 us, and 0xb01, of 5 ms but not lower (no gate). On the board of
 * "forged-mps-alone", one process (a record of state 1) with a lower queue of 5 ms (0xd00) and the
 * idle queue of priority 0 (0xe00): the only higher priority is its own. For each of BOARDS - 1
 * devices more, whose keys ("forged-many-...-N") sort before those and differ only at their end,
 * two boards (the usual name and an alternate, as readers take them), each with another
 * process's idle queue of priority 0, 254 records of state 1 and 256 lower queues of 5 ms
 * (streams 0xc00...), none under the identity of a record of its board: only under that of the
 * records of the other boards. Every slot names no pid namespace, so that readers judge it by its
 * lock alone (quickly: no look in /proc). Prints "ready" once every
 * slot is published, and waits (at most 120 s) until STOPFILE exists. Exit status 0, or 1 when a
 * board cannot be made.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board.h"

#define LONG_US 5000u
/* Most of the other boards' keys, alike: boards told apart by name are told apart late. */
#define LONG_NAME "many-boards-of-one-process-all-of-long-names"

/* A slot of b claimed under incarnation (the owner's identity that rows and records match by). */
static struct gp_board_slot *claim(struct gp_board *b, uint64_t incarnation)
{
    struct gp_board_slot *s = gp_board_claim(b);
    if (!s) {
        fprintf(stderr, "tools_forged_mps: the board %s is full\n", b->path);
        exit(1);
    }
    s->incarnation = incarnation;
    atomic_store(&s->pid_ns, 1); /* no namespace's: judged by its lock alone, without /proc */
    return s;
}

static void record(struct gp_board *b, uint64_t incarnation, uint8_t mps)
{
    struct gp_board_slot *s = claim(b, incarnation);
    s->device = 0;
    s->mps = mps;
    atomic_store(&s->st.priority, GP_RECORD_NO_PRIORITY);
    gp_board_publish_record(b, s);
}

/* A queue of priority -10, lower (throttled) or not. */
static void queue(struct gp_board *b, uint64_t incarnation, uint64_t stream, uint32_t longest_us,
                  bool lower)
{
    struct gp_board_slot *s = claim(b, incarnation);
    s->device = 0;
    s->stream = stream;
    atomic_store(&s->st.priority, -10);
    atomic_store(&s->st.gate, lower ? XQ_GATE_THROTTLED | XQ_GATE_TRACKED : 0);
    atomic_store(&s->longest_us, longest_us);
    gp_board_publish(b, s);
}

/* An idle queue of priority 0, above every other one, under incarnation. */
static void higher_queue(struct gp_board *b, uint64_t incarnation)
{
    struct gp_board_slot *s = claim(b, incarnation);
    s->device = 0;
    s->stream = 0xe00;
    atomic_store(&s->st.priority, 0);
    gp_board_publish(b, s);
}

static void open_board(const char *key, struct gp_board *b)
{
    const char *why;
    if (gp_board_open(key, b, &why) != 0) {
        fprintf(stderr, "tools_forged_mps: the board %s: %s\n", key, why);
        exit(1);
    }
}

/* A copy of the new board b (no slot claimed yet) under an alternate name of its key (board.h's
 * gp_board_open), opened into alt: readers take both. */
static void open_alternate(const struct gp_board *b, struct gp_board *alt)
{
    char path[sizeof b->path + 32];
    snprintf(path, sizeof path, "%s+%016x", b->path, 0xa1u);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const char *why = "cannot be made";
    if (fd < 0 || write(fd, b->f, sizeof *b->f) != (ssize_t)sizeof *b->f || close(fd) != 0 ||
        gp_board_open_file(path, true, alt, &why) != 0) {
        fprintf(stderr, "tools_forged_mps: the board %s: %s\n", path, why);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    unsigned boards = argc == 3 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    if (argc != 3 || boards < 1 || boards > 64) {
        fprintf(stderr, "usage: tools_forged_mps STOPFILE BOARDS (1 to 64)\n");
        return 2;
    }
    static struct gp_board b[2 * 64], alone;
    open_board("forged-mps", &b[0]);
    higher_queue(&b[0], 999);
    static const uint8_t states[] = {0, 1, 2, 3, 255};
    for (unsigned i = 0; i < sizeof states; i++) {
        uint64_t incarnation = 1000 + 2 * states[i];
        record(&b[0], incarnation, states[i]);
        queue(&b[0], incarnation, 0xa00 + states[i], LONG_US, true);
        if (states[i] == 1) {
            queue(&b[0], incarnation, 0xb00, 999, true);
            queue(&b[0], incarnation, 0xb01, LONG_US, false);
        }
    }
    open_board("forged-mps-alone", &alone);
    record(&alone, 2001, 1);
    queue(&alone, 2001, 0xd00, LONG_US, true);
    higher_queue(&alone, 2001);
    /* Boards 2k - 1 and 2k: device k's, under its usual name and an alternate. */
    for (unsigned d = 1; d < 2 * boards - 1; d++) {
        if (d % 2) {
            char key[GP_BOARD_KEY_MAX];
            snprintf(key, sizeof key, "forged-%s-%u", LONG_NAME, (d + 1) / 2);
            open_board(key, &b[d]);
            open_alternate(&b[d], &b[d + 1]);
        }
        /* Every other board's records under its queues' identity: the queues' owner found on
         * other boards only, told apart by the board's name. */
        for (unsigned i = 0; i < GP_BOARD_SLOTS / 2 - 2; i++)
            record(&b[d], d % 2 ? 1 : 3, 1);
        higher_queue(&b[d], 999);
        for (unsigned i = 0; i < GP_BOARD_SLOTS / 2; i++)
            queue(&b[d], d % 2 ? 3 : 1, 0xc00 + i, LONG_US, true);
    }
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 1200 && access(argv[1], F_OK) != 0; i++)
        usleep(100000);
    for (unsigned d = 0; d < 2 * boards - 1; d++)
        gp_board_close(&b[d]);
    gp_board_close(&alone);
    return 0;
}
