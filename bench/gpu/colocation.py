"""colocation.py - one side of the priority-under-co-location benchmark on a real GPU.

A latency-critical client (BERT-base fp32, batch 8, sequence 128, random weights from the
config) takes requests at a fixed rate, open loop: request i is due at t0 + i/rate and its
latency is its completion minus its due time, so a late start counts. Replayed as a CUDA graph
(the clean numbers) or eager (host-bound, with host stalls). Next to it, a saturating
best-effort load: ResNet-50 fp16, batch 256, channels-last, inference (or a training step),
eager, at most two iterations in flight.

    colocation.py client --mode graph|eager [--rate R] [--seconds S] --out FILE
    colocation.py load --kind infer|train [--seconds S | --stop-file F] --out FILE
    colocation.py both --mode graph|eager --kind infer|train [--stream-priorities]
                  [--gpuprio] --out FILE       (the two in one process, one thread each)

--stream-priorities creates the client's stream with the device's greatest priority and the
load's with the least (what an application can do natively). --gpuprio (same process only)
gives the two streams gpuprio priorities high and low through the public API (ctypes,
gpuprio_stream_set_priority on stream.cuda_stream), as a program that knows about gpuprio
would; in two processes GPUPRIO_PRIORITY does that. (gpuprio_thread_set_priority would not do:
PyTorch hands out streams from a pool that whichever thread asks first creates, so a stream's
creating thread is not the thread that uses it.) Each run
writes one JSON object to FILE.
"""
import argparse
import ctypes
import gc
import json
import os
import threading
import time

import torch


def percentile(sorted_values, pct):
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, int(round(pct / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def gpuprio_api():
    """gpuprio_stream_set_priority of the preloaded library, or None."""
    lib = ctypes.CDLL(None)
    try:
        f = lib.gpuprio_stream_set_priority
    except AttributeError:
        return None
    f.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return f


def make_stream(priority_kind, stream_priorities):
    if not stream_priorities:
        return torch.cuda.Stream()
    least, greatest = torch.cuda.Stream.priority_range()
    return torch.cuda.Stream(priority=greatest if priority_kind == "high" else least)


def run_client(args, stream, start_barrier=None, stop_event=None):
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig()).cuda().eval()
    x = torch.randint(0, 30000, (8, 128), device="cuda")
    with torch.no_grad(), torch.cuda.stream(stream):
        for _ in range(5):
            model(x)
        stream.synchronize()
        graph = None
        if args.mode == "graph":
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                out = model(x)
            for _ in range(5):
                graph.replay()
            stream.synchronize()
        # Service time alone (this process, before the window): what the ceiling is computed from.
        t = time.perf_counter()
        for _ in range(20):
            graph.replay() if graph else model(x)
            stream.synchronize()
        service = (time.perf_counter() - t) / 20
    if start_barrier:
        start_barrier.wait()
    gc.collect()
    gc.freeze()
    gc.disable()
    lat = []
    period = 1.0 / args.rate
    t0 = time.perf_counter() + 0.2
    window_start = time.time() + 0.2
    n = int(args.seconds * args.rate)
    with torch.no_grad(), torch.cuda.stream(stream):
        for i in range(n):
            due = t0 + i * period
            now = time.perf_counter()
            if now < due:
                time.sleep(max(0.0, due - now - 0.0005))
                while time.perf_counter() < due:
                    pass
            graph.replay() if graph else model(x)
            stream.synchronize()
            lat.append(time.perf_counter() - due)
    gc.enable()
    window_end = time.time()
    if stop_event:
        stop_event.set()
    lat.sort()
    return {
        "role": "client",
        "mode": args.mode,
        "requests": n,
        "p50_ms": percentile(lat, 50) * 1e3,
        "p99_ms": percentile(lat, 99) * 1e3,
        "max_ms": lat[-1] * 1e3,
        "service_ms": service * 1e3,
        "rate": args.rate,
        "window": [window_start, window_end],
    }


def run_load(args, stream, start_barrier=None, stop_event=None):
    import torchvision

    torch.manual_seed(1)
    model = torchvision.models.resnet50(weights=None).cuda().half().to(memory_format=torch.channels_last)
    x = torch.randn(256, 3, 224, 224, device="cuda").half().to(memory_format=torch.channels_last)
    train = args.kind == "train"
    if train:
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        target = torch.randint(0, 1000, (256,), device="cuda")
    else:
        model.eval()

    def step():
        if train:
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x).float(), target)
            loss.backward()
            opt.step()
        else:
            with torch.no_grad():
                model(x)

    with torch.cuda.stream(stream):
        for _ in range(3):
            step()
        stream.synchronize()
        if args.ready_file:
            open(args.ready_file, "w").close()
        if start_barrier:
            start_barrier.wait()
        events = []
        completions = []  # wall-clock times iterations were seen finished
        t_start = time.perf_counter()
        while True:
            step()
            e = torch.cuda.Event()
            e.record(stream)
            events.append(e)
            if len(events) > 2:
                events.pop(0).synchronize()
                completions.append(time.time())
            if (stop_event and stop_event.is_set()) or (args.stop_file and os.path.exists(args.stop_file)):
                break
            if not stop_event and not args.stop_file and time.perf_counter() - t_start >= args.seconds:
                break
        for e in events:
            e.synchronize()
            completions.append(time.time())
    return {"role": "load", "kind": args.kind, "batch": 256, "completions": completions}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["client", "load", "both"])
    p.add_argument("--mode", default="graph", choices=["graph", "eager"])
    p.add_argument("--kind", default="infer", choices=["infer", "train"])
    p.add_argument("--rate", type=float, default=40.0)
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--stream-priorities", action="store_true")
    p.add_argument("--gpuprio", action="store_true")
    p.add_argument("--stop-file", help="load: run until this file exists (two processes)")
    p.add_argument("--ready-file", help="load: created once warmed up")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    torch.backends.cudnn.benchmark = True
    result = {}
    if args.role == "client":
        result = run_client(args, make_stream("high", args.stream_priorities))
    elif args.role == "load":
        result = run_load(args, make_stream("low", args.stream_priorities))
    else:
        set_prio = gpuprio_api() if args.gpuprio else None
        if args.gpuprio and not set_prio:
            raise SystemExit("--gpuprio: gpuprio is not loaded in this process")
        barrier, stop = threading.Barrier(2), threading.Event()
        out = {}

        def stream_for(kind, priority):
            stream = make_stream(kind, args.stream_priorities)
            if set_prio and set_prio(ctypes.c_void_p(stream.cuda_stream), priority) != 0:
                raise SystemExit("gpuprio_stream_set_priority failed")
            return stream

        def client():
            out["client"] = run_client(args, stream_for("high", 10), barrier, stop)

        def load():
            out["load"] = run_load(args, stream_for("low", -10), barrier, stop)

        threads = [threading.Thread(target=client), threading.Thread(target=load)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result = out
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
