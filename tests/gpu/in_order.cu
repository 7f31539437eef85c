/*
 * in_order.cu - CUDA port of tests/conformance/in_order.c: a stream runs its commands in
 * submission order. Kernels and host functions append their index to the stream's log; every
 * fourth command is a 20 ms kernel followed by commands that could overtake it (a host function,
 * short kernels), so any reordering shows in the log. Copies, memsets and kernels of one stream
 * also take effect in order.
 */
#include "conf_cuda.h"

#define N 16

static conf_hlog hl_a[N], hl_b[N], hl_c[N];

static void enqueue(cudaStream_t s, conf_log *log, conf_hlog *hl, int value, int i)
{
    switch (i % 4) {
    case 0:
        k_log<<<1, 1, 0, s>>>(conf_dev(log), value, 20 * CONF_MS);
        MUST(cudaGetLastError());
        break;
    case 2:
        hl->log = log;
        hl->value = value;
        MUST(cudaLaunchHostFunc(s, conf_host_log, hl));
        break;
    default:
        k_log<<<1, 1, 0, s>>>(conf_dev(log), value, 0);
        MUST(cudaGetLastError());
        break;
    }
}

static int ascending(conf_log *l, int lo, int hi)
{
    if (l->n != hi - lo)
        return 0;
    for (int i = 0; i < l->n; i++)
        if (l->v[i] != lo + i)
            return 0;
    return 1;
}

int main(void)
{
    cudaStream_t s1, s2, s3;
    MUST(cudaStreamCreate(&s1));
    MUST(cudaStreamCreate(&s2));
    MUST(cudaStreamCreate(&s3));
    conf_log *la = conf_mapped<conf_log>(1), *lb = conf_mapped<conf_log>(1),
             *lc = conf_mapped<conf_log>(1);

    for (int i = 0; i < N; i++)
        enqueue(s1, la, &hl_a[i], i, i);
    SHOW("cudaStreamSynchronize(s1)", cudaStreamSynchronize(s1));
    conf_log_print("s1 order", la);
    printf("s1 in submission order: %s\n", conf_yes(ascending(la, 0, N)));

    /* Two streams, enqueued alternately, synchronised only per stream. */
    for (int i = 0; i < N; i++) {
        enqueue(s2, lb, &hl_b[i], 100 + i, i);
        enqueue(s3, lc, &hl_c[i], 200 + i, i + 2);
    }
    SHOW("cudaStreamSynchronize(s2)", cudaStreamSynchronize(s2));
    SHOW("cudaStreamSynchronize(s3)", cudaStreamSynchronize(s3));
    conf_log_print("s2 order", lb);
    conf_log_print("s3 order", lc);
    printf("s2 in submission order: %s\n", conf_yes(ascending(lb, 100, 100 + N)));
    printf("s3 in submission order: %s\n", conf_yes(ascending(lc, 200, 200 + N)));

    int *d = NULL, *d2 = NULL, h = 0, h2 = 0;
    MUST(cudaMalloc((void **)&d, sizeof(int)));
    MUST(cudaMalloc((void **)&d2, sizeof(int)));
    MUST(cudaMemset(d2, 0, sizeof(int)));
    k_fill<<<1, 1, 0, s1>>>(d, 5, 1, 20 * CONF_MS);
    k_add<<<1, 1, 0, s1>>>(d, 1);
    MUST(cudaMemcpyAsync(d2, d, sizeof(int), cudaMemcpyDeviceToDevice, s1));
    k_add<<<1, 1, 0, s1>>>(d2, 10);
    MUST(cudaMemsetAsync(d, 0, sizeof(int), s1));
    k_add<<<1, 1, 0, s1>>>(d, 7);
    MUST(cudaGetLastError());
    SHOW("cudaStreamSynchronize(s1)", cudaStreamSynchronize(s1));
    MUST(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    MUST(cudaMemcpy(&h2, d2, sizeof h2, cudaMemcpyDeviceToHost));
    printf("d = %d (fill 5, +1, memset 0, +7)\n", h);
    printf("d2 = %d (copy of 6, +10)\n", h2);

    MUST(cudaFree(d));
    MUST(cudaFree(d2));
    MUST(cudaStreamDestroy(s1));
    MUST(cudaStreamDestroy(s2));
    MUST(cudaStreamDestroy(s3));
    return conf_done();
}
