/*
 * graph_prog.h - what the two graph_gates programs share (graph_prog.c): tests/cuda/graph_gates.c
 * over the fake driver and tests/hipgraph/graph_gates.c over the simulator. The chain's kernel
 * arguments, the neighbour's side of the FIFO protocol graph_gates.sh and graph_chaos.sh (this
 * directory) speak, the cue, and what the chaos cases say on stderr for graph_chaos.sh; nothing
 * here calls a runtime, so each program keeps its own calls and hands the neighbour its bursts.
 * Two programs, so these names carry no prefix: they are the programs' vocabulary.
 */
#ifndef GPUPRIO_TEST_GRAPH_PROG_H
#define GPUPRIO_TEST_GRAPH_PROG_H

#include <stdbool.h>

#define KERNELS 40
#define LAUNCHES 4
#define CHAOS_LAUNCHES 24
#define FIRST_THREAD_LAUNCHES 4

/* The chain's kernel arguments, each {unsigned *index, long *us}: params[i] kernel i's (index
 * i + 1, once chain_params filled them), other_params and other_params2 a changed kernel's
 * (indexes 1000 and 2000); kernels of kernel_us (3 ms). */
extern long kernel_us;
extern void *params[KERNELS][2], *other_params[2], *other_params2[2];
void chain_params(void);

/* Sleeps us microseconds, through signals. */
void sleep_us(long us);

/* Under gpuprio (its API found), returns once its watcher counted the launches on stream
 * complete, which it does after learning their time (at most 10 s; FATAL printed otherwise).
 * Without gpuprio, nothing. */
void drain(void *stream);

/* One line read through FIFO (false: it cannot be opened). */
bool line_through(const char *fifo);

/* Cues the neighbour: a line through the FIFO go, unless go is NULL; FATAL and exit 1 when it
 * cannot be written. */
void cue(const char *go);

/* The neighbour's modes: graph_gates high FIFO [exit|hold]. */
enum high_mode { HIGH_IDLE, HIGH_EXIT, HIGH_HOLD };

/* Whether argv is "graph_gates high FIFO [exit|hold]", its mode then in *mode. */
bool high_args(int argc, char **argv, enum high_mode *mode);

/*
 * The neighbour, joined at high priority (its first kernel run): says "ready" on stdout, and once
 * cued through FIFO bursts (burst: the runtime's burst, kernels of 2 ms); then returns false
 * with HIGH_EXIT (the process exits: its queue leaves the board, the low program is no longer
 * held by gates), or stays joined and idle until another line through FIFO (the low program stays
 * held by gates meanwhile) and returns true. With HIGH_HOLD (graph_chaos.sh's cases) it bursts
 * back to back (five: five kernels, waited for) until a line comes instead of burst, so it can be
 * killed or stopped while it holds the low program back, then idles until another line. FATAL
 * and exit 1 where FIFO cannot be read.
 */
bool neighbour(const char *fifo, enum high_mode mode, void (*five)(void), void (*burst)(void));

/* fn(arg) on a thread of its own, waited for: false, FATAL said, where that failed. */
bool run_thread(void *(*fn)(void *), void *arg);

/* On stderr, for graph_chaos.sh: launch n was "called" or has "returned", at the wall clock's ms
 * (as the fake and the simulator say when a wait node holds and opens), so that a launch held on
 * the host shows as one called and not yet returned. */
void say_launch(int n, const char *what);

/* After the first thread's launches and the neighbour's cue (graph_chaos.sh's thread cases):
 * waits until a wait node holds them (holding: how many wait nodes hold now; at most 10 s), and
 * says on stderr whether one did, which graph_chaos.sh looks for. */
void wait_until_holding(int (*holding)(void));

#endif /* GPUPRIO_TEST_GRAPH_PROG_H */
