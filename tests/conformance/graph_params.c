/*
 * graph_params.c - hipGraphInstantiateWithParams: which flags it accepts, what it reports in the
 * parameters, and its optional upload on uploadStream (hipGraphInstantiateFlagUpload), whose
 * error becomes the call's. The executable graphs it makes run the captured work.
 */
#include "conf.h"

/* Newer than the 5.2.3 headers: the prototype and its types as upstream declares them. */
#include "../../src/shim/hip/hip_compat_shim.h"

static const char *result_name(hipGraphInstantiateResult r)
{
    switch (r) {
    case hipGraphInstantiateSuccess:
        return "hipGraphInstantiateSuccess";
    case hipGraphInstantiateError:
        return "hipGraphInstantiateError";
    default:
        return "(other)";
    }
}

static hipGraph_t graph;
static hipStream_t s;
static int *d;

/* Instantiates with flags and upload stream up, prints what came back, runs the graph on s. */
static void instantiate(const char *label, unsigned long long flags, hipStream_t up)
{
    hipGraphExec_t exec = NULL;
    hipGraphInstantiateParams p = {.errNode_out = (hipGraphNode_t)(uintptr_t)0x5e57,
                                   .flags = flags,
                                   .result_out = (hipGraphInstantiateResult)99,
                                   .uploadStream = up};
    hipError_t e = hipGraphInstantiateWithParams(&exec, graph, &p);
    printf("%s -> %s, result_out %s, errNode_out NULL: %s, exec set: %s\n", label, conf_err(e),
           result_name(p.result_out), conf_yes(p.errNode_out == NULL), conf_yes(exec != NULL));
    if (exec) {
        SHOW("  hipGraphLaunch(s)", hipGraphLaunch(exec, s));
        MUST(hipStreamSynchronize(s));
        printf("  d = %d\n", conf_read_int(d));
        SHOW("  hipGraphExecDestroy", hipGraphExecDestroy(exec));
    }
}

int main(void)
{
    conf_init();
    hipStream_t up, gone;
    MUST(hipStreamCreate(&s));
    MUST(hipStreamCreate(&up));
    MUST(hipStreamCreate(&gone));
    MUST(hipStreamDestroy(gone));
    MUST(hipMalloc((void **)&d, sizeof(int)));
    conf_write_int(d, 0);

    MUST(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    MUST(conf_launch_add(s, d, 1));
    MUST(hipStreamEndCapture(s, &graph));

    hipGraphExec_t exec = NULL;
    hipGraphInstantiateParams p = {.flags = 0};
    SHOW("params NULL", hipGraphInstantiateWithParams(&exec, graph, NULL));
    SHOW("pGraphExec NULL", hipGraphInstantiateWithParams(NULL, graph, &p));
    SHOW("graph NULL", hipGraphInstantiateWithParams(&exec, NULL, &p));

    instantiate("flags 0", 0, up);
    instantiate("AutoFreeOnLaunch", hipGraphInstantiateFlagAutoFreeOnLaunch, up);
    instantiate("DeviceLaunch", hipGraphInstantiateFlagDeviceLaunch, up);
    instantiate("UseNodePriority", hipGraphInstantiateFlagUseNodePriority, up);
    instantiate("Upload on up", hipGraphInstantiateFlagUpload, up);
    instantiate("Upload on the null stream", hipGraphInstantiateFlagUpload, NULL);
    instantiate("Upload on a destroyed stream", hipGraphInstantiateFlagUpload, gone);
    instantiate("Upload | AutoFreeOnLaunch",
                hipGraphInstantiateFlagUpload | hipGraphInstantiateFlagAutoFreeOnLaunch, up);
    instantiate("flags 16", 16, up);
    SHOW("hipGetLastError", hipGetLastError());

    MUST(hipGraphDestroy(graph));
    MUST(hipFree(d));
    MUST(hipStreamDestroy(up));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
