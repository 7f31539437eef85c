// graph_facts.cu - two driver facts that gpuprio's gates inside graphs rely on (issue 45,
// docs/design.md "Gates inside graphs"), asked of the GPU's driver and printed:
//   1. a stream created after another's destruction may get its handle (an address), but never
//      its id (cuStreamGetId): gpuprio tells a launch's stream by both;
//   2. a kernel node made device-updatable (CUDA 12.4) says so through
//      cuGraphKernelNodeGetAttribute, so gpuprio can leave its graph whole.
// Then the graph of (2) (three kernels, the middle one device-updatable) is replayed 20 times and
// a checksum of its output printed: run it without and under gpuprio at low priority
// (GPUPRIO_LOG=info), the checksums must agree and gpuprio must say the graph stayed whole "it has
// device-updatable kernel nodes".
//
//   nvcc -O2 -arch=native bench/gpu/graph_facts.cu -o graph_facts -lcuda && ./graph_facts
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

#define MUST(x)                                                                                    \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_));                                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void step(float *x, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * a + 1.0f;
}

static int stream_ids(void)
{
    cudaStream_t first;
    MUST(cudaStreamCreate(&first));
    unsigned long long first_id = 0;
    if (cuStreamGetId((CUstream)first, &first_id) != CUDA_SUCCESS) {
        printf("stream ids: cuStreamGetId refused\n");
        return 1;
    }
    MUST(cudaStreamDestroy(first));
    for (int i = 0; i < 1000; i++) {
        cudaStream_t s;
        MUST(cudaStreamCreate(&s));
        unsigned long long id = 0;
        cuStreamGetId((CUstream)s, &id);
        if (s == first) {
            printf("stream ids: handle %p reused after %d creations, id %llu then %llu: %s\n",
                   (void *)s, i + 1, first_id, id, id != first_id ? "distinct" : "SAME");
            MUST(cudaStreamDestroy(s));
            return id != first_id ? 0 : 1;
        }
        MUST(cudaStreamDestroy(s));
    }
    printf("stream ids: no handle reused in 1000 creations (nothing to tell apart)\n");
    return 0;
}

int main()
{
    int bad = stream_ids();
    const int n = 1 << 20;
    float *x;
    MUST(cudaMalloc(&x, n * sizeof(float)));
    MUST(cudaMemset(x, 0, n * sizeof(float)));
    cudaGraph_t graph;
    MUST(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t nodes[3];
    float scale[3] = {0.5f, 0.25f, 0.75f};
    for (int i = 0; i < 3; i++) {
        void *args[] = {&x, (void *)&n, &scale[i]};
        cudaKernelNodeParams p = {};
        p.func = (void *)step;
        p.gridDim = dim3((n + 255) / 256);
        p.blockDim = dim3(256);
        p.kernelParams = args;
        MUST(cudaGraphAddKernelNode(&nodes[i], graph, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p));
    }
    cudaLaunchAttributeValue v = {};
    v.deviceUpdatableKernelNode.deviceUpdatable = 1;
    MUST(cudaGraphKernelNodeSetAttribute(nodes[1], cudaLaunchAttributeDeviceUpdatableKernelNode,
                                         &v));
    CUkernelNodeAttrValue got = {};
    CUresult r = cuGraphKernelNodeGetAttribute(
        (CUgraphNode)nodes[1], CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &got);
    printf("device-updatable node: cuGraphKernelNodeGetAttribute -> %d, deviceUpdatable %d\n",
           (int)r, got.deviceUpdatableKernelNode.deviceUpdatable);
    bad |= r != CUDA_SUCCESS || !got.deviceUpdatableKernelNode.deviceUpdatable;
    got = {};
    r = cuGraphKernelNodeGetAttribute((CUgraphNode)nodes[0],
                                      CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &got);
    printf("plain node: cuGraphKernelNodeGetAttribute -> %d, deviceUpdatable %d\n", (int)r,
           got.deviceUpdatableKernelNode.deviceUpdatable);
    cudaGraphExec_t exec;
    MUST(cudaGraphInstantiate(&exec, graph, 0));
    cudaStream_t s;
    MUST(cudaStreamCreate(&s));
    for (int i = 0; i < 20; i++)
        MUST(cudaGraphLaunch(exec, s));
    MUST(cudaStreamSynchronize(s));
    static float host[1 << 20];
    MUST(cudaMemcpy(host, x, n * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += host[i] * (double)(i % 7 + 1);
    printf("checksum %.9g\n", sum);
    MUST(cudaGraphExecDestroy(exec));
    MUST(cudaGraphDestroy(graph));
    MUST(cudaStreamDestroy(s));
    MUST(cudaFree(x));
    printf("%s\n", bad ? "FAIL" : "ok");
    return bad;
}
