/*
 * async_copy.c - which asynchronous copies return at once.
 *
 * A copy whose host side is pageable (malloc, stack) is host-synchronous: it returns after it
 * has run in stream order, so after a 100 ms kernel the data is there and the stream is done
 * when hipMemcpyAsync returns (fault "pageable-async" returns early). A copy to or from
 * hipHostMalloc memory returns at once. Host memory that a copy may still be writing is read only
 * once the stream is known to be complete.
 */
#include "conf.h"

#define N 4

static void print_ints(const char *label, const int *v, int n)
{
    printf("%s:", label);
    for (int i = 0; i < n; i++)
        printf(" 0x%08x", (unsigned)v[i]);
    printf("\n");
}

int main(void)
{
    conf_init();
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    int *d = NULL, *d2 = NULL, *pinned = NULL;
    int *pageable = malloc(N * sizeof(int));
    if (!pageable)
        return 1;
    MUST(hipMalloc((void **)&d, N * sizeof(int)));
    MUST(hipMalloc((void **)&d2, N * sizeof(int)));
    MUST(hipHostMalloc((void **)&pinned, N * sizeof(int), 0));
    MUST(hipMemset(d, 0, N * sizeof(int)));
    MUST(hipMemset(d2, 0, N * sizeof(int)));

    printf("-- device to pageable host after a 100 ms kernel\n");
    memset(pageable, 0, N * sizeof(int));
    MUST(conf_launch_fill(s, d, 7, N, 100 * CONF_MS));
    SHOW("hipMemcpyAsync(pageable <- d, D2H)",
         hipMemcpyAsync(pageable, d, N * sizeof(int), hipMemcpyDeviceToHost, s));
    hipError_t q = SHOW("right after: hipStreamQuery", hipStreamQuery(s));
    if (q == hipSuccess)
        print_ints("right after: pageable", pageable, N);
    else
        printf("right after: pageable: (not read, stream busy)\n");
    MUST(hipStreamSynchronize(s));

    printf("-- pageable host to device after a 100 ms kernel\n");
    for (int i = 0; i < N; i++)
        pageable[i] = 100 + i;
    MUST(conf_launch_sleep(s, 100 * CONF_MS));
    SHOW("hipMemcpyAsync(d <- pageable, H2D)",
         hipMemcpyAsync(d, pageable, N * sizeof(int), hipMemcpyHostToDevice, s));
    SHOW("right after: hipStreamQuery", hipStreamQuery(s));
    for (int i = 0; i < N; i++)
        pageable[i] = -1; /* the copy has already taken the old contents */
    MUST(hipStreamSynchronize(s));
    int back[N];
    MUST(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
    print_ints("d", back, N);

    printf("-- hipMemcpyDtoHAsync into pageable memory\n");
    memset(pageable, 0, N * sizeof(int));
    MUST(conf_launch_fill(s, d, 8, N, 100 * CONF_MS));
    SHOW("hipMemcpyDtoHAsync(pageable <- d)", hipMemcpyDtoHAsync(pageable, d, N * sizeof(int), s));
    q = SHOW("right after: hipStreamQuery", hipStreamQuery(s));
    if (q == hipSuccess)
        print_ints("right after: pageable", pageable, N);
    else
        printf("right after: pageable: (not read, stream busy)\n");
    MUST(hipStreamSynchronize(s));

    printf("-- device to pinned host after a 100 ms kernel\n");
    memset(pinned, 0, N * sizeof(int));
    MUST(conf_launch_fill(s, d, 9, N, 100 * CONF_MS));
    SHOW("hipMemcpyAsync(pinned <- d, D2H)",
         hipMemcpyAsync(pinned, d, N * sizeof(int), hipMemcpyDeviceToHost, s));
    SHOW("right after: hipStreamQuery", hipStreamQuery(s));
    SHOW("hipStreamSynchronize", hipStreamSynchronize(s));
    print_ints("pinned", pinned, N);

    printf("-- pinned HtoD / DtoD / DtoH and hipMemcpyDefault\n");
    for (int i = 0; i < N; i++)
        pinned[i] = 0x10 + i;
    MUST(conf_launch_sleep(s, 50 * CONF_MS));
    SHOW("hipMemcpyHtoDAsync(d <- pinned)", hipMemcpyHtoDAsync(d, pinned, N * sizeof(int), s));
    SHOW("right after: hipStreamQuery", hipStreamQuery(s));
    SHOW("hipMemcpyDtoDAsync(d2 <- d)", hipMemcpyDtoDAsync(d2, d, N * sizeof(int), s));
    SHOW("hipMemcpyDtoHAsync(pinned <- d2 + 1, 4 bytes)",
         hipMemcpyDtoHAsync(pinned, d2 + 1, sizeof(int), s));
    SHOW("hipStreamSynchronize", hipStreamSynchronize(s));
    print_ints("pinned", pinned, N);
    MUST(hipMemcpy(back, d2, sizeof back, hipMemcpyDeviceToHost));
    print_ints("d2", back, N);
    for (int i = 0; i < N; i++)
        pinned[i] = 0x20 + i;
    SHOW("hipMemcpyAsync(d <- pinned, Default)",
         hipMemcpyAsync(d, pinned, N * sizeof(int), hipMemcpyDefault, s));
    SHOW("hipMemcpyAsync(d2 <- d, Default)",
         hipMemcpyAsync(d2, d, N * sizeof(int), hipMemcpyDefault, s));
    SHOW("hipStreamSynchronize", hipStreamSynchronize(s));
    MUST(hipMemcpy(back, d2, sizeof back, hipMemcpyDefault));
    print_ints("d2", back, N);

    printf("-- memsets\n");
    SHOW("hipMemsetAsync(d, 0x5a, 16 bytes)", hipMemsetAsync(d, 0x5a, N * sizeof(int), s));
    SHOW("hipMemsetD32Async(d2, 0x12345678, 3)", hipMemsetD32Async(d2, 0x12345678, N - 1, s));
    SHOW("hipMemsetAsync(d + 3, 0x01, 2 bytes)", hipMemsetAsync(d + 3, 0x01, 2, s));
    SHOW("hipMemsetD8Async(d2 + 3, 0xab, 4)", hipMemsetD8Async(d2 + 3, 0xab, 4, s));
    SHOW("hipMemsetD16Async(d2 + 3, 0xcdef, 1)", hipMemsetD16Async(d2 + 3, 0xcdef, 1, s));
    SHOW("hipStreamSynchronize", hipStreamSynchronize(s));
    MUST(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
    print_ints("d", back, N);
    MUST(hipMemcpy(back, d2, sizeof back, hipMemcpyDeviceToHost));
    print_ints("d2", back, N);
    SHOW("hipMemset(d, 0, 16 bytes)", hipMemset(d, 0, N * sizeof(int)));
    SHOW("hipMemsetD32(d, 7, 2)", hipMemsetD32(d, 7, 2));
    MUST(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
    print_ints("d", back, N);

    free(pageable);
    MUST(hipHostFree(pinned));
    MUST(hipFree(d));
    MUST(hipFree(d2));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
