/* lt_user.c - a library that calls cublasLtMatmul (through its PLT, as PyTorch's does): linked to
 * one stand-in cuBLASLt (lt_stand.c), or, with LT_TAG defined, holding a copy of its own (a
 * cuBLASLt linked statically into it). call_lt returns what the call returned. */
#define EXPORT __attribute__((visibility("default")))

#ifdef LT_TAG
#include "lt_stand.c"
#else
int cublasLtMatmul(void *h, void *desc, const void *alpha, const void *a, void *ad, const void *b,
                   void *bd, const void *beta, const void *c, void *cd, void *d, void *dd,
                   const void *algo, void *ws, unsigned long wss, void *stream);
#endif

EXPORT int call_lt(void);
EXPORT int call_lt(void)
{
    return cublasLtMatmul(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
}
