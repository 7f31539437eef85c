#!/usr/bin/env python3
"""split.py LOG... - where the scheduled client's calls went, from the library's own report.

Reads the lines that GPUPRIO_LOG=debug GPUPRIO_SLOW_US=1 writes for every call ("a call on queue
Q took N us: A admitting it (B of them activating the queue, C of those waiting for the
scheduling lock), D in the runtime, E recording ...") from each LOG (run.sh's client.log files),
and prints one line per LOG and one for all of them together: the calls, those that spent at
least 1 us activating their queue, activation P50/P90/P99 over those, the wait for the scheduling
lock at P99 over all calls, and the whole call at P50/P90 (microseconds, whole numbers as
logged). Only queues that activated at least once are counted (the client's scheduled stream).
"""
import re
import sys

LINE = re.compile(r"a call on queue (\S+) took (\d+) us: (\d+) admitting it \((\d+) of them "
                  r"activating the queue, (\d+) of those waiting")


def pct(values, p):
    if not values:
        return "-"
    v = sorted(values)
    return str(v[min(len(v) - 1, int(p * len(v)))])


def calls(path):
    """[(whole, activation, lock wait)] of the queues that activated at least once."""
    by_queue = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                by_queue.setdefault(m.group(1), []).append(
                    (int(m.group(2)), int(m.group(4)), int(m.group(5))))
    out = []
    for rows in by_queue.values():
        if any(a for _, a, _ in rows):
            out += rows
    return out


def report(name, rows):
    act = [a for _, a, _ in rows if a >= 1]
    print("%-40s %6d %6d %5s %5s %5s %8s %5s %5s" % (
        name[-40:], len(rows), len(act), pct(act, 0.5), pct(act, 0.9), pct(act, 0.99),
        pct([w for _, _, w in rows], 0.99), pct([c for c, _, _ in rows], 0.5),
        pct([c for c, _, _ in rows], 0.9)))


def main():
    print("%-40s %6s %6s %5s %5s %5s %8s %5s %5s" % (
        "log", "calls", "activ", "a50", "a90", "a99", "lock99", "c50", "c90"))
    every = []
    for path in sys.argv[1:]:
        rows = calls(path)
        every += rows
        report(path, rows)
    if len(sys.argv) > 2:
        report("all", every)


if __name__ == "__main__":
    main()
