/*
 * gp_thread.c - see gp_thread.h.
 */
#include "gp_thread.h"

#include <stdatomic.h>
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

uint64_t gp_thread_serial(void)
{
    static atomic_uint_fast64_t last;
    static _Thread_local uint64_t serial;
    if (!serial)
        serial = (uint64_t)atomic_fetch_add(&last, 1) + 1;
    return serial;
}
