/*
 * real_hip.c - a program linked against the real HIP runtime (-lamdhip64) for the real-runtime
 * stage: makes the calls of calls.c, then ends as its argument says (calls.h: finish).
 *
 *   real_hip MODE
 */
#include <stdio.h>

#include "calls.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: real_hip return|exit|thread|signal\n");
        return 2;
    }
    printf("%d calls\n", show_calls());
    return finish(argv[1]);
}
