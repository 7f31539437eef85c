/*
 * gp_thread.h - the calling thread's kernel id, cached per thread; a serial number per thread; a
 * pause for spin loops.
 */
#ifndef GPUPRIO_THREAD_H
#define GPUPRIO_THREAD_H

#include <stdint.h>

uint64_t gp_tid(void);
/* In the child of fork: the forking thread's cached id is the parent's. */
void gp_tid_forget(void);
/* A number of the calling thread's that no other thread of the process has had or will have
 * (from 1): unlike a pthread_t or a kernel id, never handed on to a later thread. */
uint64_t gp_thread_serial(void);

/* In a spin loop: lets the core's other hardware thread run and saves power while waiting. */
static inline void gp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif /* GPUPRIO_THREAD_H */
