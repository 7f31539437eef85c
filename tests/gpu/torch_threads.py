"""torch_threads.py OUTFILE [--expect-gpuprio STATSFILE]
A small MLP trained for 40 steps with SGD, each step's forward and backward (torch.autograd, on
the default stream) run in a thread started for that step and gone at its end, as data loaders,
serving frameworks and autograd's callers start and end threads (issue 37: a queue whose thread
exited must never keep the process's work held). Writes every step's loss and the final weights,
as raw bytes, to OUTFILE: run.sh ("torch_threads") compares them bit for bit between a run
without gpuprio and one under it at low priority next to a process bursting at high priority
(Level 2 gates closed in every burst), under a timeout, so a hang fails too.

With --expect-gpuprio, the gpuprio API must be in the process and have seen work (statistics
into STATSFILE, as torch_identical.py writes them).
"""
import os
import sys
import threading

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_identical import gpuprio_stats  # noqa: E402

STEPS = 40


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(256, 512, generator=g).cuda(), torch.randint(0, 10, (256,), generator=g).cuda())
            for _ in range(STEPS)]
    losses = []
    errors = []

    def step(i):
        try:
            x, y = data[i]
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            losses.append(loss.detach())
        except Exception as e:  # noqa: BLE001 - reported on the main thread
            errors.append(e)

    for i in range(STEPS):
        t = threading.Thread(target=step, args=(i,), name=f"step{i}")
        t.start()
        t.join()
        if errors:
            raise errors[0]
        opt.step()
    torch.cuda.synchronize()
    with open(sys.argv[1], "wb") as out:
        out.write(torch.stack(losses).cpu().numpy().tobytes())
        for p in model.parameters():
            out.write(p.detach().cpu().numpy().tobytes())
    print(f"final loss {losses[-1].item():.6f}")
    if len(sys.argv) >= 4 and sys.argv[2] == "--expect-gpuprio":
        if gpuprio_stats(sys.argv[3]) == 0:
            print("gpuprio saw no work", file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
