/*
 * hip_api_check.c - compile-time check of hip_api.def against the HIP headers. Nothing here runs;
 * the file only has to compile (gcc and clang, -Wall -Wextra -Werror):
 *
 *   0. Every name must already be declared by the headers (hip_compat_shim.h includes the rest):
 *      it is used before step 1 declares it.
 *   1. Every entry is redeclared as `hipError_t name params;`: a parameter list that differs
 *      from the header's prototype is a "conflicting types" error.
 *   2. Every kind must be one of the known ones (GP_STREAM_OF_<kind> must exist).
 *   3. Every entry gets a function with its params that calls the real function with its args
 *      (args must fit params: count, order, types) and returns its stream expression with the
 *      type the kind promises (kinds.def's stream column): hipStream_t, hipStream_t * for
 *      STREAM_CREATE and the _IF kinds, void ** for LOOKUP, hipGraphExec_t for GRAPH_EXEC_*.
 *      The stream expression is not cast, so an expression of another type is an error too.
 *      Its cost key must convert to uint64_t without a cast (an integer: a pointer is an error).
 *   4. Every name may appear once (a second stream_of_<name> is a redefinition).
 */
#include "hip_compat_shim.h"

#include <stddef.h>
#include <stdint.h>

#include "xc_cost.h"

/*
 * Function pointers of one type, to use each name in a table. Some of the 5.2.3 prototypes are
 * marked deprecated; that is no concern of a shim that forwards them.
 */
typedef void (*gp_hip_api_check_fn)(void);
#if defined(__GNUC__) || defined(__clang__)
#define GP_DEPRECATED_OK_BEGIN                                                                     \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define GP_DEPRECATED_OK_END _Pragma("GCC diagnostic pop")
#else
#define GP_DEPRECATED_OK_BEGIN
#define GP_DEPRECATED_OK_END
#endif

/* 0. Declared by the headers. */
GP_DEPRECATED_OK_BEGIN
extern const gp_hip_api_check_fn gp_hip_api_declared[];
#define HIP_API(name, kind, stream, cost_key, params, args) (gp_hip_api_check_fn) name,
const gp_hip_api_check_fn gp_hip_api_declared[] = {
#include "hip_api.def"
    NULL};
#undef HIP_API
GP_DEPRECATED_OK_END

/* 1. Prototypes. */
#define HIP_API(name, kind, stream, cost_key, params, args) hipError_t name params;
#include "hip_api.def"
#undef HIP_API

/* 2. Kinds (src/shim/core/kinds.def), and the type each kind's stream expression has. */
#define CORE_CHECK_CONTEXT hipCtx_t
#define CORE_CHECK_HANDLE hipStream_t
#define CORE_CHECK_GRAPH_EXEC hipGraphExec_t
#include "api_check.h"

/*
 * 3. Stream expressions and argument lists. The call to the real function uses every parameter,
 * so none is unused.
 */
GP_DEPRECATED_OK_BEGIN
#define HIP_API(name, kind, stream, cost_key, params, args)                                        \
    CORE_CHECK_ENTRY(name, kind, stream, cost_key, params, args)
#include "hip_api.def"
#undef HIP_API
GP_DEPRECATED_OK_END

/* Uses every stream_of_ function, so that none is "defined but not used". */
extern const gp_hip_api_check_fn gp_hip_api_check_table[];
#define HIP_API(name, kind, stream, cost_key, params, args) (gp_hip_api_check_fn) stream_of_##name,
const gp_hip_api_check_fn gp_hip_api_check_table[] = {
#include "hip_api.def"
    NULL};
#undef HIP_API
