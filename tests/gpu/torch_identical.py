"""torch_identical.py OUTFILE [--expect-gpuprio STATSFILE]

PyTorch workloads whose outputs must be bit-identical with and without libgpuprio-cuda.so
(tests/gpu/run.sh runs this twice and compares OUTFILE byte for byte):
  1. BERT-base (transformers' BertConfig defaults, random weights) eager forward, batch 8 x 128;
  2. a small MLP captured into a CUDA graph and replayed on new inputs;
  3. two streams (one created with a high CUDA priority) ordered by events;
  4. ResNet-50 (torchvision, random weights) fp32 forward, batch 8 at 224 x 224;
  5. GPT-2 small (transformers' GPT2Config defaults, random weights) forward, batch 4 x 64;
  6. a small model compiled with torch.compile, whose fused kernels are Triton kernels launched
     through the driver (the Triton launcher finds cuLaunchKernel itself).
Seeds are fixed and deterministic algorithms enforced (CUBLAS_WORKSPACE_CONFIG=:4096:8).
OUTFILE holds each output's raw bytes after a text header naming it.

With --expect-gpuprio, the gpuprio API must be in the process (found with ctypes, as any Python
program would): its queue statistics go to STATSFILE, and the exit status is 3 unless the shim
saw work submitted, i.e. unless the CUDA runtime's launches really went through the wrappers.
"""
import ctypes
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

SEED = 1234


def dump(out, name, t):
    data = t.detach().contiguous().cpu()
    out.write(f"{name} {tuple(data.shape)} {data.dtype}\n".encode())
    out.write(data.view(torch.uint8).numpy().tobytes() if data.dtype != torch.uint8
              else data.numpy().tobytes())
    out.write(b"\n")


def bert(out):
    try:
        from transformers import BertConfig, BertModel
    except ImportError:
        out.write(b"bert skipped: transformers is not installed\n")
        print("transformers is not installed: BERT skipped", file=sys.stderr)
        return
    torch.manual_seed(SEED)
    model = BertModel(BertConfig()).cuda().eval()
    g = torch.Generator().manual_seed(SEED)
    ids = torch.randint(0, model.config.vocab_size, (8, 128), generator=g).cuda()
    mask = torch.ones_like(ids)
    with torch.no_grad():
        res = model(input_ids=ids, attention_mask=mask)
    dump(out, "bert.last_hidden_state", res.last_hidden_state)
    dump(out, "bert.pooler_output", res.pooler_output)


def graph_mlp(out):
    torch.manual_seed(SEED)
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                              torch.nn.Linear(1024, 256)).cuda().eval()
    static_in = torch.randn(64, 256, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(3):
            mlp(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_out = mlp(static_in)
    for i in range(3):
        static_in.copy_(torch.randn(64, 256, device="cuda"))
        graph.replay()
        dump(out, f"graph.replay{i}", static_out)
    with torch.no_grad():
        dump(out, "graph.eager_check", mlp(static_in))


def two_streams(out):
    torch.manual_seed(SEED)
    x = torch.randn(512, 512, device="cuda")
    w1 = torch.randn(512, 512, device="cuda")
    w2 = torch.randn(512, 512, device="cuda")
    s1 = torch.cuda.Stream()
    s2 = torch.cuda.Stream(priority=-1)
    done = torch.cuda.Event()
    s1.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s1):
        a = x @ w1
        done.record(s1)
        c = a * 2
    s2.wait_event(done)
    with torch.cuda.stream(s2):
        b = torch.relu(a) @ w2
    torch.cuda.synchronize()
    dump(out, "streams.b", b)
    dump(out, "streams.c", c)


def resnet50(out):
    try:
        import torchvision
    except ImportError:
        out.write(b"resnet50 skipped: torchvision is not installed\n")
        return
    torch.manual_seed(SEED)
    model = torchvision.models.resnet50(weights=None).cuda().eval()
    x = torch.randn(8, 3, 224, 224, generator=torch.Generator().manual_seed(SEED)).cuda()
    with torch.no_grad():
        dump(out, "resnet50.logits", model(x))


def gpt2(out):
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError:
        out.write(b"gpt2 skipped: transformers is not installed\n")
        return
    torch.manual_seed(SEED)
    model = GPT2LMHeadModel(GPT2Config()).cuda().eval()
    ids = torch.randint(0, 50257, (4, 64), generator=torch.Generator().manual_seed(SEED)).cuda()
    with torch.no_grad():
        dump(out, "gpt2.logits", model(input_ids=ids).logits)


def compiled(out):
    torch.manual_seed(SEED)
    mlp = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.LayerNorm(512),
                              torch.nn.Linear(512, 128)).cuda().eval()
    fn = torch.compile(mlp)
    x = torch.randn(256, 512, generator=torch.Generator().manual_seed(SEED)).cuda()
    with torch.no_grad():
        dump(out, "compiled.out", fn(x))
        dump(out, "compiled.again", fn(x * 0.5))


def gpuprio_stats(path):
    lib = ctypes.CDLL(None)
    try:
        stats = lib.gpuprio_stats
    except AttributeError:
        print("gpuprio is not loaded", file=sys.stderr)
        return 0

    class QueueStats(ctypes.Structure):  # struct gpuprio_queue_stats (include/gpuprio.h)
        _fields_ = [("stream", ctypes.c_uint64), ("thread", ctypes.c_uint64),
                    ("device", ctypes.c_int), ("flags", ctypes.c_uint),
                    ("stream_priority", ctypes.c_int), ("priority", ctypes.c_int),
                    ("suspended", ctypes.c_int), ("in_flight", ctypes.c_uint),
                    ("submitted", ctypes.c_uint64), ("completed", ctypes.c_uint64),
                    ("held_ns", ctypes.c_uint64), ("suspensions", ctypes.c_uint64)]

    stats.argtypes = [ctypes.POINTER(QueueStats), ctypes.c_size_t]
    n = stats(None, 0)
    arr = (QueueStats * max(n, 1))()
    n = min(stats(arr, n), n)
    total = suspensions = 0
    with open(path, "w") as f:
        f.write(f"{n} queues\n")
        for q in arr[:n]:
            total += q.submitted
            suspensions += q.suspensions
            f.write(f"stream {q.stream:#x} thread {q.thread} device {q.device} flags {q.flags} "
                    f"stream_priority {q.stream_priority} priority {q.priority} "
                    f"submitted {q.submitted} completed {q.completed} held_ns {q.held_ns}\n")
        f.write(f"total submitted {total}\n")
        f.write(f"total suspensions {suspensions}\n")
    return total


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    with open(sys.argv[1], "wb") as out:
        out.write(f"torch {torch.__version__} cuda {torch.version.cuda}\n".encode())
        bert(out)
        graph_mlp(out)
        two_streams(out)
        resnet50(out)
        gpt2(out)
        compiled(out)
    torch.cuda.synchronize()
    if len(sys.argv) >= 4 and sys.argv[2] == "--expect-gpuprio":
        if gpuprio_stats(sys.argv[3]) == 0:
            print("gpuprio saw no work: the CUDA runtime's calls bypassed the wrappers",
                  file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
