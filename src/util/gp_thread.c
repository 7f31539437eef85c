/*
 * gp_thread.c - see gp_thread.h.
 */
#include "gp_thread.h"

#include <sys/syscall.h>
#include <unistd.h>

static _Thread_local uint64_t tid;

uint64_t gp_tid(void)
{
    if (!tid)
        tid = (uint64_t)syscall(SYS_gettid);
    return tid;
}

void gp_tid_forget(void)
{
    tid = 0;
}
