"""kernel_lengths.py - how long the co-location benchmark's load kernels run on the GPU.

Level 1 cannot stop a kernel once it runs, so the preemption latency a high-priority request
sees is at least what is left of the low-priority kernel running when it arrives. This prints
the distribution of the ResNet-50 fp16 batch-256 load's kernel lengths (inference and a
training step, as bench/gpu/colocation.py runs them), from a torch.profiler (CUPTI) trace of
two steps after three warm-up steps: kernels per step, GPU time per step, length percentiles
weighted by count and by time (the chance that a request arriving at a random moment meets a
kernel at least that long), and the longest kernels.

    python3 bench/gpu/kernel_lengths.py [--kind infer|train|both]
"""
import argparse
import json
import os
import tempfile

import torch


def step_fn(kind):
    import torchvision

    torch.manual_seed(1)
    model = torchvision.models.resnet50(weights=None).cuda().half().to(memory_format=torch.channels_last)
    x = torch.randn(256, 3, 224, 224, device="cuda").half().to(memory_format=torch.channels_last)
    if kind == "train":
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        target = torch.randint(0, 1000, (256,), device="cuda")

        def step():
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(x).float(), target).backward()
            opt.step()
    else:
        model.eval()

        def step():
            with torch.no_grad():
                model(x)
    return step


def kernels(kind, steps=2):
    step = step_fn(kind)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    return [(e["dur"], e["name"]) for e in trace["traceEvents"]
            if e.get("cat") == "kernel" and "dur" in e], steps


def report(kind):
    ks, steps = kernels(kind)
    lengths = sorted(d for d, _ in ks)
    total = sum(lengths)

    def by_count(p):
        return lengths[min(len(lengths) - 1, int(p / 100.0 * len(lengths)))]

    def by_time(p):
        acc = 0.0
        for d in lengths:
            acc += d
            if acc >= p / 100.0 * total:
                return d
        return lengths[-1]

    print("== %s: %d kernels per step, %.1f ms of kernels per step" %
          (kind, len(lengths) // steps, total / steps / 1e3))
    print("   length (us) by count: P50 %.0f  P90 %.0f  P99 %.0f  max %.0f" %
          (by_count(50), by_count(90), by_count(99), lengths[-1]))
    print("   length (us) by time:  P50 %.0f  P90 %.0f  P99 %.0f" % (by_time(50), by_time(90), by_time(99)))
    for limit in (250, 500, 1000):
        share = sum(d for d in lengths if d > limit) / total
        print("   %.0f%% of the GPU time is in kernels longer than %d us" % (100 * share, limit))
    print("   longest:")
    for d, name in sorted(ks, reverse=True)[:6]:
        print("     %7.0f us  %s" % (d, name[:100]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", default="both", choices=["infer", "train", "both"])
    args = p.parse_args()
    torch.backends.cudnn.benchmark = True
    for kind in ("infer", "train") if args.kind == "both" else (args.kind,):
        report(kind)


if __name__ == "__main__":
    main()
