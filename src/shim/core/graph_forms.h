/*
 * graph_forms.h - what every platform's graph wrappers share (kinds.def's GRAPH forward): their
 * declarations and the instantiation forms, generated from the platform's API list by kind, so
 * that no parameter list is written twice. A shim's graph file defines, before including this:
 *   GRAPH_RESULT              the runtime's result type (CUresult, hipError_t);
 *   GRAPH_SUCCESS             its success value;
 *   GRAPH_INSTANTIATE_FLAGS(third)  the flags of an instantiation from its form's third argument
 *                             (a _Generic over the forms' types: a form of another type is a
 *                             compile error).
 * Over the API list, GRAPH_PICK(probe) expands to MACRO where probe is a macro defined as
 * `~, MACRO`, else to nothing: only the entries a probe names generate anything.
 */
#ifndef GPUPRIO_GRAPH_FORMS_H
#define GPUPRIO_GRAPH_FORMS_H

#include <stdint.h>

#include "core.h"

#define GRAPH_PICK(...) GRAPH_PICK_(__VA_ARGS__, GRAPH_NONE, ~)
#define GRAPH_PICK_(probe, macro, ...) macro
#define GRAPH_NONE(...)
#define GRAPH_PASTE(a, b) GRAPH_PASTE_(a, b)
#define GRAPH_PASTE_(a, b) a##b
#define GRAPH_APPLY(macro, ...) macro(__VA_ARGS__)

/* graph_NAME of each entry whose kind forwards as GRAPH (CORE_FORWARD_<kind> is the name
 * CORE_FORWARD_<forward>: core.h): the call (its queue and admission ticket), the runtime's
 * function, then the caller's arguments. */
#define GRAPH_DECLARE_CORE_FORWARD_GRAPH ~, GRAPH_DECLARE
#define GRAPH_DECLARE(name, params)                                                                \
    GRAPH_RESULT graph_##name(const struct core_call *c, GRAPH_RESULT(*real) params,               \
                              CORE_ARGS params);
/* Over an API list entry (name, kind, params): its declaration where its kind forwards as GRAPH. */
#define GRAPH_DECLARE_ENTRY(name, kind, params)                                                    \
    GRAPH_PICK(GRAPH_PASTE(GRAPH_DECLARE_, CORE_FORWARD_##kind))(name, params)

/* Every instantiate form's first two arguments are the executable graph's out-parameter and the
 * graph. */
#define GRAPH_INSTANTIATED(r, exec_out, graph, third, ...)                                         \
    do {                                                                                           \
        if ((r) == GRAPH_SUCCESS && core_graph_on() && (exec_out))                                 \
            core_graph_instantiated((uintptr_t) * (exec_out), (uintptr_t)(graph),                  \
                                    GRAPH_INSTANTIATE_FLAGS(third));                               \
    } while (0)

/* graph_NAME of each entry of an instantiate kind, all alike (an instantiate kind missing here
 * leaves its entries' graph_NAME undefined: a link error). */
#define GRAPH_INSTANTIATE_FORM(name, params, args)                                                 \
    GRAPH_RESULT graph_##name(const struct core_call *c, GRAPH_RESULT(*real) params,               \
                              CORE_ARGS params)                                                    \
    {                                                                                              \
        (void)c;                                                                                   \
        GRAPH_RESULT r = real args;                                                                \
        GRAPH_APPLY(GRAPH_INSTANTIATED, r, CORE_ARGS args, ~);                                     \
        return r;                                                                                  \
    }
#define GRAPH_FORM_GRAPH_INSTANTIATE ~, GRAPH_INSTANTIATE_FORM
#define GRAPH_FORM_GRAPH_INSTANTIATE_IF ~, GRAPH_INSTANTIATE_FORM
#define GRAPH_FORM_GRAPH_INSTANTIATE_IF_PT ~, GRAPH_INSTANTIATE_FORM
/* Over an API list entry: its graph_NAME where its kind is an instantiation. */
#define GRAPH_INSTANTIATE_ENTRY(name, kind, params, args)                                          \
    GRAPH_PICK(GRAPH_FORM_##kind)(name, params, args)

/* The executable graph's destruction: the runtime lets it be destroyed while launches of it
 * run, and so its gated copy. */
#define GRAPH_EXEC_DESTROY_FORM(name, exec_type)                                                   \
    GRAPH_RESULT graph_##name(const struct core_call *c, GRAPH_RESULT (*real)(exec_type),          \
                              exec_type exec)                                                      \
    {                                                                                              \
        (void)c;                                                                                   \
        GRAPH_RESULT r = real(exec);                                                               \
        if (r == GRAPH_SUCCESS)                                                                    \
            core_graph_exec_destroyed((uintptr_t)exec);                                            \
        return r;                                                                                  \
    }

/* A launch or upload form: graph_NAME(c, real, exec, stream), through core_graph_launch, with
 * `forward` the platform's cast back to its function type. */
#define GRAPH_LAUNCH_FORM(name, exec_type, stream_type, forward, upload, pt)                       \
    GRAPH_RESULT graph_##name(const struct core_call *c,                                           \
                              GRAPH_RESULT (*real)(exec_type, stream_type), exec_type exec,        \
                              stream_type stream)                                                  \
    {                                                                                              \
        return (GRAPH_RESULT)core_graph_launch(c, forward, (void (*)(void))real, (uintptr_t)exec,  \
                                               (uintptr_t)stream, upload, pt);                     \
    }

#endif /* GPUPRIO_GRAPH_FORMS_H */
