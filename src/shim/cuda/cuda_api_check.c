/*
 * cuda_api_check.c - compile-time check of cuda_api.def against cuda.h. Nothing here runs; the
 * file only has to compile (gcc and clang, -Wall -Wextra -Werror):
 *
 *   0. Every name must be declared by cuda.h (through cuda_compat.h, so under its own exported
 *      name), and must not be a macro there: a name cuda.h renames (cuMemcpyHtoDAsync to
 *      cuMemcpyHtoDAsync_v2, say) would make the shim define the renamed symbol instead.
 *   1. Every entry is redeclared as `CUresult name params;`: a parameter list that differs from
 *      cuda.h's prototype is a "conflicting types" error.
 *   2. Every kind must be one of the known ones (GP_STREAM_OF_<kind> must exist).
 *   3. Every entry gets a function with its params that calls the real function with its args
 *      (args must fit params: count, order, types) and returns its stream expression with the
 *      type the kind promises: CUstream, CUstream * for STREAM_CREATE, void ** for LOOKUP. The
 *      stream expression is not cast, so an expression of another type is an error too.
 *      Its cost key must convert to uint64_t without a cast (an integer: a pointer is an error).
 *   4. Every name may appear once (a second stream_of_<name> is a redefinition).
 */
#include "cuda_compat.h"

#include <stddef.h>
#include <stdint.h>

#include "xc_cost.h"

typedef void (*gp_cuda_api_check_fn)(void);
#define GP_DEPRECATED_OK_BEGIN                                                                     \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define GP_DEPRECATED_OK_END _Pragma("GCC diagnostic pop")

/* 0. Declared by cuda.h, and not macros (a macro expands to a name of another length). */
GP_DEPRECATED_OK_BEGIN
extern const gp_cuda_api_check_fn gp_cuda_api_declared[];
#define CUDA_API(name, kind, stream, cost_key, params, args) (gp_cuda_api_check_fn) name,
const gp_cuda_api_check_fn gp_cuda_api_declared[] = {
#include "cuda_api.def"
    NULL};
#undef CUDA_API
GP_DEPRECATED_OK_END

#define GP_XSTR(x) GP_STR(x)
#define GP_STR(x) #x
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    _Static_assert(sizeof(GP_XSTR(name)) == sizeof(#name), "cuda.h renames " #name);
#include "cuda_api.def"
#undef CUDA_API

/* 1. Prototypes. */
#define CUDA_API(name, kind, stream, cost_key, params, args) CUresult name params;
#include "cuda_api.def"
#undef CUDA_API

/* 2. Kinds (src/shim/core/kinds.def), and the type each kind's stream expression has. */
#define CORE_CHECK_CONTEXT CUcontext
#define CORE_CHECK_HANDLE CUstream
#define CORE_CHECK_GRAPH_EXEC CUgraphExec
#include "api_check.h"

/*
 * 3. Stream expressions and argument lists. The call to the real function uses every parameter,
 * so none is unused.
 */
GP_DEPRECATED_OK_BEGIN
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    CORE_CHECK_ENTRY(name, kind, stream, cost_key, params, args)
#include "cuda_api.def"
#undef CUDA_API
GP_DEPRECATED_OK_END

/* Uses every stream_of_ function, so that none is "defined but not used". */
extern const gp_cuda_api_check_fn gp_cuda_api_check_table[];
#define CUDA_API(name, kind, stream, cost_key, params, args)                                       \
    (gp_cuda_api_check_fn) stream_of_##name,
const gp_cuda_api_check_fn gp_cuda_api_check_table[] = {
#include "cuda_api.def"
    NULL};
#undef CUDA_API
