/*
 * api_check.h - what the platforms' compile-time checks of their API lists share
 * (hip_api_check.c, cuda_api_check.c): the type each kind's stream expression must have, from
 * the one list of kinds (kinds.def; a kind not there has no type, which is a compile error),
 * and the function that checks one entry. Nothing here runs.
 *
 * The includer defines CORE_CHECK_HANDLE, CORE_CHECK_CONTEXT and CORE_CHECK_GRAPH_EXEC, its
 * platform's stream, context and executable graph handle types, first.
 */
#ifndef GPUPRIO_API_CHECK_H
#define GPUPRIO_API_CHECK_H

#include <stdint.h>

#define CORE_CHECK_SHAPE_HANDLE CORE_CHECK_HANDLE
#define CORE_CHECK_SHAPE_HANDLE_PTR CORE_CHECK_HANDLE *
#define CORE_CHECK_SHAPE_FN_PTR void **
#define CORE_CHECK_SHAPE_DEVICE intptr_t
#define CORE_CHECK_SHAPE_CONTEXT CORE_CHECK_CONTEXT
#define CORE_CHECK_SHAPE_GRAPH_EXEC CORE_CHECK_GRAPH_EXEC
#define CORE_KIND(name, stream, forward) typedef CORE_CHECK_SHAPE_##stream core_stream_of_##name;
#include "kinds.def"
#undef CORE_KIND

/*
 * One entry: a function with its params that calls the real function with its args (args must
 * fit params: count, order, types) and returns its stream expression, not cast, with the type
 * its kind promises. Its cost key must convert to uint64_t without a cast (an integer; a
 * pointer is an error). A second entry of one name is a redefinition.
 */
#define CORE_CHECK_ENTRY(name, kind, stream, cost_key, params, args)                               \
    static core_stream_of_##kind stream_of_##name params                                           \
    {                                                                                              \
        (void)name args;                                                                           \
        uint64_t gp_cost_key = (cost_key);                                                         \
        (void)gp_cost_key;                                                                         \
        return (stream);                                                                           \
    }

#endif /* GPUPRIO_API_CHECK_H */
