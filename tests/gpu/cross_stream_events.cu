/*
 * cross_stream_events.cu - CUDA port of tests/conformance/cross_stream_events.c:
 * cudaStreamWaitEvent orders one stream after another. Stream A runs a 100 ms kernel, then a
 * kernel that writes x = 42, then records e; B waits for e and reads x with a kernel, C waits
 * for e and copies x. Both must see 42; a wait covers the event's most recent record only.
 */
#include "conf_cuda.h"

static int read_int(const int *d)
{
    int h = 0;
    MUST(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    return h;
}

int main(void)
{
    cudaStream_t sa, sb, sc;
    cudaEvent_t e;
    MUST(cudaStreamCreate(&sa));
    MUST(cudaStreamCreate(&sb));
    MUST(cudaStreamCreate(&sc));
    MUST(cudaEventCreate(&e));
    int *x = NULL, *y = NULL, *z = NULL;
    MUST(cudaMalloc((void **)&x, sizeof(int)));
    MUST(cudaMalloc((void **)&y, sizeof(int)));
    MUST(cudaMalloc((void **)&z, sizeof(int)));
    MUST(cudaMemset(x, 0, sizeof(int)));
    MUST(cudaMemset(y, 0, sizeof(int)));
    MUST(cudaMemset(z, 0, sizeof(int)));

    printf("-- B and C wait for an event recorded after A's kernels\n");
    k_sleep<<<1, 1, 0, sa>>>(100 * CONF_MS);
    k_fill<<<1, 1, 0, sa>>>(x, 42, 1, 0);
    SHOW("cudaEventRecord(e, A)", cudaEventRecord(e, sa));
    SHOW("cudaStreamWaitEvent(B, e, 0)", cudaStreamWaitEvent(sb, e, 0));
    k_copy_add<<<1, 1, 0, sb>>>(y, x, 1);
    SHOW("cudaStreamWaitEvent(C, e, 0)", cudaStreamWaitEvent(sc, e, 0));
    MUST(cudaMemcpyAsync(z, x, sizeof(int), cudaMemcpyDeviceToDevice, sc));
    conf_sleep_ms(30);
    SHOW("after 30 ms: cudaEventQuery(e)", cudaEventQuery(e));
    SHOW("after 30 ms: cudaStreamQuery(B)", cudaStreamQuery(sb));
    SHOW("after 30 ms: cudaStreamQuery(C)", cudaStreamQuery(sc));
    SHOW("cudaStreamSynchronize(B)", cudaStreamSynchronize(sb));
    SHOW("cudaStreamSynchronize(C)", cudaStreamSynchronize(sc));
    SHOW("then cudaEventQuery(e)", cudaEventQuery(e));
    SHOW("then cudaStreamQuery(A)", cudaStreamQuery(sa));
    printf("B's kernel read x + 1 = %d\n", read_int(y));
    printf("C's copy of x = %d\n", read_int(z));

    printf("-- the wait covers the event's most recent record\n");
    k_fill<<<1, 1, 0, sa>>>(x, 1, 1, 0);
    SHOW("cudaEventRecord(e, A) #1", cudaEventRecord(e, sa));
    k_sleep<<<1, 1, 0, sa>>>(60 * CONF_MS);
    k_fill<<<1, 1, 0, sa>>>(x, 2, 1, 0);
    SHOW("cudaEventRecord(e, A) #2", cudaEventRecord(e, sa));
    SHOW("cudaStreamWaitEvent(C, e, 0)", cudaStreamWaitEvent(sc, e, 0));
    MUST(cudaMemcpyAsync(z, x, sizeof(int), cudaMemcpyDeviceToDevice, sc));
    SHOW("cudaStreamSynchronize(C)", cudaStreamSynchronize(sc));
    printf("C's copy of x = %d\n", read_int(z));

    printf("-- a record made after the wait call does not delay the waiter\n");
    SHOW("cudaEventSynchronize(e)", cudaEventSynchronize(e));
    SHOW("cudaStreamWaitEvent(C, e, 0)", cudaStreamWaitEvent(sc, e, 0));
    k_sleep<<<1, 1, 0, sa>>>(100 * CONF_MS);
    SHOW("cudaEventRecord(e, A)", cudaEventRecord(e, sa));
    MUST(cudaMemsetAsync(z, 0, sizeof(int), sc));
    SHOW("cudaStreamSynchronize(C)", cudaStreamSynchronize(sc));
    SHOW("then cudaStreamQuery(A)", cudaStreamQuery(sa));
    SHOW("then cudaEventQuery(e)", cudaEventQuery(e));
    SHOW("cudaStreamSynchronize(A)", cudaStreamSynchronize(sa));

    printf("-- flags\n");
    SHOW("cudaStreamWaitEvent(B, e, 0x80)", cudaStreamWaitEvent(sb, e, 0x80));
    SHOW("cudaGetLastError", cudaGetLastError());

    MUST(cudaFree(x));
    MUST(cudaFree(y));
    MUST(cudaFree(z));
    MUST(cudaEventDestroy(e));
    MUST(cudaStreamDestroy(sa));
    MUST(cudaStreamDestroy(sb));
    MUST(cudaStreamDestroy(sc));
    return conf_done();
}
