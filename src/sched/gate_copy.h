/*
 * gate_copy.h - mirrored gates that the deciders can write: a process's copy of its board's gate
 * lines in an unnamed tmpfs file, which the other processes of its user open and write.
 *
 * Where the runtime refuses to register the board's lines (a board directory off tmpfs), each
 * process's gates wait on a copy of them that it keeps up with the board (devgate.h, "Mirrored
 * gates"). Kept in private memory, the copy follows other processes' decisions only once its
 * owner's listener wakes, and never while the owner is stopped (SIGSTOP, `scontrol suspend`, a
 * debugger): what it had queued then runs beside the urgent work. So the owner keeps its copy in
 * an unnamed file on /dev/shm (O_TMPFILE: it dies with the process, nothing to clean up), open for
 * its lifetime, and says in each of its gate lines which descriptor it is (dg_line's copy_fd); a
 * decider of the same user that changes such a line opens /proc/PID/fd/N once, checks that it is
 * a regular file of its user, of the copy's size, stamped with the owner's incarnation, and writes
 * the copy too, as it writes direct gates. Deciders of other users never write our lines
 * (tenants.h); a decider that cannot open the copy (another pid namespace, a process that is not
 * dumpable, an older library's anonymous copy) only wakes the owner, as before.
 */
#ifndef GPUPRIO_GATE_COPY_H
#define GPUPRIO_GATE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "devgate.h"

/* The other processes' copies a decider has mapped on one board (its lock held): a few, the
 * processes that mirror there, each mapped once; a failed open is remembered, not retried. */
#define GC_PEERS 16
struct gc_peers {
    struct {
        uint64_t incarnation;  /* 0: unused */
        struct dg_line *lines; /* NULL: could not be mapped */
    } peer[GC_PEERS];
    unsigned next; /* the entry replaced next when all are used */
};

/* Creates and maps this process's copy (size bytes, every word open, stamped with incarnation):
 * the lines, with the file's descriptor in *fd, kept open; NULL where it cannot (then private
 * memory serves, as before). */
struct dg_line *gc_create(uint64_t incarnation, size_t size, int *fd);
/* The decider's side (board lock held): copies the word of board_line, line i of lines_size
 * bytes of lines, into the copy of its owner (process pid of the given incarnation, whose copy is
 * descriptor copy_fd - 1 there), where it can be opened. */
void gc_write(struct gc_peers *p, pid_t pid, uint64_t incarnation, uint32_t copy_fd,
              const struct dg_line *board_line, size_t i, size_t lines_size);
/* The owner of that incarnation is gone: its mapping dropped (board lock held). */
void gc_forget(struct gc_peers *p, uint64_t incarnation, size_t lines_size);
/* Drops every mapping (the child of fork, which keeps none of the parent's). */
void gc_reset(struct gc_peers *p, size_t lines_size);

#endif /* GPUPRIO_GATE_COPY_H */
