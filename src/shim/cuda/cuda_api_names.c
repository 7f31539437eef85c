/*
 * cuda_api_names.c - never compiled: versions/gen-cuda-exports.sh runs it through the C
 * preprocessor to list the names of cuda_api.def, for the export list and the version script.
 */
#define CUDA_API(name, kind, stream, cost_key, params, args) GP_CUDA_EXPORT name
#include "cuda_api.def"
