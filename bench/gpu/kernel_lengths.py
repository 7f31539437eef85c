"""kernel_lengths.py - how long the co-location benchmark's load kernels run on the GPU.

Level 1 cannot stop a kernel once it runs, so the preemption latency a high-priority request
sees is at least what is left of the low-priority kernel running when it arrives. This prints
the distribution of the ResNet-50 fp16 batch-256 load's kernel lengths (inference and a
training step, as bench/gpu/colocation.py runs them), from a torch.profiler (CUPTI) trace of
two steps after three warm-up steps: kernels per step, GPU time per step, length percentiles
weighted by count and by time (the chance that a request arriving at a random moment meets a
kernel at least that long), and the longest kernels.

Under MPS with hardware priorities a waiting kernel starts when the running kernel's blocks end,
not the kernel, so it also estimates each kernel's block length: its length over its waves, a
wave being as many blocks as the device holds at once by the kernel's threads, registers and
shared memory (the occupancy limits of the device's compute capability; every block taken as
equally long, and the largest shared-memory carve-out assumed, so the estimate is an upper bound
where the runtime chose a smaller one).

    python3 bench/gpu/kernel_lengths.py [--kind infer|train|both|decode]

decode: the co-location benchmark's decode load (eight forward passes of GPT-2 medium's shape
over 8 x 128 tokens, bf16) run eagerly; colocation.py captures the same passes into one graph.
"""
import argparse
import json
import os
import tempfile

import torch


def step_fn(kind):
    if kind == "decode":
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config(n_embd=1024, n_layer=24, n_head=16, vocab_size=50257,
                                           n_positions=1024)).cuda().to(torch.bfloat16).eval()
        tokens = torch.randint(0, 50257, (8, 128), device="cuda")

        def forwards():
            with torch.no_grad():
                for _ in range(8):
                    model(input_ids=tokens)
        return forwards
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
    return [(e["dur"], e["name"], e.get("args", {})) for e in trace["traceEvents"]
            if e.get("cat") == "kernel" and "dur" in e], steps


def resident_blocks(args, props):
    """How many of the kernel's blocks one SM holds at once, or None when the trace lacks what
    decides it."""
    try:
        threads = args["block"][0] * args["block"][1] * args["block"][2]
        regs = args["registers per thread"]
        smem = args["shared memory"]
    except (KeyError, IndexError, TypeError):
        return None
    warps = -(-threads // 32)
    limits = [props["max_blocks"], props["max_threads"] // (warps * 32)]
    if regs:
        per_warp = -(-regs * 32 // 256) * 256  # registers are given out 256 per warp at a time
        limits.append(props["regs"] // per_warp // warps)
    per_block = -(-(smem + 1024) // 128) * 128  # 1 KiB per block is the system's (sm_80 on)
    limits.append(props["smem"] // per_block)
    return max(0, min(limits))


def device_limits():
    p = torch.cuda.get_device_properties(0)
    return {"sms": p.multi_processor_count,
            "max_threads": p.max_threads_per_multi_processor,
            "max_blocks": 32 if p.major >= 9 or (p.major, p.minor) == (8, 0) else 16,
            "regs": getattr(p, "regs_per_multiprocessor", 65536),
            "smem": getattr(p, "shared_memory_per_multiprocessor", 233472)}


def percentile_by_time(pairs, p):
    """pairs: (value, weight), sorted by value; the value at which p% of the weight is reached."""
    total = sum(w for _, w in pairs)
    acc = 0.0
    for v, w in pairs:
        acc += w
        if acc >= p / 100.0 * total:
            return v
    return pairs[-1][0]


def report_blocks(ks, props):
    rows = []
    for dur, name, args in ks:
        per_sm = resident_blocks(args, props)
        if not per_sm:
            continue
        g = args["grid"]
        blocks = g[0] * g[1] * g[2]
        waves = -(-blocks // (props["sms"] * per_sm))
        rows.append((dur / waves, dur, waves, name, g, args.get("est. achieved occupancy %")))
    if not rows:
        print("   block lengths: the trace has no grid, block, register or shared-memory fields")
        return
    by_block = sorted((b, d) for b, d, *_ in rows)
    print("   block length (us, kernel length over waves) by time: P50 %.0f  P90 %.0f  P99 %.0f"
          "  max %.0f  (%d of %d kernels estimated; %.0f%% of the time in one-wave kernels)" %
          (percentile_by_time(by_block, 50), percentile_by_time(by_block, 90),
           percentile_by_time(by_block, 99), by_block[-1][0], len(rows), len(ks),
           100.0 * sum(d for _, d, w, *_ in rows if w == 1) / sum(d for _, d, *_ in rows)))
    print("   longest blocks:")
    for b, d, waves, name, g, occ in sorted(rows, key=lambda r: r[0], reverse=True)[:6]:
        print("     %6.0f us  (kernel %5.0f us, %3d waves, grid %s, occupancy %s%%)  %s" %
              (b, d, waves, "x".join(map(str, g)), "-" if occ is None else occ, name[:70]))


def report(kind):
    ks, steps = kernels(kind)
    lengths = sorted(d for d, _, _ in ks)
    total = sum(lengths)

    def by_count(p):
        return lengths[min(len(lengths) - 1, int(p / 100.0 * len(lengths)))]

    by_length = [(d, d) for d in lengths]  # a kernel's weight by time is its length

    def by_time(p):
        return percentile_by_time(by_length, p)

    print("== %s: %d kernels per step, %.1f ms of kernels per step" %
          (kind, len(lengths) // steps, total / steps / 1e3))
    print("   length (us) by count: P50 %.0f  P90 %.0f  P99 %.0f  max %.0f" %
          (by_count(50), by_count(90), by_count(99), lengths[-1]))
    print("   length (us) by time:  P50 %.0f  P90 %.0f  P99 %.0f" % (by_time(50), by_time(90), by_time(99)))
    for limit in (250, 500, 1000):
        share = sum(d for d in lengths if d > limit) / total
        print("   %.0f%% of the GPU time is in kernels longer than %d us" % (100 * share, limit))
    print("   longest:")
    for d, name, _ in sorted(ks, key=lambda k: k[0], reverse=True)[:6]:
        print("     %7.0f us  %s" % (d, name[:100]))
    report_blocks(ks, device_limits())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", default="both", choices=["infer", "train", "both", "decode"])
    args = p.parse_args()
    torch.backends.cudnn.benchmark = True
    for kind in ("infer", "train") if args.kind == "both" else (args.kind,):
        report(kind)


if __name__ == "__main__":
    main()
