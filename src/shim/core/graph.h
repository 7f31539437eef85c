/*
 * graph.h - gates inside a lower priority's graph launches (GPUPRIO_GRAPH_GATE_US; graph.c,
 * docs/design.md "Gates inside graphs"): what every platform's shim shares of them. The shim
 * forwards its runtime's graph instantiation, launch, change and destruction through these; what
 * the runtime does (reading and copying a graph, building its gated copy, steering its wait
 * nodes) is the platform's struct gp_graph_ops (platform.h), and where wait nodes go is
 * graph_place.h's. A platform without graph ops gates no graph, and these do nothing.
 *
 * Handles are the platform's, as uintptr_t (executable graphs, graphs, streams).
 */
#ifndef GPUPRIO_CORE_GRAPH_H
#define GPUPRIO_CORE_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "platform.h"

struct core_call;

/* What gpuprio says for reason r. */
const char *core_graph_whole_reason(enum gp_graph_whole r);

/* Whether graphs are gated: the platform has graph ops and GPUPRIO_GRAPH_GATE_US is not 0 (read
 * at each call), and, where the platform's are off by default, the environment sets it. */
bool core_graph_on(void);

/* The runtime instantiated the executable graph exec from graph, with the instantiation's flags,
 * on the calling thread (core_graph_on() was true): it is remembered, with a copy of graph where
 * it can be gated. Never fails: an executable graph not remembered is launched whole. */
void core_graph_instantiated(uintptr_t exec, uintptr_t graph, unsigned long long flags);

/* An entry of kind GRAPH_EXEC_CHANGE is about to be forwarded for the executable graph exec
 * (core.h's CORE_FORWARD_GRAPH_CHANGE): it is launched as the application's own from then on. */
void core_graph_exec_changing(void *exec);

/* The runtime destroyed the executable graph exec (the call succeeded): its gated copy goes too,
 * and the runtime frees it once launches made of it are done. */
void core_graph_exec_destroyed(uintptr_t exec);

/* Says what was done (how many launches were gated, with how many gates, and how many were left
 * whole, by reason) at GPUPRIO_LOG=info, where any launch was seen. From the shim's destructor,
 * so that the line keeps its place among the shim's other lines at exit. */
void core_graph_say_counts(void);

/* Calls the runtime's launch or upload function real (the shim's type, cast back by forward) on
 * exec and stream, with the caller's stream as given: the platform's result. */
typedef int (*core_graph_forward)(void (*real)(void), uintptr_t exec, uintptr_t stream);

/*
 * A launch (upload: an upload) of the application's executable graph exec on stream, call c
 * (its queue and admission ticket), through forward and real; pt: a per-thread-default-stream
 * form, where 0 is the per-thread stream. It goes to exec's gated copy where there is one to go
 * to, else to exec. The runtime's result for what the application asked (a failed launch of the
 * copy is made again with exec).
 */
int core_graph_launch(const struct core_call *c, core_graph_forward forward, void (*real)(void),
                      uintptr_t exec, uintptr_t stream, bool upload, bool pt);

#endif /* GPUPRIO_CORE_GRAPH_H */
