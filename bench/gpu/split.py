#!/usr/bin/env python3
"""split.py LOG... - where the scheduled client's calls went, from the library's own report.

Reads the lines that GPUPRIO_LOG=debug GPUPRIO_SLOW_US=1 writes for every call ("a call on queue
Q took N us: A admitting it (B of them activating the queue, C of those waiting for the
scheduling lock), D in the runtime, E recording ...") from each LOG (run.sh's client.log files),
and prints one line per LOG and one for all of them together: the calls, those that spent at
least 1 us activating their queue, activation P50/P90/P99 over those, the wait for the scheduling
lock at P99 over all calls, and the whole call at P50/P90 (microseconds, whole numbers as
logged). Only queues that activated at least once are counted (the client's scheduled stream).

Then, per LOG, the slowest activations (the top 1%, at least 3) with what the library saw of each:
the time to reach the scheduling lock, deciding, the wait for the lock itself and who held it (for
how long before, and how long the hand-over took once it let go, spinning or asleep), the
thread's context switches and page faults meanwhile; and how often a
decision waited for the board's lock ("deciding on device D waited N us for its board's lock").
"""
import re
import sys

LINE = re.compile(r"a call on queue (\S+) took (\d+) us: (\d+) admitting it \((\d+) of them "
                  r"activating the queue, (\d+) of those waiting")
ACTIVATING = re.compile(r"; activating: (\d+) us deciding, (\d+) us waiting for the lock \(held by "
                        r"(.+?), for (\d+) us before; handed over in (\d+) us, (slept|spun)\), "
                        r"(-?\d+) context switches, (-?\d+) page faults")
BOARD_WAIT = re.compile(r"waited (\d+) us for its board's lock \(held by process (\d+)\)")


def pct(values, p):
    if not values:
        return "-"
    v = sorted(values)
    return str(v[min(len(v) - 1, int(p * len(v)))])


def calls(path):
    """[(whole, activation, lock wait, details)] of the queues that activated at least once;
    details is the activating part's (decide, wait, holder, held, switches, faults) or None. Also
    the board-lock waits [(us, pid)]."""
    by_queue, board = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                a = ACTIVATING.search(line)
                details = None
                if a:
                    details = (int(a.group(1)), int(a.group(2)), a.group(3), int(a.group(4)),
                               int(a.group(5)), a.group(6), int(a.group(7)), int(a.group(8)))
                by_queue.setdefault(m.group(1), []).append(
                    (int(m.group(2)), int(m.group(4)), int(m.group(5)), details))
                continue
            b = BOARD_WAIT.search(line)
            if b:
                board.append((int(b.group(1)), int(b.group(2))))
    out = []
    for rows in by_queue.values():
        if any(r[1] for r in rows):
            out += rows
    return out, board


def slowest(name, rows, board):
    act = sorted((r for r in rows if r[1] >= 1), key=lambda r: -r[1])
    top = act[:max(3, len(act) // 100)]
    print("  %s: slowest activations (us): activation = to the lock + deciding (+ the rest)" % name[-40:])
    for whole, a, reach, d in top:
        if d:
            decide, wait, holder, held, handover, how, switches, faults = d
            print("    %4d = %4d + %4d; lock wait %4d behind %s (held %d before; handed over in %d, "
                  "%s); %d switches, %d faults" % (a, reach, decide, wait, holder, held, handover, how,
                                                  switches, faults))
        else:
            print("    %4d = %4d + ? (no details logged)" % (a, reach))
    if board:
        waits = sorted(us for us, _ in board)
        print("    board lock waited: %d times, max %d us, holders %s" % (
            len(waits), waits[-1], sorted(set(pid for _, pid in board))))


def report(name, rows):
    act = [r[1] for r in rows if r[1] >= 1]
    print("%-40s %6d %6d %5s %5s %5s %8s %5s %5s" % (
        name[-40:], len(rows), len(act), pct(act, 0.5), pct(act, 0.9), pct(act, 0.99),
        pct([r[2] for r in rows], 0.99), pct([r[0] for r in rows], 0.5),
        pct([r[0] for r in rows], 0.9)))


def main():
    print("%-40s %6s %6s %5s %5s %5s %8s %5s %5s" % (
        "log", "calls", "activ", "a50", "a90", "a99", "lock99", "c50", "c90"))
    every, logs = [], []
    for path in sys.argv[1:]:
        rows, board = calls(path)
        every += rows
        logs.append((path, rows, board))
        report(path, rows)
    if len(sys.argv) > 2:
        report("all", every)
    for path, rows, board in logs:
        slowest(path, rows, board)


if __name__ == "__main__":
    main()
