"""stop_check.py - two PyTorch processes under libgpuprio-cuda.so on one GPU, for run.sh step 6:
a stopped high-priority process holds a low-priority one back only until the low one's board
listener finds its queue stalled (GPUPRIO_WATCHDOG_MS), not for as long as it is stopped
(docs/board.md, "Stopped and hung processes"). Step 8 uses the high role, with gaps, as the
bursting neighbour of programs whose queues gates hold.

  stop_check.py high READY STOP [GAP_MS]
                                     bursts of twelve 4096x4096 matmuls, each burst synchronized,
                                     back to back (so the low one is held all the time), or
                                     GAP_MS apart, until the file STOP exists; touches READY
                                     after the first burst
  stop_check.py low READY STOP OUT  2048x2048 matmuls, each synchronized, from when it touches
                                     READY (after a warm-up) until the file STOP exists (60 s at
                                     most); writes the wall-clock time each one ended to OUT, one
                                     a line
  stop_check.py judge OUT STOPPED CONTINUED WATCHDOG_MS
                                     from OUT and the times (time.time()) the high process was
                                     stopped and continued: prints the first matmul to end after
                                     the stop and how many ended in the stop's second half; exit
                                     status 1 when the first came later than the watchdog plus
                                     400 ms, or none ran in the second half
"""
import os
import sys
import time


def high(ready, stop, gap_ms=0.0):
    import torch

    a = torch.randn(4096, 4096, device="cuda")
    while not os.path.exists(stop):
        for _ in range(12):
            a = a @ a
            a = a / a.norm()
        torch.cuda.synchronize()
        if not os.path.exists(ready):
            open(ready, "w").close()
        if gap_ms:
            time.sleep(gap_ms / 1e3)


def low(ready, stop, out):
    import torch

    b = torch.randn(2048, 2048, device="cuda")
    (b @ b).sum().item()
    open(ready, "w").close()
    ends = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not os.path.exists(stop):
        c = b @ b
        torch.cuda.synchronize()
        ends.append(time.time())
        b = c / c.norm()
    with open(out, "w") as f:
        f.write("".join(f"{t:.6f}\n" for t in ends))
    print(f"iterations {len(ends)}")


def judge(out, stopped, continued, watchdog_ms):
    ends = [float(line) for line in open(out)]
    after = [t for t in ends if t > stopped]
    first_ms = (after[0] - stopped) * 1e3 if after else float("inf")
    half = (stopped + continued) / 2
    second_half = sum(1 for t in ends if half <= t < continued)
    before = sum(1 for t in ends if stopped - 1 <= t < stopped)
    print(f"first low matmul after the stop: {first_ms:.1f} ms; in the stop's second half: "
          f"{second_half}; in the second before the stop: {before}")
    return 0 if first_ms < watchdog_ms + 400 and second_half > 0 else 1


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "high":
        high(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 0.0)
    elif role == "low":
        low(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(judge(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])))
