/*
 * forged_gemm.c - a process whose records on its board hold absurd GEMM counts (board.h's struct
 * gp_record_gemm), as a process of the user could write its own board: 2^64-1 calls sliced and
 * slices, 2^32-1 calls left whole for every reason, in two records (devices 0 and 1), so that a
 * reader's sums over them overflow too; and two throttled queues on device 0 whose longest
 * command (board.h's longest_us) is 2^32-1 and 2^31 microseconds. gemm_hostile.sh checks that
 * `gpuprio top`, `gpuprio metrics` and `gpuprio doctor` print them clamped (board.h's
 * GP_RECORD_GEMM_MAX, GP_SLOT_LONGEST_MAX_US) and whole.
 *
 *   tools_forged_gemm STOPFILE
 *
 * Its board is its user's for device key "forged-gemm" in GPUPRIO_BOARD_DIR. It prints "ready"
 * once both records and both queues are published, and waits (at most 60 s) until STOPFILE
 * exists. Exit status 0, or 1 when the board cannot be made.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "board.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tools_forged_gemm STOPFILE\n");
        return 2;
    }
    struct gp_board b;
    const char *why;
    if (gp_board_open("forged-gemm", &b, &why) != 0) {
        fprintf(stderr, "tools_forged_gemm: the board %s\n", why);
        return 1;
    }
    for (int device = 0; device < 2; device++) {
        struct gp_board_slot *s = gp_board_claim(&b);
        if (!s) {
            fprintf(stderr, "tools_forged_gemm: the board is full\n");
            return 1;
        }
        s->device = device;
        atomic_store(&s->unused_queues, 3); /* so that top --all --json gives each an object */
        atomic_store(&s->st.priority, GP_RECORD_NO_PRIORITY);
        atomic_store(&s->gemm.sliced, UINT64_MAX);
        atomic_store(&s->gemm.slices, UINT64_MAX - 1);
        for (int i = 0; i < GP_RECORD_GEMM_WHOLE_COUNT; i++)
            atomic_store(&s->gemm.whole[i], UINT32_MAX);
        gp_board_publish_record(&b, s);
    }
    /* Two lower queues whose longest command is absurd: 2^32-1 microseconds, and 2^31 (negative,
     * to a reader that took the word as signed). */
    static const uint32_t longest[] = {UINT32_MAX, UINT32_C(1) << 31};
    for (unsigned i = 0; i < sizeof longest / sizeof longest[0]; i++) {
        struct gp_board_slot *s = gp_board_claim(&b);
        if (!s) {
            fprintf(stderr, "tools_forged_gemm: the board is full\n");
            return 1;
        }
        s->device = 0;
        s->stream = 0xf00 + i;
        atomic_store(&s->st.priority, -10);
        atomic_store(&s->st.gate, XQ_GATE_THROTTLED | XQ_GATE_TRACKED);
        atomic_store(&s->longest_us, longest[i]);
        gp_board_publish(&b, s);
    }
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 600 && access(argv[1], F_OK) != 0; i++)
        usleep(100000);
    gp_board_close(&b);
    return 0;
}
