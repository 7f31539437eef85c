/* lt_stand.c - a stand-in cuBLASLt whose cublasLtMatmul returns LT_TAG: built as
 * libcublasLt.so.12 and .so.13, so that callers.sh can see which one a call reached. */
#define EXPORT __attribute__((visibility("default")))

EXPORT int cublasLtMatmul(void *h, void *desc, const void *alpha, const void *a, void *ad,
                          const void *b, void *bd, const void *beta, const void *c, void *cd,
                          void *d, void *dd, const void *algo, void *ws, unsigned long wss,
                          void *stream);
EXPORT int cublasLtMatmul(void *h, void *desc, const void *alpha, const void *a, void *ad,
                          const void *b, void *bd, const void *beta, const void *c, void *cd,
                          void *d, void *dd, const void *algo, void *ws, unsigned long wss,
                          void *stream)
{
    (void)h, (void)desc, (void)alpha, (void)a, (void)ad, (void)b, (void)bd, (void)beta, (void)c;
    (void)cd, (void)d, (void)dd, (void)algo, (void)ws, (void)wss, (void)stream;
    return LT_TAG;
}
