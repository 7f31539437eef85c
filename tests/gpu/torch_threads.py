"""torch_threads.py OUTFILE [--steps N] [--mark STEP FILE] [--expect-gpuprio STATSFILE]
A small MLP trained for N steps (40 unless given) with SGD, each step in a thread started for
that step and gone at its end, as data loaders, serving frameworks and request handlers start and
end threads (issue 37: a queue whose thread exited must never keep the process's work held). The
step's thread runs the forward pass and the loss on the default stream, and calls backward;
autograd runs the CUDA backward itself on its persistent device thread, so what comes and goes
is the forward's thread, with its own queue of the null stream (one per thread under gpuprio),
retired when the thread ends, often with work still queued. Writes every step's loss and the
final weights, as raw bytes, to OUTFILE: run.sh ("torch_threads") compares them bit for bit
between a run without gpuprio and runs under it at low priority next to a process bursting at
high priority (Level 2 gates closed in every burst), which run.sh kills, or stops, once this
one has touched FILE (--mark: after step STEP); a hang, or a run much slower than the native
one, fails.

With --expect-gpuprio, the gpuprio API must be in the process and have seen work (statistics
into STATSFILE, as torch_identical.py writes them).
"""
import argparse
import os
import sys
import threading

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_identical import gpuprio_stats  # noqa: E402


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("outfile")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--mark", nargs=2, metavar=("STEP", "FILE"))
    ap.add_argument("--expect-gpuprio", metavar="STATSFILE")
    args = ap.parse_args()
    mark_step, mark_file = (int(args.mark[0]), args.mark[1]) if args.mark else (-1, None)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    # A batch per step, the same in every run (a few distinct ones, reused, keep memory small).
    data = [(torch.randn(256, 512, generator=g).cuda(), torch.randint(0, 10, (256,), generator=g).cuda())
            for _ in range(min(args.steps, 40))]
    losses = []
    errors = []

    def step(i):
        try:
            x, y = data[i % len(data)]
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()  # the kernels run on autograd's device thread; this one waits
            losses.append(loss.detach())
        except Exception as e:  # noqa: BLE001 - reported on the main thread
            errors.append(e)

    for i in range(args.steps):
        t = threading.Thread(target=step, args=(i,), name=f"step{i}")
        t.start()
        t.join()
        if errors:
            raise errors[0]
        opt.step()
        if i + 1 == mark_step:
            open(mark_file, "w").close()
    torch.cuda.synchronize()
    with open(args.outfile, "wb") as out:
        out.write(torch.stack(losses).cpu().numpy().tobytes())
        for p in model.parameters():
            out.write(p.detach().cpu().numpy().tobytes())
    print(f"final loss {losses[-1].item():.6f}")
    if args.expect_gpuprio and gpuprio_stats(args.expect_gpuprio) == 0:
        print("gpuprio saw no work", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
