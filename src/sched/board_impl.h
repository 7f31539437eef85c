/*
 * board_impl.h - what the files of the board (board.c, board_name.c, board_owner.c,
 * board_open.c, board_list.c) share and nobody else uses. board.h is the interface.
 */
#ifndef GPUPRIO_BOARD_IMPL_H
#define GPUPRIO_BOARD_IMPL_H

#include "board.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gp_clock.h"
#include "gp_conf_file.h"
#include "gp_lockrank.h"
#include "gp_options.h"

/* Whether pid runs (a zombie does not); unknown counts as running (board_owner.c). */
bool gp_board_pid_runs(uint32_t pid, uint64_t *start);

/* The liveness lock of slot s: its first byte in the board file (board_owner.c). */
struct flock gp_board_slot_lock(const struct gp_board *b, const struct gp_board_slot *s,
                                short type);

/* Reads exactly size bytes at offset; a shorter read means the file shrank (board_open.c). */
int gp_board_read_at(int fd, void *into, size_t size, off_t offset);

#endif /* GPUPRIO_BOARD_IMPL_H */
