/*
 * gp_thread.h - the calling thread's kernel id, cached per thread.
 */
#ifndef GPUPRIO_THREAD_H
#define GPUPRIO_THREAD_H

#include <stdint.h>

uint64_t gp_tid(void);
/* In the child of fork: the forking thread's cached id is the parent's. */
void gp_tid_forget(void);

#endif /* GPUPRIO_THREAD_H */
