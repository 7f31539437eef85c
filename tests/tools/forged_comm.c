/*
 * forged_comm.c - a process with two queues on its board whose command names differ only in a
 * byte that is not UTF-8 ("x\xff" and "x\xfe"), and alike in every other label gpuprio metrics
 * gives them (pid, device, stream, priority): as a process of the user's could write its own
 * board. Both print as command="x<U+FFFD>", so metrics must write their series once (it wrote
 * both, a duplicate series for which a scraper refuses the whole exposition), for metrics.sh.
 *
 *   tools_forged_comm STOPFILE
 *
 * Its board is its user's for device key "forged" in GPUPRIO_BOARD_DIR. It prints "ready" once
 * both slots are live, and waits (at most 60 s) until STOPFILE exists. Exit status 0, or 1 when the
 * board cannot be made.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "board.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tools_forged_comm STOPFILE\n");
        return 2;
    }
    struct gp_board b;
    const char *why;
    if (gp_board_open("forged", &b, &why) != 0) {
        fprintf(stderr, "tools_forged_comm: the board %s\n", why);
        return 1;
    }
    static const char *const comms[] = {"x\xff", "x\xfe"};
    for (int i = 0; i < 2; i++) {
        struct gp_board_slot *s = gp_board_claim(&b);
        if (!s) {
            fprintf(stderr, "tools_forged_comm: the board is full\n");
            return 1;
        }
        s->stream = 0x5eed;
        s->device = 0;
        memset(s->comm, 0, sizeof s->comm);
        memcpy(s->comm, comms[i], strlen(comms[i]));
        gp_board_publish(&b, s);
    }
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 600 && access(argv[1], F_OK) != 0; i++)
        usleep(100000);
    gp_board_close(&b);
    return 0;
}
