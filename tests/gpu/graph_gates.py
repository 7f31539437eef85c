"""graph_gates.py OUT: a CUDA graph of 200 small matmuls (each feeding the next, with a tanh
between them) captured with torch.cuda.graph and replayed 20 times on a stream of its own, writing
the SHA-256 of the output's bytes after every replay to OUT. tests/gpu/run.sh's graphgate check
runs it without gpuprio and under it at low priority next to a bursting high-priority process with
GPUPRIO_GRAPH_GATE_US set, where gpuprio launches a gated copy of the graph (issue 45): the files
must be identical, and the library must say it gated graph launches.
"""
import hashlib
import sys

import torch

MATMULS = 200
REPLAYS = 20


def digest(t):
    return hashlib.sha256(t.contiguous().view(torch.uint8).cpu().numpy().tobytes()).digest()


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(256, 256, device="cuda", generator=g)
    w = [torch.randn(256, 256, device="cuda", generator=g) / 16 for _ in range(8)]

    def step(t):
        for i in range(MATMULS):
            t = torch.tanh(t @ w[i % len(w)])
        return t

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up before capture, as PyTorch asks
        for _ in range(3):
            step(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = step(x)
    replay = torch.cuda.Stream()
    with open(sys.argv[1], "wb") as out:
        for r in range(REPLAYS):
            with torch.no_grad():
                x.copy_(torch.randn(256, 256, device="cuda", generator=g))
            replay.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(replay):
                graph.replay()
            replay.synchronize()
            out.write(digest(y))
    print("done")


if __name__ == "__main__":
    main()
