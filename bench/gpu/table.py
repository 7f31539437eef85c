"""table.py DIR - prints the co-location table from the rows bench/gpu/run.sh wrote under DIR.

Each row directory holds client.json and load.json (or both.json for one process). Columns:
the client's P50 and P99 over its standalone run in the same mode; the load's throughput
during the client's window over the load alone, and over its work-conserving ceiling (alone x
(1 - the fraction of the GPU the client uses alone: rate x its standalone service time)); and
the client's preemption latency, P50 and P99 in microseconds: from its host's submission of a
request to its first kernel's start on the GPU (colocation.py says how; the standalone row shows
what launching alone costs).

A second table breaks each request's preemption latency down (all on the GPU's clock): how long
the submitting call took, and in rows with a spin load (colocation.py --kind spin), against the
load's kernel trace: how much of the wait the load's kernels ran, how many of them started
after the submission, how long the GPU then ran neither, and how many requests found a load
kernel cut short (started before the request's first kernel and still running after it).
"""
import bisect
import json
import os
import sys

from stats import percentile


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rate_in_window(load, window):
    ws, we = window
    done = [t for t in load["completions"] if ws <= t <= we]
    return len(done) * load["batch"] / (we - ws) if we > ws else float("nan")


def row_data(d):
    both = load_json(os.path.join(d, "both.json"))
    if both:
        return both.get("client"), both.get("load")
    return load_json(os.path.join(d, "client.json")), load_json(os.path.join(d, "load.json"))


def breakdown(c, l):
    """Per-request figures of the preemption latency; against the load's kernel trace if any."""
    out = {"pre": [], "call": [], "after": [], "gpu": [], "load ran": [], "load started": [],
           "neither": [], "cut": []}
    trace = sorted(l["trace"]) if l and "trace" in l else None
    starts = [k[0] for k in trace] if trace else []
    ends = c.get("end_gpu") or [None] * len(c["start_gpu"])
    for s, r, h, e in zip(c["submit_gpu"], c["returned_gpu"], c["start_gpu"], ends):
        out["pre"].append((h - s) / 1e3)
        out["call"].append((r - s) / 1e3)
        out["after"].append((h - r) / 1e3)
        if e is not None:
            out["gpu"].append((e - h) / 1e3)
        if trace is None:
            continue
        # Load kernels that began before the request's first kernel and may overlap [s, h].
        hi = bisect.bisect_left(starts, h)
        lo = bisect.bisect_left(starts, s - 50_000_000)
        ran, started, last_end, cut = 0, 0, s, 0
        for k0, k1 in trace[lo:hi]:
            ran += max(0, min(k1, h) - max(k0, s))
            started += k0 > s
            if k1 <= h:
                last_end = max(last_end, k1)
            else:
                cut = 1
        out["load ran"].append(ran / 1e3)
        out["load started"].append(started)
        out["neither"].append((h - last_end) / 1e3 if not cut else 0.0)
        out["cut"].append(cut)
    return out


def print_breakdowns(found):
    if not found:
        return
    print()
    print("Where the preemption latency goes (us; P50/P99/max over requests): 'call' is the "
          "submitting call itself, 'after' the first kernel's start after the call returned "
          "(negative: before), 'on GPU' the request from its first kernel's start to its last "
          "one's end; against a spin load's trace, how long its kernels ran after "
          "the submission, how many started after it, how long the GPU then ran neither, and "
          "in how many requests a load kernel was cut short:")
    fmt = "%-34s %16s %16s %14s %20s %16s %13s %16s %6s"
    print(fmt % ("row", "pre", "call", "after", "on GPU", "load ran", "load started",
                 "neither ran", "cut"))

    def three(v):
        if not v:
            return "-"
        v = sorted(v)
        return "%.0f/%.0f/%.0f" % (percentile(v, 50), percentile(v, 99), v[-1])

    for name, b in found:
        print(fmt % (name, three(b["pre"]), three(b["call"]), three(b["after"]),
                     three(b["gpu"]), three(b["load ran"]),
                     three(b["load started"]), three(b["neither"]),
                     sum(b["cut"]) if b["cut"] else "-"))


def main():
    root = sys.argv[1]
    rows = sorted(os.listdir(root))
    alone = {}
    for mode in ("graph", "eager"):
        c, _ = row_data(os.path.join(root, "00-alone-client-" + mode))
        if c:
            alone[mode] = c
    _, la = row_data(os.path.join(root, "00-alone-load"))
    load_alone = None
    if la:
        comp = la["completions"]
        load_alone = (len(comp) - 1) * la["batch"] / (comp[-1] - comp[0]) if len(comp) > 1 else None
    fmt = "%-34s %8s %8s %9s %9s %10s %9s %9s %8s %8s"
    head = fmt % ("row", "P50 ms", "P99 ms", "P50/alone", "P99/alone", "load img/s", "vs alone",
                  "vs ceil", "pre P50", "pre P99")
    print(head)
    print("-" * len(head))
    drifts = []
    traced = []
    for r in rows:
        c, l = row_data(os.path.join(root, r))
        name = r.split("-", 1)[1] if "-" in r else r
        if not c and not l:
            print("%-34s %s" % (name, "FAILED (see its log)"))
            continue
        cells = ["-"] * 9
        if c:
            a = alone.get(c["mode"])
            cells[0] = "%.2f" % c["p50_ms"]
            cells[1] = "%.2f" % c["p99_ms"]
            if a:
                cells[2] = "%.2fx" % (c["p50_ms"] / a["p50_ms"])
                cells[3] = "%.2fx" % (c["p99_ms"] / a["p99_ms"])
            if "preempt_p50_us" in c:
                cells[7] = "%.0f" % c["preempt_p50_us"]
                cells[8] = "%.0f" % c["preempt_p99_us"]
        if l and l["batch"]:  # (an idle load has nothing to count)
            if c:
                rate = rate_in_window(l, c["window"])
            else:
                comp = l["completions"]
                rate = (len(comp) - 1) * l["batch"] / (comp[-1] - comp[0]) if len(comp) > 1 else float("nan")
            cells[4] = "%.0f" % rate
            if load_alone:
                cells[5] = "%.2f" % (rate / load_alone)
                a = alone.get(c["mode"]) if c else None
                if a:
                    busy = a["rate"] * a["service_ms"] / 1e3
                    cells[6] = "%.2f" % (rate / (load_alone * max(1e-9, 1 - busy)))
        print(fmt % tuple([name] + cells))
        if c and "submit_gpu" in c:
            traced.append((name, breakdown(c, l)))
        if c and "clock_drift_us" in c:
            drifts.append(abs(c["clock_drift_us"]))
    if drifts:
        print("(clocks: the offset of the GPU's clock to the host's moved by at most %.1f us "
              "between the two halves of a row)" % max(drifts))
    print_breakdowns(traced)


if __name__ == "__main__":
    main()
