/*
 * cuda_api_names.c - never compiled: versions/gen-cuda-exports.sh runs it through the C
 * preprocessor to list the names of cuda_api.def, for the export list and the version script.
 */
#define CUDA_API(name, kind, stream, cost_key, params, args) GP_CUDA_EXPORT name
#include "cuda_api.def"

/* cuBLASLt's and cuBLAS's entry points the shim exports (shim_cublaslt.c), for their own list. */
#define LT_NAME_0(name)
#define LT_NAME_1(name) GP_CUBLASLT_EXPORT name
#define LT_API(name, exported, params, args) LT_NAME_##exported(name)
#include "../../hal/cuda/cublaslt_api.def"
#define BLAS_API(name, exported, params, args) LT_NAME_##exported(name)
#include "../../hal/cuda/cublas_api.def"
