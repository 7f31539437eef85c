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

struct core_call;

/*
 * Why a graph launch went as the application's own executable graph, without gates inside:
 * X(name, what gpuprio says). The first group passes (the next launch may be gated); from
 * FEW_KERNELS on, the executable graph stays whole for good. NO_RUNTIME's text is the platform's
 * (gp_graph_ops.no_runtime): the version that has what gpuprio needs.
 */
#define CORE_GRAPH_WHOLE_REASONS(X)                                                                \
    X(NOT_GATED, "its stream was not held by gates")                                               \
    X(NOT_LEARNED, "its GPU time was not learned yet")                                             \
    X(SHORT, "its learned GPU time is within one gate interval")                                   \
    X(CAPTURING, "a stream capture was in progress")                                               \
    X(OTHER_STREAM, "it was launched on another stream than its previous launch")                  \
    X(ERROR_PENDING, "an error of the application's was pending on its thread")                    \
    X(UNKNOWN, "gpuprio did not see it instantiated")                                              \
    X(FEW_KERNELS, "it has fewer than two kernel nodes")                                           \
    X(MEM_NODES, "it has memory allocation or free nodes")                                         \
    X(CONDITIONAL, "it has conditional nodes")                                                     \
    X(CHILD_GRAPH, "it has child graph nodes")                                                     \
    X(OTHER_NODES, "it has nodes of a type gpuprio does not know")                                 \
    X(DEVICE_LAUNCH, "it was instantiated for launches from the device")                           \
    X(DEVICE_UPDATABLE, "it has device-updatable kernel nodes")                                    \
    X(CHANGED, "the application changed its executable graph")                                     \
    X(NO_PLACE, "no kernel node of it follows another where a wait node could go")                 \
    X(NO_RUNTIME, NULL)                                                                            \
    X(FAILED, "a driver call failed while gpuprio copied it or built its gated copy")

enum core_graph_whole {
#define CORE_GRAPH_WHOLE_ENUM(name, what) CORE_GRAPH_WHOLE_##name,
    CORE_GRAPH_WHOLE_REASONS(CORE_GRAPH_WHOLE_ENUM)
#undef CORE_GRAPH_WHOLE_ENUM
        CORE_GRAPH_WHOLE_COUNT
};

/* What gpuprio says for reason r. */
const char *core_graph_whole_reason(enum core_graph_whole r);

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
