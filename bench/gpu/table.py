"""table.py DIR - prints the co-location table from the rows bench/gpu/run.sh wrote under DIR.

Each row directory holds client.json and load.json (or both.json for one process). Columns:
the client's P50 and P99 over its standalone run in the same mode; the load's throughput
during the client's window over the load alone, and over its work-conserving ceiling (alone x
(1 - the fraction of the GPU the client uses alone: rate x its standalone service time)); and
the client's preemption latency, P50 and P99 in microseconds: from its host's submission of a
request to its first kernel's start on the GPU (colocation.py says how; the standalone row shows
what launching alone costs).

A second table breaks each request down (all on the GPU's clock): how late the client submitted
it after it was due, how long the submitting call took, the request's time on the GPU, its
submission to its last kernel's end ('to end': the latency without the host's wake-ups, with its
P99 over the standalone row's), how long after that the client saw it done (latency = late + pre
+ on GPU + seen), and in rows with a spin load (colocation.py --kind spin) or a traced one
(--trace-kernels), against the load's kernel trace: how much of the wait the load's kernels ran,
how many of them started after the submission, how long the GPU then ran neither, how many
requests found a load kernel cut short (started before the request's first kernel and still
running after it), and how long after the end of the load kernel running when the call returned
the request's first kernel started.
A traced real load's rows then show which of its activities the requests found running at their
submission, and for the slowest requests which one and for how long.
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


def board_events(d):
    """gate_watch's record of the row's boards (gates.txt): [(t_ns, pid, what, value)], or None."""
    try:
        with open(os.path.join(d, "gates.txt")) as f:
            rows = [line.split() for line in f]
    except OSError:
        return None
    return sorted((int(t), int(pid), what, int(v)) for t, pid, _, what, v in rows)


def first_after(events, times, t0, window_ns, pick):
    """The first event picked after t0 (within window_ns), in microseconds after t0, or None."""
    for k in range(bisect.bisect_left(times, t0), len(events)):
        e = events[k]
        if e[0] > t0 + window_ns:
            return None
        if pick(e):
            return (e[0] - t0) / 1e3
    return None


def breakdown(c, l, events=None):
    """Per-request figures of the preemption latency; against the load's kernel trace if any,
    and the boards' record (gate_watch) if any."""
    out = {"late": [], "pre": [], "call": [], "after": [], "gpu": [], "to end": [], "seen": [],
           "load ran": [], "load started": [], "neither": [], "cut": [], "past block": [],
           "active": [], "closed": [], "after close": []}
    trace = sorted(l["trace"]) if l and "trace" in l else None
    starts = [k[0] for k in trace] if trace else []
    if events and "submit_host" in c:
        times = [e[0] for e in events]
        me = c["pid"]
        for i, t in enumerate(c["submit_host"]):
            # Within the request's first 2 ms: its queue turning active (none when it still was),
            # and another process's gate closing (none when it already was).
            a = first_after(events, times, t, 2_000_000,
                            lambda e: e[1] == me and e[2] == "active" and e[3] == 1)
            g = first_after(events, times, t, 2_000_000,
                            lambda e: e[1] != me and e[2] == "gate" and e[3] == 0)
            if a is not None:
                out["active"].append(a)
            if g is not None:
                out["closed"].append(g)
                if trace is not None:
                    closed_gpu = c["submit_gpu"][i] + g * 1e3
                    out["after close"].append(bisect.bisect_left(starts, c["end_gpu"][i]) -
                                              bisect.bisect_right(starts, closed_gpu))
    for due, s, e, done in zip(c.get("due_gpu", []), c["submit_gpu"], c.get("end_gpu") or [],
                               c.get("done_gpu", [])):
        out["late"].append((s - due) / 1e3)
        out["seen"].append((done - e) / 1e3)
    ends = c.get("end_gpu") or [None] * len(c["start_gpu"])
    for s, r, h, e in zip(c["submit_gpu"], c["returned_gpu"], c["start_gpu"], ends):
        out["pre"].append((h - s) / 1e3)
        out["call"].append((r - s) / 1e3)
        out["after"].append((h - r) / 1e3)
        if e is not None:
            out["gpu"].append((e - h) / 1e3)
            out["to end"].append((e - s) / 1e3)
        if trace is None:
            continue
        # Load kernels that began before the request's first kernel and may overlap [s, h].
        hi = bisect.bisect_left(starts, h)
        lo = bisect.bisect_left(starts, s - 50_000_000)
        # 'ran' is the time within [s, h] that any of them covered: a traced real load's
        # activities overlap (streams side by side), which a sum would count twice.
        ran, started, last_end, cut, covered = 0, 0, s, 0, s
        for k in trace[lo:hi]:
            k0, k1 = k[0], k[1]
            ran += max(0, min(k1, h) - max(k0, covered))
            covered = max(covered, min(k1, h))
            started += k0 > s
            if k1 <= h:
                last_end = max(last_end, k1)
            else:
                cut = 1
        # The first kernel's start after the end of the load kernel that was running when the
        # submitting call returned (its blocks are its only wave: colocation.py's spin kernels).
        running_end = max([k[1] for k in trace[lo:bisect.bisect_right(starts, r)] if k[1] > r],
                          default=r)
        out["past block"].append((h - running_end) / 1e3)
        out["load ran"].append(ran / 1e3)
        out["load started"].append(started)
        out["neither"].append((h - last_end) / 1e3 if not cut else 0.0)
        out["cut"].append(cut)
    return out


def short(name, width=56):
    name = name[5:] if name.startswith("void ") else name
    return name if len(name) <= width else name[:width - 3] + "..."


def waited_for(c, l):
    """For each request, against a named trace (colocation.py --trace-kernels): its preemption
    latency and the load activity running at its submission (the latest begun of those; where
    none was, the first one that started before the request's first kernel), as (pre us, name,
    length us, how long it had run at the submission us, negative where it began after it,
    whether it ran on past the request's first kernel, and the three activities that covered most
    of the wait from the submission to the request's first kernel, as (name, us) longest first)."""
    trace = sorted(l["trace"])
    names = l["trace_names"]
    starts = [k[0] for k in trace]
    out = []
    for s, h in zip(c["submit_gpu"], c["start_gpu"]):
        lo = bisect.bisect_left(starts, s - 50_000_000)
        hi = bisect.bisect_left(starts, h)
        at = [k for k in trace[lo:hi] if k[0] <= s < k[1]]
        later = [k for k in trace[lo:hi] if k[0] > s]
        k = at[-1] if at else later[0] if later else None
        during = sorted(((min(j[1], h) - max(j[0], s)) / 1e3, names[j[2]])
                        for j in trace[lo:hi] if min(j[1], h) > max(j[0], s))[::-1][:3]
        during = [(n, us) for us, n in during]
        if k is None:
            out.append(((h - s) / 1e3, "(none)", 0.0, 0.0, False, during))
        else:
            out.append(((h - s) / 1e3, names[k[2]], (k[1] - k[0]) / 1e3, (s - k[0]) / 1e3,
                        k[1] > h, during))
    return out


def print_waits(traced):
    """traced: (row name, client, load) of the rows whose load trace has names."""
    for name, c, l in traced:
        waits = waited_for(c, l)
        pre = sorted(w[0] for w in waits)
        slow = percentile(pre, 99)
        print()
        print("%s: the load's activity at each request's submission (colocation.py "
              "--trace-kernels; stamps %s, clock offset's step P50/max %s ns). Per name: the "
              "requests that found it running, their 'pre' P50/P99/max (us), its length "
              "P50/max (us; a kernel switched out for the client's counts that time), how many "
              "of them ran on past the request's first kernel, and how many of the requests at "
              "or above P99 'pre' (%.0f us) found it:" %
              (name, l.get("trace_stamps"), l.get("trace_offset_jitter"), slow))
        groups = {}
        for w in waits:
            groups.setdefault(w[1], []).append(w)
        fmt = "  %-58s %8s %16s %14s %6s %8s"
        print(fmt % ("activity running at submission", "requests", "pre", "length", "on",
                     ">= P99"))
        rows = []
        for kname, ws in groups.items():
            p = sorted(w[0] for w in ws)
            n = sorted(w[2] for w in ws)
            rows.append((sum(1 for w in ws if w[0] >= slow), len(ws), short(kname),
                         "%.0f/%.0f/%.0f" % (percentile(p, 50), percentile(p, 99), p[-1]),
                         "%.0f/%.0f" % (percentile(n, 50), n[-1]), sum(1 for w in ws if w[4])))
        for top, count, kname, p, n, on in sorted(rows, reverse=True)[:12]:
            print(fmt % (kname, count, p, n, on, top))
        lengths = {}
        for k in l["trace"]:
            lengths.setdefault(k[2], []).append((k[1] - k[0]) / 1e3)
        longest = sorted(((sorted(v)[len(v) // 2], max(v), len(v), i) for i, v in lengths.items()),
                         reverse=True)[:8]
        print("  the load's longest activities in the window (median and max length us, count):")
        for med, mx, count, i in longest:
            print("    %-58s %8.0f %8.0f %8d" % (short(l["trace_names"][i]), med, mx, count))
        print("  the slowest requests: pre us, the activity at submission, its length us, how "
              "long it had run then (negative: begun after the submission), and whether it ran "
              "on past the request's first kernel; then the activities that covered most of the "
              "wait (us of it):")
        for w in sorted(waits, reverse=True)[:max(5, len(waits) // 100)]:
            print("    %8.0f  %-58s %8.0f %8.0f %s" % (w[0], short(w[1]), w[2], w[3],
                                                     "on" if w[4] else "ended"))
            if w[5]:
                print("              " + "; ".join("%s %.0f" % (short(n, 48), us)
                                               for n, us in w[5]))


def print_breakdowns(found):
    """found: (row name, breakdown, client mode), the standalone rows among them."""
    if not found:
        return
    alone_end = {m: percentile(sorted(b["to end"]), 99) for n, b, m in found
                 if n == "alone-client-" + m and b["to end"]}
    print()
    print("Where the latency goes (us; P50/P99/max over requests): 'late' is the submission "
          "after the request was due, 'pre' the submission to the first kernel's start, 'call' "
          "the submitting call itself, 'after' the first kernel's start after the call returned "
          "(negative: before), 'on GPU' the request from its first kernel's start to its last "
          "one's end, 'to end' the submission to that end (the latency without the host's "
          "wake-ups: 'late' and 'seen'), and its P99 over the standalone row's, 'seen' the "
          "client seeing it done after that; against a spin load's trace, how long its kernels "
          "ran after the submission, how many started after it, how long the GPU then ran "
          "neither, in how many requests a load kernel was cut short, and the first kernel's "
          "start after the "
          "end of the load kernel running when the call returned ('past block', negative: "
          "before; the spin load's blocks are its kernels):")
    fmt = "%-34s %14s %16s %16s %14s %20s %20s %7s %14s %16s %13s %16s %6s %16s"
    print(fmt % ("row", "late", "pre", "call", "after", "on GPU", "to end", "P99/al", "seen",
                 "load ran", "load started", "neither ran", "cut", "past block"))

    def three(v):
        if not v:
            return "-"
        v = sorted(v)
        return "%.0f/%.0f/%.0f" % (percentile(v, 50), percentile(v, 99), v[-1])

    for name, b, mode in found:
        ratio = "-"
        if b["to end"] and alone_end.get(mode):
            ratio = "%.2fx" % (percentile(sorted(b["to end"]), 99) / alone_end[mode])
        print(fmt % (name, three(b["late"]), three(b["pre"]), three(b["call"]),
                     three(b["after"]), three(b["gpu"]), three(b["to end"]), ratio,
                     three(b["seen"]), three(b["load ran"]),
                     three(b["load started"]), three(b["neither"]),
                     sum(b["cut"]) if b["cut"] else "-", three(b["past block"])))
    watched = [(name, b) for name, b, _ in found if b["closed"] or b["active"]]
    if watched:
        print()
        print("The boards beside the requests (bench/gpu/gate_watch; us after the submission, "
              "P50/P99/max): the client's queue turning active, and the load's gate closing "
              "(requests in which it did), and in how many requests a load kernel started after "
              "the gate had closed:")
        wfmt = "%-34s %16s %16s %9s %12s"
        print(wfmt % ("row", "active", "closed", "requests", "after close"))
        for name, b in watched:
            print(wfmt % (name, three(b["active"]), three(b["closed"]), len(b["closed"]),
                          sum(1 for x in b["after close"] if x > 0) if b["after close"] else "-"))


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
    traced, named, untraced = [], [], []
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
            traced.append((name, breakdown(c, l, board_events(os.path.join(root, r))),
                           c["mode"]))
            if l and "trace_names" in l:
                named.append((name, c, l))
            elif l and "trace_error" in l:
                untraced.append("%s: no kernel trace (%s)" % (name, l["trace_error"]))
        if c and "clock_drift_us" in c:
            drifts.append(abs(c["clock_drift_us"]))
    if drifts:
        print("(clocks: the offset of the GPU's clock to the host's moved by at most %.1f us "
              "between the two halves of a row)" % max(drifts))
    for line in untraced:
        print(line)
    print_breakdowns(traced)
    print_waits(named)


if __name__ == "__main__":
    main()
