/*
 * capture_graph.c - stream capture and graph replay.
 *
 * Work put on a capturing stream is recorded, not run (fault "capture-runs" runs it), and a graph
 * launch replays it in recorded order. Then the error rules: ending a capture that is not active,
 * capturing the null stream, synchronising or querying a capturing stream, and using the legacy
 * null stream during a global-mode capture.
 */
#include "conf.h"

#define SENTINEL_GRAPH ((hipGraph_t)(uintptr_t)0x5e57)

static conf_log order, scratch;

static void print_status(const char *label, hipStream_t s)
{
    hipStreamCaptureStatus st = (hipStreamCaptureStatus)99;
    hipError_t r = hipStreamIsCapturing(s, &st);
    printf("%s -> %s, %s\n", label, conf_err(r), conf_capture_status(st));
}

static void print_dev(const char *label, const int *dev, int n)
{
    int v[4] = {0};
    MUST(hipMemcpy(v, dev, (size_t)n * sizeof(int), hipMemcpyDeviceToHost));
    printf("%s:", label);
    for (int i = 0; i < n; i++)
        printf(" 0x%x", (unsigned)v[i]);
    printf("\n");
}

/* Ends a capture that is expected to have been invalidated; checks the graph comes back NULL. */
static void end_invalidated(hipStream_t s)
{
    hipGraph_t g = SENTINEL_GRAPH;
    SHOW("hipStreamEndCapture", hipStreamEndCapture(s, &g));
    printf("graph is NULL: %s\n", conf_yes(g == NULL));
    if (g != NULL && g != SENTINEL_GRAPH)
        MUST(hipGraphDestroy(g));
    print_status("hipStreamIsCapturing", s);
}

int main(void)
{
    conf_init();
    hipStream_t s, s2;
    hipEvent_t e, e2;
    hipGraph_t g = NULL, gj = NULL;
    hipGraphExec_t ge = NULL, ge2 = NULL, gje = NULL;
    int *a = NULL, *b = NULL;
    MUST(hipStreamCreate(&s));
    MUST(hipStreamCreate(&s2));
    MUST(hipEventCreate(&e));
    MUST(hipEventCreate(&e2));
    MUST(hipMalloc((void **)&a, 3 * sizeof(int)));
    MUST(hipMalloc((void **)&b, 2 * sizeof(int)));
    MUST(hipMemset(a, 0, 3 * sizeof(int)));
    MUST(hipMemset(b, 0, 2 * sizeof(int)));
    conf_log_reset(&order);

    printf("-- capture a kernel, a memset, a kernel, a copy, a kernel\n");
    print_status("hipStreamIsCapturing before", s);
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    print_status("hipStreamIsCapturing during", s);
    SHOW("kernel log 1", conf_launch_log(s, &order, 1, 20 * CONF_MS));
    SHOW("hipMemsetAsync(a[0], 0x05, 4 bytes)", hipMemsetAsync(a, 0x05, sizeof(int), s));
    SHOW("kernel a[1] += 1", conf_launch_add(s, a + 1, 1));
    SHOW("hipMemcpyAsync(a[2] <- a[1], D2D)",
         hipMemcpyAsync(a + 2, a + 1, sizeof(int), hipMemcpyDeviceToDevice, s));
    SHOW("kernel log 2", conf_launch_log(s, &order, 2, 0));
    conf_sleep_ms(30);
    printf("log entries during capture (after 30 ms): %d\n", conf_log_count(&order));
    SHOW("hipStreamEndCapture(s)", hipStreamEndCapture(s, &g));
    printf("graph returned: %s\n", conf_yes(g != NULL));
    print_status("hipStreamIsCapturing after", s);
    printf("log entries after capture: %d\n", conf_log_count(&order));
    print_dev("a after capture", a, 3);
    size_t n = 0;
    SHOW("hipGraphGetNodes(count)", hipGraphGetNodes(g, NULL, &n));
    printf("nodes: %zu\n", n);

    printf("-- instantiate and launch three times\n");
    SHOW("hipGraphInstantiate", hipGraphInstantiate(&ge, g, NULL, NULL, 0));
    SHOW("hipGraphLaunch #1", hipGraphLaunch(ge, s));
    SHOW("hipGraphLaunch #2", hipGraphLaunch(ge, s));
    SHOW("hipGraphLaunch #3", hipGraphLaunch(ge, s));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    conf_log_print("order", &order);
    print_dev("a", a, 3);
    SHOW("hipGraphUpload", hipGraphUpload(ge, s));
    SHOW("hipGraphInstantiateWithFlags(0)", hipGraphInstantiateWithFlags(&ge2, g, 0));
    SHOW("hipGraphLaunch(other exec, s2)", hipGraphLaunch(ge2, s2));
    SHOW("hipStreamSynchronize(s2)", hipStreamSynchronize(s2));
    conf_log_print("order", &order);
    print_dev("a", a, 3);

    printf("-- a stream that waits on a captured event joins the capture\n");
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("kernel b[0] += 1 on s", conf_launch_add(s, b, 1));
    SHOW("hipEventRecord(e, s)", hipEventRecord(e, s));
    SHOW("hipStreamWaitEvent(s2, e, 0)", hipStreamWaitEvent(s2, e, 0));
    print_status("hipStreamIsCapturing(s2)", s2);
    SHOW("kernel b[1] += 10 on s2", conf_launch_add(s2, b + 1, 10));
    SHOW("hipStreamEndCapture(s2)", hipStreamEndCapture(s2, &gj));
    SHOW("hipEventRecord(e2, s2)", hipEventRecord(e2, s2));
    SHOW("hipStreamWaitEvent(s, e2, 0)", hipStreamWaitEvent(s, e2, 0));
    SHOW("hipStreamEndCapture(s)", hipStreamEndCapture(s, &gj));
    printf("graph returned: %s\n", conf_yes(gj != NULL));
    print_dev("b after capture", b, 2);
    SHOW("hipGraphInstantiate", hipGraphInstantiate(&gje, gj, NULL, NULL, 0));
    SHOW("hipGraphLaunch", hipGraphLaunch(gje, s));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    print_dev("b", b, 2);

    printf("-- capture errors\n");
    hipGraph_t g2 = SENTINEL_GRAPH;
    SHOW("hipStreamEndCapture(s) when not capturing", hipStreamEndCapture(s, &g2));
    SHOW("hipStreamBeginCapture(0)", hipStreamBeginCapture(0, hipStreamCaptureModeGlobal));
    SHOW("hipStreamBeginCapture(hipStreamLegacy)",
         hipStreamBeginCapture(hipStreamLegacy, hipStreamCaptureModeGlobal));
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("hipStreamBeginCapture(s, Global) again",
         hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("hipStreamSynchronize(s) while capturing", hipStreamSynchronize(s));
    print_status("hipStreamIsCapturing", s);
    end_invalidated(s);

    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("hipStreamQuery(s) while capturing", hipStreamQuery(s));
    print_status("hipStreamIsCapturing", s);
    end_invalidated(s);

    printf("-- legacy null stream during a global-mode capture\n");
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("kernel on stream 0", conf_launch_log(0, &scratch, 99, 0));
    print_status("hipStreamIsCapturing", s);
    end_invalidated(s);

    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("hipStreamQuery(0)", hipStreamQuery(0));
    print_status("hipStreamIsCapturing", s);
    end_invalidated(s);

    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    int host = 0;
    SHOW("hipMemcpy (null stream)", hipMemcpy(&host, a, sizeof host, hipMemcpyDeviceToHost));
    print_status("hipStreamIsCapturing", s);
    end_invalidated(s);

    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("kernel on hipStreamLegacy", conf_launch_log(hipStreamLegacy, &scratch, 99, 0));
    print_status("hipStreamIsCapturing", s);
    end_invalidated(s);

    printf("-- cleanup\n");
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    SHOW("hipGraphExecDestroy", hipGraphExecDestroy(ge));
    SHOW("hipGraphExecDestroy", hipGraphExecDestroy(ge2));
    SHOW("hipGraphExecDestroy", hipGraphExecDestroy(gje));
    SHOW("hipGraphDestroy", hipGraphDestroy(g));
    SHOW("hipGraphDestroy", hipGraphDestroy(gj));
    MUST(hipFree(a));
    MUST(hipFree(b));
    MUST(hipEventDestroy(e));
    MUST(hipEventDestroy(e2));
    MUST(hipStreamDestroy(s));
    MUST(hipStreamDestroy(s2));
    return conf_done();
}
