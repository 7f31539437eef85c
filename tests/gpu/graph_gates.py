"""graph_gates.py OUT: PyTorch's CUDA graphs, replayed on a stream of their own, writing the
SHA-256 of each replay's output bytes to OUT. tests/gpu/run.sh's graphgate check runs it without
gpuprio and under it at low priority next to a bursting high-priority process with
GPUPRIO_GRAPH_GATE_US set, where gpuprio launches gated copies of the graphs (issue 45): the files
must be identical, and the library must say it gated graph launches. The graphs:

- chain: 200 small matmuls (each feeding the next, a tanh between them), replayed 20 times;
- head: an LM head's product (1024 x 1024 times 1024 x 50,257, bf16, PyTorch's default backend:
  cublasGemmEx, about 1 ms on an H200) between small layers, replayed 20 times; under gpuprio
  the product may be captured as GEMM slices, each its own kernel node;
- pool: two graphs captured into one memory pool (torch.cuda.graph's pool=), the second reading
  the first's output, replayed in turn 10 times;
- graphed: a small MLP made into forward and backward graphs by torch.cuda.make_graphed_callables,
  trained 10 steps with SGD (the weights' bytes after every step).
"""
import hashlib
import sys

import torch

MATMULS = 200
REPLAYS = 20


def digest(t):
    return hashlib.sha256(t.contiguous().view(torch.uint8).cpu().numpy().tobytes()).digest()


def capture(fn, pool=None):
    """fn warmed up on a side stream (as PyTorch asks), then captured: (graph, its output)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=pool):
        y = fn()
    return graph, y


def replay(graphs, replay_stream):
    replay_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(replay_stream):
        for g in graphs:
            g.replay()
    replay_stream.synchronize()


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda").manual_seed(0)
    rs = torch.cuda.Stream()
    out = open(sys.argv[1], "wb")

    x = torch.randn(256, 256, device="cuda", generator=gen)
    w = [torch.randn(256, 256, device="cuda", generator=gen) / 16 for _ in range(8)]

    def chain():
        t = x
        for i in range(MATMULS):
            t = torch.tanh(t @ w[i % len(w)])
        return t

    graph, y = capture(chain)
    for _ in range(REPLAYS):
        with torch.no_grad():
            x.copy_(torch.randn(256, 256, device="cuda", generator=gen))
        replay([graph], rs)
        out.write(digest(y))

    h = torch.randn(1024, 1024, device="cuda", generator=gen, dtype=torch.bfloat16)
    wh = torch.randn(50257, 1024, device="cuda", generator=gen, dtype=torch.bfloat16) / 32
    wi = torch.randn(1024, 1024, device="cuda", generator=gen, dtype=torch.bfloat16) / 32

    def head():
        return torch.nn.functional.linear(torch.tanh(h @ wi), wh).float().softmax(-1)

    graph, y = capture(head)
    for _ in range(REPLAYS):
        with torch.no_grad():
            h.copy_(torch.randn(1024, 1024, device="cuda", generator=gen, dtype=torch.bfloat16))
        replay([graph], rs)
        out.write(digest(y))

    a = torch.randn(512, 512, device="cuda", generator=gen)
    first, y1 = capture(lambda: torch.relu(a @ a.T))
    second, y2 = capture(lambda: (y1 @ a).sigmoid(), pool=first.pool())
    for _ in range(REPLAYS // 2):
        with torch.no_grad():
            a.copy_(torch.randn(512, 512, device="cuda", generator=gen) / 8)
        replay([first, second], rs)
        out.write(digest(y2))

    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 512)).cuda()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, device="cuda", generator=gen) / 32)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    sample = torch.randn(64, 512, device="cuda", generator=gen)
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    for _ in range(REPLAYS // 2):
        data = torch.randn(64, 512, device="cuda", generator=gen)
        opt.zero_grad(set_to_none=True)
        graphed(data).pow(2).mean().backward()
        opt.step()
        torch.cuda.synchronize()
        for p in model.parameters():
            out.write(digest(p.detach()))
    out.close()
    print("done")


if __name__ == "__main__":
    main()
