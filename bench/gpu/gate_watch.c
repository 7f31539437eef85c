/*
 * gate_watch.c - when the queues on the calling user's boards became active or idle, were
 * suspended or resumed, and when their Level-2 gates closed or opened, on CLOCK_MONOTONIC (the
 * clock colocation.py stamps a request's submission with): what happens between a request's
 * submission and the moment the load's stream is held on the device.
 *
 *     gate_watch STOP-FILE OUT
 *
 * Maps every board of the board directory read-only (src/sched/board.h, as `gpuprio top` does)
 * and busy-polls each live slot's active flag, its decision's suspended bit and its gate word,
 * writing one line per change to OUT ("t_ns pid slot what value", what being active, suspended
 * or gate; a gate's value is 0 closed, 1 open, 2 pinned open) until STOP-FILE exists or its
 * parent process is gone. It keeps one core busy. bench/gpu/run.sh runs it beside a row's two
 * processes with GATE_WATCH=1, and table.py reads OUT (gates.txt) against the client's requests.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "board.h"
#include "devgate.h"
#include "gp_clock.h"
#include "xqueue.h"

#define MAX_BOARDS 8

struct seen {
    uint64_t owner;
    uint32_t active;
    bool suspended;
    int gate;
};

static struct {
    struct gp_board b[MAX_BOARDS];
    struct seen slot[MAX_BOARDS][GP_BOARD_SLOTS];
    int n;
} boards;

static int open_board(const char *path, void *arg)
{
    (void)arg;
    const char *why = NULL;
    if (boards.n == MAX_BOARDS)
        return 1;
    for (int i = 0; i < boards.n; i++)
        if (strcmp(boards.b[i].path, path) == 0)
            return 0;
    if (gp_board_open_file(path, false, &boards.b[boards.n], &why) == 0)
        boards.n++;
    else
        fprintf(stderr, "gate_watch: cannot read %s: %s\n", path, why ? why : "?");
    return 0;
}

static int gate_state(uint64_t word)
{
    return word == DG_PINNED ? 2 : word >= DG_OPEN ? 1 : 0;
}

static void poll_board(int i, FILE *out)
{
    const struct gp_board *b = &boards.b[i];
    unsigned used = gp_board_slots_used(b);
    for (unsigned k = 0; k < used; k++) {
        const struct gp_board_slot *s = &b->f->slots[k];
        struct seen *was = &boards.slot[i][k];
        uint64_t owner = atomic_load_explicit(&s->owner, memory_order_relaxed);
        if (!owner) {
            was->owner = 0; /* a slot claimed again is shown afresh */
            continue;
        }
        uint32_t active = atomic_load_explicit(&s->st.active, memory_order_relaxed);
        bool suspended =
            (atomic_load_explicit(&s->st.gate, memory_order_relaxed) & XQ_GATE_SUSPENDED) != 0;
        int gate = gate_state(atomic_load_explicit(&b->f->gates[k].word, memory_order_relaxed));
        if (owner == was->owner && active == was->active && suspended == was->suspended &&
            gate == was->gate)
            continue;
        uint64_t t = gp_now_ns();
        unsigned pid = (unsigned)(owner >> 32);
        bool fresh = owner != was->owner;
        if (fresh || active != was->active)
            fprintf(out, "%llu %u %u active %u\n", (unsigned long long)t, pid, k, active);
        if (fresh || suspended != was->suspended)
            fprintf(out, "%llu %u %u suspended %d\n", (unsigned long long)t, pid, k, suspended);
        if (fresh || gate != was->gate)
            fprintf(out, "%llu %u %u gate %d\n", (unsigned long long)t, pid, k, gate);
        *was = (struct seen){owner, active, suspended, gate};
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gate_watch STOP-FILE OUT\n");
        return 2;
    }
    FILE *out = fopen(argv[2], "w");
    if (!out) {
        perror(argv[2]);
        return 1;
    }
    setvbuf(out, NULL, _IOLBF, 0); /* each change readable at once (a write costs ~1 us) */
    uint64_t next_look = 0;
    pid_t parent = getppid();
    for (unsigned long spin = 0;; spin++) {
        if ((spin & 0xfff) == 0) {
            uint64_t t = gp_now_ns();
            /* A parent killed before it made the stop file must not leave a core spinning. */
            if (access(argv[1], F_OK) == 0 || getppid() != parent)
                break;
            if (t >= next_look) { /* boards appear as processes join them */
                gp_board_list(gp_board_dir(), geteuid(), open_board, NULL);
                next_look = t + 100000000u;
            }
        }
        for (int i = 0; i < boards.n; i++)
            poll_board(i, out);
    }
    for (int i = 0; i < boards.n; i++)
        gp_board_close(&boards.b[i]);
    return fclose(out) == 0 ? 0 : 1;
}
