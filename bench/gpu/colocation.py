"""colocation.py - one side of the priority-under-co-location benchmark on a real GPU.

A latency-critical client (BERT-base fp32, batch 8, sequence 128, random weights from the
config) takes requests at a fixed rate, open loop: request i is due at t0 + i/rate and its
latency is its completion minus its due time, so a late start counts. Replayed as a CUDA graph
(the clean numbers) or eager (host-bound, with host stalls). Next to it, a saturating
best-effort load: ResNet-50 fp16, batch 256, channels-last, inference (or a training step),
eager, at most two iterations in flight. Or, to see where preemption time goes, a synthetic
load (--kind spin): steps of 50 kernels that each spin for --spin-us on the GPU's clock, one
block per SM, and record their start and end there (the load's JSON then has a "trace", and
table.py breaks each request's preemption latency down against it); --spin-gap-us G runs them
one at a time with G microseconds of nothing after each, --spin-fill with blocks that leave no
room beside them on any SM. --kind idle is a process with a stream that runs nothing, to
measure what being scheduled costs the client.

    colocation.py client --mode graph|eager [--rate R] [--seconds S] [--wait-file F] --out FILE
    colocation.py load --kind infer|train|spin|idle [--seconds S | --stop-file F] --out FILE
    colocation.py both --mode graph|eager --kind infer|train|spin [--stream-priorities]
                  [--gpuprio] --out FILE       (the two in one process, one thread each)

Preemption latency (submission to the first high-priority kernel's start) is measured exactly:
each request begins with a one-thread kernel (Triton) that writes the GPU's %globaltimer, and
the client reads the host's CLOCK_MONOTONIC just before submitting. The two clocks are related by
calibration samples taken after every request: the same kernel alone, then a synchronize; the
kernel ran before the synchronize returned, so globaltimer - host time at that return is a lower
bound of the clocks' offset, tight to the synchronize's wake-up (a few microseconds, the same in
every row); the largest bound among the nearest 40 samples is used. Latency = stamp - offset -
submission, so it includes the launch itself, as the standalone row shows.

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

from stats import percentile


SPIN_STEP = 50  # kernels per step of the spin load


def gpuprio_api():
    """gpuprio_stream_set_priority of the preloaded library, or None."""
    lib = ctypes.CDLL(None)
    try:
        f = lib.gpuprio_stream_set_priority
    except AttributeError:
        return None
    f.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return f


class QueueStats(ctypes.Structure):
    """gpuprio.h's struct gpuprio_queue_stats."""
    _fields_ = [("stream", ctypes.c_uint64), ("thread", ctypes.c_uint64), ("device", ctypes.c_int),
                ("flags", ctypes.c_uint), ("stream_priority", ctypes.c_int),
                ("priority", ctypes.c_int), ("suspended", ctypes.c_int),
                ("in_flight", ctypes.c_uint), ("submitted", ctypes.c_uint64),
                ("completed", ctypes.c_uint64), ("held_ns", ctypes.c_uint64),
                ("suspensions", ctypes.c_uint64)]


def gpuprio_queues():
    """Every queue of the process that ran something, as gpuprio_stats reports it (the queues of
    threads that ended, their null streams', are gone)."""
    stats = ctypes.CDLL(None).gpuprio_stats
    out = (QueueStats * 256)()
    n = stats(out, 256)
    return [{f: getattr(q, f) for f, _ in QueueStats._fields_}
            for q in out[:max(0, min(n, 256))] if q.submitted]


def make_stamp():
    """stamp(buf, i): a one-thread kernel writing the GPU's %globaltimer (ns) to buf[i]."""
    import triton
    import triton.language as tl

    @triton.jit
    def stamp_kernel(buf, i):
        t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                      is_pure=False, pack=1)
        tl.store(buf + i, t)

    def stamp(buf, i):
        stamp_kernel[(1,)](buf, i)

    return stamp


def make_spin(n_slots, fill=False, blocks=0):
    """spin(i): a kernel of one block per SM (or of blocks blocks) that spins for spin_ns on the
    GPU's clock and writes its start and end (%globaltimer, ns) to slot i of a trace buffer
    (slots past the last one share it and are dropped): the synthetic load whose every kernel is
    seen on the GPU. With fill, two blocks of 1024 threads per SM, the most threads an SM holds:
    no other kernel's block fits beside them, so a waiting kernel starts only when a block (here
    the whole kernel) ends."""
    import triton
    import triton.language as tl

    @triton.jit(do_not_specialize=["i"])
    def spin_kernel(buf, i, spin_ns):
        t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                       is_pure=False, pack=1)
        t = t0
        while t - t0 < spin_ns:
            t = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                          is_pure=False, pack=1)
        tl.atomic_min(buf + 2 * i, t0)
        tl.atomic_max(buf + 2 * i + 1, t)

    big = (1 << 62)
    buf = torch.zeros(n_slots, 2, dtype=torch.int64, device="cuda")
    buf[:, 0] = big
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    count = [0]

    def spin(spin_ns):
        if fill:
            spin_kernel[(blocks or 2 * sms,)](buf, min(count[0], n_slots - 1), spin_ns, num_warps=32)
        else:
            spin_kernel[(blocks or sms,)](buf, min(count[0], n_slots - 1), spin_ns)
        count[0] += 1

    def trace():
        rows = buf[:min(count[0], n_slots - 1)].tolist()
        return [r for r in rows if r[0] != big]

    return spin, trace


class KernelTrace:
    """A real load's kernels on the GPU's clock, as make_spin's trace has the spin load's: every
    GPU activity (kernels, copies, fills) that torch.profiler (CUPTI) records in the window, with
    its name. The profiler's clock is put onto %globaltimer by a stamp kernel after every step:
    the value it wrote lies within its own [start, end] on the profiler's clock, so value - start
    is the offset to within the stamp's length (a few microseconds); each activity takes its
    nearest stamp's offset, so the clocks' drift over a row does not add up."""

    STAMP = "stamp_kernel"
    SLOTS = 1 << 16

    def __init__(self, stream):
        self.stream = stream
        self.stamp = make_stamp()
        self.values = torch.zeros(self.SLOTS, dtype=torch.int64, device="cuda")
        self.count = 0
        for i in range(3):  # compiled before the window (Triton specializes 1 and 16k apart)
            self.stamp(self.values, i)
        stream.synchronize()
        self.prof = None

    def start(self):
        from torch.profiler import ProfilerActivity, profile

        self.prof = profile(activities=[ProfilerActivity.CUDA])
        self.prof.__enter__()
        self.step()

    def step(self):
        if self.count < self.SLOTS:
            self.stamp(self.values, self.count)
            self.count += 1

    def result(self):
        import bisect

        self.stream.synchronize()
        self.prof.__exit__(None, None, None)
        values = self.values[:self.count].tolist()
        acts, stamps = [], []
        for e in self.prof.profiler.kineto_results.events():
            if e.device_type() != torch.autograd.DeviceType.CUDA:
                continue
            t0 = e.start_ns()
            if self.STAMP in e.name():
                stamps.append((t0, t0 + e.duration_ns()))
            else:
                acts.append((t0, t0 + e.duration_ns(), e.name()))
        stamps.sort()
        if not acts or len(stamps) != self.count:
            # The i-th stamp recorded must be the i-th launched (one stream: they ran in order);
            # one lost would move every later activity by a step.
            return {"trace_error": "%d activities and %d of %d stamps recorded" %
                    (len(acts), len(stamps), self.count)}
        n = len(stamps)
        at = [s[0] for s in stamps]
        offsets = [values[i] - stamps[i][0] for i in range(n)]
        jitter = sorted(abs(offsets[i] - offsets[i - 1]) for i in range(1, n)) or [0]
        names, index, trace = [], {}, []
        for t0, t1, name in sorted(acts):
            k = min(n - 1, bisect.bisect_left(at, t0))
            if k > 0 and t0 - at[k - 1] < at[k] - t0:
                k -= 1
            if name not in index:
                index[name] = len(names)
                names.append(name)
            trace.append([t0 + offsets[k], t1 + offsets[k], index[name]])
        return {
            "trace": trace,  # [start, end, name's index], on the GPU's clock (ns)
            "trace_names": names,
            # How well the clocks were matched: the stamps recorded (of those launched), and
            # how much the offset moved from one stamp to the next (ns, P50 and max; a few
            # thousand where the two clocks run alike).
            "trace_stamps": [len(stamps), self.count],
            "trace_offset_jitter": [jitter[len(jitter) // 2], jitter[-1]],
        }


def clock_offsets(samples, n, reach=20):
    """The clocks' offset for each of n requests: the largest lower bound (globaltimer - host
    time after a synchronize) among the calibration samples within reach of it."""
    out = []
    for i in range(n):
        near = samples[max(0, i - reach):i + reach]
        out.append(max(near) if near else float("nan"))
    return out


def wait_for_file(path, pid):
    """Waits until path exists (another process is ready), then lets it settle for a second."""
    while not os.path.exists(path):
        if pid:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                raise SystemExit("the process that was to create %s is gone" % path)
        time.sleep(0.05)
    time.sleep(1.0)


def make_stream(priority_kind, stream_priorities):
    if not stream_priorities:
        return torch.cuda.Stream()
    least, greatest = torch.cuda.Stream.priority_range()
    return torch.cuda.Stream(priority=greatest if priority_kind == "high" else least)


def run_client(args, stream, start_barrier=None, stop_event=None, captured=None):
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig()).cuda().eval()
    x = torch.randint(0, 30000, (args.client_batch, args.client_seq), device="cuda")
    stamp = make_stamp()
    # [request start, calibration, request end]
    stamps = torch.zeros(3, dtype=torch.int64, device="cuda")

    def request_kernels():
        stamp(stamps, 0)
        out = model(x)
        stamp(stamps, 2)
        return out

    with torch.no_grad(), torch.cuda.stream(stream):
        for _ in range(5):
            request_kernels()
            stamp(stamps, 1)  # Triton specializes an argument of 1: compiled apart
        stream.synchronize()
        graph = None
        if args.mode == "graph":
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                out = request_kernels()
            for _ in range(5):
                graph.replay()
            stream.synchronize()
        # Service time alone (this process, before the window): what the ceiling is computed from.
        t = time.perf_counter()
        for _ in range(20):
            graph.replay() if graph else request_kernels()
            stream.synchronize()
        service = (time.perf_counter() - t) / 20
    if captured:
        captured.set()
    if start_barrier:
        start_barrier.wait()
    if args.wait_file:
        wait_for_file(args.wait_file, args.wait_pid)
    gc.collect()
    gc.freeze()
    gc.disable()
    lat = []
    submitted, returned, started, ended, bounds, dues = [], [], [], [], [], []
    period = 1.0 / args.rate
    if args.window_file:
        open(args.window_file, "w").close()
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
            submitted.append(time.monotonic_ns())
            graph.replay() if graph else request_kernels()
            returned.append(time.monotonic_ns())
            stream.synchronize()
            lat.append(time.perf_counter() - due)
            dues.append(due)
            stamp(stamps, 1)
            stream.synchronize()
            synced = time.monotonic_ns()
            req_stamp, cal_stamp, end_stamp = stamps.tolist()
            started.append(req_stamp)
            ended.append(end_stamp)
            bounds.append(cal_stamp - synced)
    gc.enable()
    window_end = time.time()
    if stop_event:
        stop_event.set()
    # perf_counter and monotonic_ns read the same clock (CLOCK_MONOTONIC), so a request's due
    # time and its completion go onto the GPU's clock as its submission does.
    due_ns = [int(d * 1e9) for d in dues]
    done_ns = [int((d + x) * 1e9) for d, x in zip(dues, lat)]
    lat.sort()
    offsets = clock_offsets(bounds, n)
    preempt = sorted((started[i] - offsets[i] - submitted[i]) / 1e3 for i in range(n))
    half = n // 2
    drift = (max(bounds[half:]) - max(bounds[:half])) / 1e3 if half else float("nan")
    return {
        "role": "client",
        "mode": args.mode,
        "requests": n,
        "p50_ms": percentile(lat, 50) * 1e3,
        "p99_ms": percentile(lat, 99) * 1e3,
        "max_ms": lat[-1] * 1e3,
        "preempt_p50_us": percentile(preempt, 50),
        "preempt_p99_us": percentile(preempt, 99),
        "clock_drift_us": drift,
        "service_ms": service * 1e3,
        "rate": args.rate,
        "window": [window_start, window_end],
        # On the GPU's clock (ns): when each request was submitted, when its submitting call
        # returned, and when its first kernel started (a trace of the load is compared to them).
        "submit_gpu": [int(submitted[i] + offsets[i]) for i in range(n)],
        "returned_gpu": [int(returned[i] + offsets[i]) for i in range(n)],
        "start_gpu": started,
        # ...and when its last kernel ended: the request's time on the GPU is end - start.
        "end_gpu": ended,
        # On the host's CLOCK_MONOTONIC, for bench/gpu/gate_watch's record of the boards.
        "pid": os.getpid(),
        "submit_host": submitted,
        # When it was due and when the client saw it done (its latency is done - due).
        "due_gpu": [int(due_ns[i] + offsets[i]) for i in range(n)],
        "done_gpu": [int(done_ns[i] + offsets[i]) for i in range(n)],
    }


def run_load(args, stream, start_barrier=None, stop_event=None, captured=None):
    # One process: the load builds and warms up once the client's graph is captured; a capture
    # fails when another thread of the process allocates or synchronizes meanwhile (the training
    # load's warm-up did, now and then, natively too).
    if captured:
        captured.wait()
    torch.manual_seed(1)
    trace = None
    late_kernel = None  # an idle load's one kernel in its window (spin_once_after)
    if args.kind == "idle":
        # A process with a stream and nothing to run: the client is scheduled against it (its
        # queues are on the board) without any GPU contention.
        batch = 0

        def step():
            pass
    elif args.kind == "spin":
        # A step is SPIN_STEP kernels of args.spin_us each (one where a gap follows each kernel,
        # so that the warm-up's three steps stay short); every kernel's start and end are kept.
        # With spin_once, spin_once_kernels kernels in the warm-up (and with spin_once_event an
        # event recorded after them, kept to the end) and nothing after it, as the idle kind.
        spin, trace = make_spin(1 << 18, args.spin_fill, args.spin_blocks)
        gap = args.spin_gap_us / 1e6
        kernels = 1 if gap else SPIN_STEP
        batch = 0 if args.spin_once else kernels
        spin_ns = int(args.spin_us * 1000)
        ran_once = []
        if args.spin_once and args.spin_once_after is not None:
            def late_kernel():
                spin(spin_ns)

        def step():
            if args.spin_once:
                if not ran_once:
                    for _ in range(args.spin_once_kernels):
                        spin(spin_ns)
                    ran_once.append(torch.cuda.Event() if args.spin_once_event else None)
                    if args.spin_once_event:
                        ran_once[0].record(stream)
                        ran_once[0].synchronize()
                return
            for _ in range(kernels):
                spin(spin_ns)
                if gap:  # one kernel at a time, then nothing for the gap
                    if not args.spin_gap_nosync:
                        stream.synchronize()
                    time.sleep(gap)
    elif args.kind == "lm":
        # Language-model training with a head over GPT-2's 50,257-token vocabulary: GPT-2
        # medium's shape (24 layers, hidden 1024) in bfloat16 on 8 sequences of 512 tokens,
        # forward, backward and SGD. The head's three GEMMs run about 3-4 ms each (issue 45).
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config(n_embd=1024, n_layer=24, n_head=16, vocab_size=50257,
                                           n_positions=1024)).cuda().to(torch.bfloat16).train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)
        tokens = torch.randint(0, 50257, (8, 512), device="cuda")
        batch = 8

        def step():
            opt.zero_grad(set_to_none=True)
            model(input_ids=tokens, labels=tokens).loss.backward()
            opt.step()
    elif args.kind == "lmhead":
        # Only the lm load's head: its three GEMMs over the 50,257-token vocabulary (logits,
        # the hidden state's gradient, the weight's), the same shapes (8 x 512 tokens, hidden
        # 1024, bf16), nothing else. Next to the client it measures the floor the head sets:
        # a slice of these GEMMs cannot be shorter than one of its CTAs (issue 45).
        hidden = torch.randn(8 * 512, 1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        weight = torch.randn(50257, 1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        grad = torch.randn(8 * 512, 50257, device="cuda", dtype=torch.bfloat16)
        batch = 8

        def step():
            hidden.grad = weight.grad = None
            torch.nn.functional.linear(hidden, weight).backward(grad)
    elif args.kind == "decode":
        # An inference server's captured decode loop: one CUDA graph of 8 forward passes of GPT-2
        # medium's shape (24 layers, hidden 1024, its 50,257-token head; bf16, 8 sequences of 128
        # tokens), replayed. Its kernels are short, but a graph launch is one command: without
        # gates inside it (GPUPRIO_GRAPH_GATE_US), a request waits for the whole graph in flight.
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config(n_embd=1024, n_layer=24, n_head=16, vocab_size=50257,
                                           n_positions=1024)).cuda().to(torch.bfloat16).eval()
        tokens = torch.randint(0, 50257, (8, 128), device="cuda")
        batch = 8 * 8

        def forwards():
            with torch.no_grad():
                for _ in range(8):
                    model(input_ids=tokens)

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            forwards()  # warm-up outside the capture (cuBLAS handles, workspaces)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            forwards()

        def step():
            graph.replay()
    elif args.kind == "ttrain":
        # A transformer training step with long kernels: BERT-large's shape (24 layers, hidden
        # 1024) in bfloat16 on 32 sequences of 512 tokens, forward, backward and SGD. Its GEMMs
        # run about 0.2-0.5 ms each, longer than the ResNet-50 step's typical kernel, so a
        # request arriving mid-kernel waits longer for the running one.
        from transformers import BertConfig, BertModel

        model = BertModel(BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                     intermediate_size=4096)).cuda().to(torch.bfloat16).train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)
        tokens = torch.randint(0, 30000, (32, 512), device="cuda")
        batch = 32

        def step():
            opt.zero_grad(set_to_none=True)
            model(tokens).last_hidden_state.float().pow(2).mean().backward()
            opt.step()
    else:
        import torchvision

        model = torchvision.models.resnet50(weights=None).cuda().half().to(memory_format=torch.channels_last)
        x = torch.randn(256, 3, 224, 224, device="cuda").half().to(memory_format=torch.channels_last)
        batch = 256
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
        torch.zeros(1, device="cuda")  # the stream's first command: its queue exists
        for _ in range(3):
            step()
        stream.synchronize()
        kernel_trace = KernelTrace(stream) if args.trace_kernels and batch else None
        if args.ready_file:
            open(args.ready_file, "w").close()
        if start_barrier:
            start_barrier.wait()
        events = []
        completions = []  # wall-clock times iterations were seen finished
        t_start = time.perf_counter()
        window_at = [None if args.window_file else t_start]

        def past(seconds):
            """Whether seconds have passed since the client's window began (with --window-file;
            else since the load's own did)."""
            if window_at[0] is None and os.path.exists(args.window_file):
                window_at[0] = time.perf_counter()
            return (seconds is not None and window_at[0] is not None and
                    time.perf_counter() - window_at[0] >= seconds)

        def told_to_stop():
            if stop_event or args.stop_file:
                return (stop_event and stop_event.is_set()) or (args.stop_file and os.path.exists(args.stop_file))
            return time.perf_counter() - t_start >= args.seconds

        def stopped():
            return past(args.exit_after) or past(args.quiet_after) or told_to_stop()

        while not batch and not stopped():  # idle: until told to stop
            if late_kernel and past(args.spin_once_after):
                late_kernel()
                late_kernel = None
            time.sleep(0.05)
        if kernel_trace:
            kernel_trace.start()
        while batch and not stopped():
            step()
            if kernel_trace:
                kernel_trace.step()
            e = torch.cuda.Event()
            e.record(stream)
            events.append(e)
            if len(events) > 2:
                events.pop(0).synchronize()
                completions.append(time.time())
        for e in events:
            e.synchronize()
            completions.append(time.time())
        while args.quiet_after is not None and not told_to_stop():  # stays, submitting nothing
            time.sleep(0.05)
    result = {"role": "load", "kind": args.kind, "batch": batch, "completions": completions}
    if trace:
        result["trace"] = trace()  # [start, end] of every kernel, on the GPU's clock (ns)
    if kernel_trace:
        result.update(kernel_trace.result())
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["client", "load", "both"])
    p.add_argument("--mode", default="graph", choices=["graph", "eager"])
    p.add_argument("--kind", default="infer", choices=["infer", "train", "ttrain", "lm", "lmhead", "decode", "spin", "idle"])
    p.add_argument("--spin-us", type=float, default=200.0, help="spin load: each kernel's length")
    p.add_argument("--spin-fill", action="store_true",
                   help="spin load: blocks that fill every SM (a kernel's block is the kernel)")
    p.add_argument("--spin-blocks", type=int, default=0,
                   help="spin load: blocks per kernel (default: one per SM, two with --spin-fill)")
    p.add_argument("--spin-once", action="store_true",
                   help="spin load: one kernel in the warm-up, then nothing (an MPS neighbour "
                        "that ran once)")
    p.add_argument("--spin-once-kernels", type=int, default=1,
                   help="spin load with --spin-once: this many kernels in the warm-up")
    p.add_argument("--spin-once-event", action="store_true",
                   help="spin load with --spin-once: an event recorded after the warm-up's "
                        "kernels and waited for, kept to the end")
    p.add_argument("--spin-once-after", type=float,
                   help="spin load with --spin-once: one more kernel this many seconds into the "
                        "window, then nothing")
    p.add_argument("--quiet-after", type=float,
                   help="load: submit nothing more this many seconds into the window, and stay "
                        "until told to stop (an MPS neighbour gone quiet)")
    p.add_argument("--exit-after", type=float,
                   help="load: end (and exit) this many seconds into the window, before the "
                        "client does (an MPS neighbour that leaves)")
    p.add_argument("--spin-gap-us", type=float, default=0.0,
                   help="spin load: leave the GPU idle this long after each kernel (an MPS "
                        "neighbour that is active but seldom running)")
    p.add_argument("--spin-gap-nosync", action="store_true",
                   help="spin load: sleep through the gap without synchronizing the stream first")
    p.add_argument("--trace-kernels", action="store_true",
                   help="load (not spin): record every GPU activity of its window with "
                        "torch.profiler, on the GPU's clock, as the spin load's trace (and their "
                        "names: table.py shows which kernels the slowest requests waited for)")
    p.add_argument("--client-batch", type=int, default=8, help="client: sequences per request")
    p.add_argument("--client-seq", type=int, default=128, help="client: tokens per sequence")
    p.add_argument("--rate", type=float, default=40.0)
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--stream-priorities", action="store_true")
    p.add_argument("--gpuprio", action="store_true")
    p.add_argument("--stop-file", help="load: run until this file exists (two processes)")
    p.add_argument("--ready-file", help="load: created once warmed up")
    p.add_argument("--wait-file", help="client: start the window once this file exists")
    p.add_argument("--window-file",
                   help="client: created as its window begins; load: what --spin-once-after, "
                        "--quiet-after and --exit-after count from (else the load's own start)")
    p.add_argument("--wait-pid", type=int, help="client: give up waiting if this process ends")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    torch.backends.cudnn.benchmark = True
    result = {}
    if args.trace_kernels and (args.role == "both" or args.kind == "spin"):
        # In one process the profiler would record the client's kernels and stamps as the load's;
        # the spin load has its own trace.
        raise SystemExit("--trace-kernels: a load of its own process, not --kind spin")
    if args.role == "client":
        result = run_client(args, make_stream("high", args.stream_priorities))
    elif args.role == "load":
        result = run_load(args, make_stream("low", args.stream_priorities))
    else:
        set_prio = gpuprio_api() if args.gpuprio else None
        if args.gpuprio and not set_prio:
            raise SystemExit("--gpuprio: gpuprio is not loaded in this process")
        barrier, stop, captured = threading.Barrier(2), threading.Event(), threading.Event()
        out = {}

        def stream_for(kind, priority):
            stream = make_stream(kind, args.stream_priorities)
            if set_prio and set_prio(ctypes.c_void_p(stream.cuda_stream), priority) != 0:
                raise SystemExit("gpuprio_stream_set_priority failed")
            return stream

        high, low = stream_for("high", 10), stream_for("low", -10)

        def client():
            out["client"] = run_client(args, high, barrier, stop, captured)

        def load():
            out["load"] = run_load(args, low, barrier, stop, captured)

        threads = [threading.Thread(target=client), threading.Thread(target=load)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result = out
        if set_prio:  # what gpuprio did to each stream's queue (the row's log shows it too)
            result["gpuprio_queues"] = gpuprio_queues()
            for q in result["gpuprio_queues"]:
                print("gpuprio queue:", q)
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
