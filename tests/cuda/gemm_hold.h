/*
 * gemm_hold.h - the GEMM test programs' (gemm_slices.c, gemmex_slices.c) hold: with GEMM_HOLD (a
 * FIFO), says "held" and waits for a line from it, so that gemm.sh can look at the process's
 * record with gpuprio top and metrics while it lives.
 */
#ifndef GPUPRIO_TEST_GEMM_HOLD_H
#define GPUPRIO_TEST_GEMM_HOLD_H

#include <stdio.h>
#include <stdlib.h>

static inline void gemm_hold(void)
{
    const char *fifo = getenv("GEMM_HOLD");
    if (!fifo)
        return;
    printf("held\n");
    FILE *f = fopen(fifo, "r");
    char line[16];
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0'; /* end of file: go on too */
        fclose(f);
    }
}

#endif /* GPUPRIO_TEST_GEMM_HOLD_H */
