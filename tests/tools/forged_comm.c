/*
 * forged_comm.c - a process with two queues on its board whose command names differ only in a
 * byte that is not UTF-8 ("x\xff" and "x\xfe"), and alike in every other label gpuprio metrics
 * gives them (pid, device, stream, priority): as a process of the user's could write its own
 * board. Both print as command="x<U+FFFD>", so metrics must write their series once (it wrote
 * both, a duplicate series for which a scraper refuses the whole exposition), for metrics.sh.
 *
 *   tools_forged_comm STOPFILE [steering|priorities]
 *
 * With steering, its three queues' command names hold what would steer a terminal if printed as
 * it is (top_controls.sh): "a" U+009B "2J" (C1 CSI, a screen clear), "b" U+202E "rtl" (a
 * right-to-left override) and "c" U+2066 "iso" (a left-to-right isolate), as UTF-8.
 *
 * With priorities, its three queues (commands "p-max", "p-min", "p-ok") say priorities 2^31 - 1,
 * -2^31 and 7: the first two no gpuprio writes (top_controls.sh: no command shows them).
 *
 * Its board is its user's for device key "forged" in GPUPRIO_BOARD_DIR. It prints "ready" once
 * its slots are live, and waits (at most 60 s) until STOPFILE exists. Exit status 0, or 1 when the
 * board cannot be made.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "board.h"

int main(int argc, char **argv)
{
    bool steering = argc == 3 && strcmp(argv[2], "steering") == 0;
    bool priorities = argc == 3 && strcmp(argv[2], "priorities") == 0;
    if (argc != 2 && !steering && !priorities) {
        fprintf(stderr, "usage: tools_forged_comm STOPFILE [steering|priorities]\n");
        return 2;
    }
    struct gp_board b;
    const char *why;
    if (gp_board_open("forged", &b, &why) != 0) {
        fprintf(stderr, "tools_forged_comm: the board %s\n", why);
        return 1;
    }
    static const char *const plain[] = {"x\xff", "x\xfe", NULL};
    static const char *const steers[] = {"a\xc2\x9b"
                                         "2J",
                                         "b\xe2\x80\xae"
                                         "rtl",
                                         "c\xe2\x81\xa6"
                                         "iso",
                                         NULL};
    static const char *const prioritised[] = {"p-max", "p-min", "p-ok", NULL};
    static const int32_t priority_of[] = {INT32_MAX, INT32_MIN, 7};
    const char *const *comms = steering ? steers : priorities ? prioritised : plain;
    for (int i = 0; comms[i]; i++) {
        struct gp_board_slot *s = gp_board_claim(&b);
        if (!s) {
            fprintf(stderr, "tools_forged_comm: the board is full\n");
            return 1;
        }
        s->stream = 0x5eed;
        s->device = 0;
        memset(s->comm, 0, sizeof s->comm);
        memcpy(s->comm, comms[i], strlen(comms[i]));
        if (priorities)
            atomic_store(&s->st.priority, priority_of[i]);
        gp_board_publish(&b, s);
    }
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 600 && access(argv[1], F_OK) != 0; i++)
        usleep(100000);
    gp_board_close(&b);
    return 0;
}
