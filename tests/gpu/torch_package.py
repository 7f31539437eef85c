#!/usr/bin/env python3
"""torch_package.py - the Python package (python/) on a real PyTorch and GPU, for tests/gpu/run.sh.

  torch_package.py api              under the CUDA library: every call on torch.cuda.Stream
                                    objects, the current stream, raw handles and ints
  torch_package.py not-loaded       without it: available() is False, calls raise NotLoadedError
  torch_package.py serve STOP READY under it: a high and a low stream (priorities given through
                                    the package) running work until STOP exists; READY is
                                    written with the pid once both ran (for gpuprio metrics)

Prints "ok: ..." per check and "FAIL: ..." for each that failed; exit status 0 when all passed.
"""
import os
import sys
import time

import gpuprio

failures = 0


def check(what, cond, detail=""):
    global failures
    if cond:
        print(f"ok: {what}")
    else:
        failures += 1
        print(f"FAIL: {what} {detail}")


def raises(exc, fn, *args):
    try:
        fn(*args)
    except exc:
        return True
    except Exception as e:  # the wrong exception is a failure, named
        print(f"  (raised {type(e).__name__}: {e})")
        return False
    return False


def api():
    check("torch not imported by gpuprio", "torch" not in sys.modules)
    import torch

    check("available()", gpuprio.available())
    check("version() is the package's", gpuprio.version() == gpuprio.__version__,
          f"{gpuprio.version()} vs {gpuprio.__version__}")
    path = gpuprio.runtime_path()
    check("runtime_path() names the CUDA driver", path is not None and "libcuda" in path, str(path))

    s = torch.cuda.Stream()
    gpuprio.set_stream_priority(s, "high")
    check("torch.cuda.Stream: set high, get 10", gpuprio.get_stream_priority(s) == 10)
    gpuprio.set_stream_priority(s.cuda_stream, -5)
    check("the same stream by int handle", gpuprio.get_stream_priority(s) == -5)
    cur = torch.cuda.current_stream()
    gpuprio.set_stream_priority(cur, gpuprio.PRIORITY_LOW)
    check("current (default) stream", gpuprio.get_stream_priority(cur) == -10)
    check("a bad name raises ValueError", raises(ValueError, gpuprio.set_stream_priority, s, "urgent"))
    check("out of range raises ValueError", raises(ValueError, gpuprio.set_stream_priority, s, 5000))

    gpuprio.set_stream_priority(s, "high")
    a = torch.randn(1024, 1024, device="cuda")
    with torch.cuda.stream(s):
        for _ in range(20):
            a = a @ a
            a = a / a.norm()
    gpuprio.drain(s, 10000)
    st = gpuprio.stream_stats(s)
    check("stream_stats: the work was seen", st.submitted >= 20 and st.completed == st.submitted,
          str(st))
    check("stream_stats: priority", st.priority == 10, str(st))
    rows = [q for q in gpuprio.stats() if q.stream == s.cuda_stream]
    check("stats() lists the stream once", len(rows) == 1 and rows[0].priority == 10, str(rows))

    check("thread has no priority", gpuprio.get_thread_priority() is None)
    with gpuprio.thread_priority("critical") as p:
        check("thread_priority: set", p == 20 and gpuprio.get_thread_priority() == 20)
        with gpuprio.thread_priority("low"):
            check("thread_priority: nested", gpuprio.get_thread_priority() == -10)
        check("thread_priority: restored", gpuprio.get_thread_priority() == 20)
    check("thread_priority: cleared", gpuprio.get_thread_priority() is None)
    torch.cuda.synchronize()


def not_loaded():
    check("available() is False", not gpuprio.available())
    check("set_stream_priority raises NotLoadedError",
          raises(gpuprio.NotLoadedError, gpuprio.set_stream_priority, 0, "high"))
    check("stats raises NotLoadedError", raises(gpuprio.NotLoadedError, gpuprio.stats))
    try:
        gpuprio.stats()
    except gpuprio.NotLoadedError as e:
        check("the message says how to preload", "gpuprio run" in str(e), str(e))
    check("torch not imported", "torch" not in sys.modules)


def serve(stop, ready):
    import torch

    hi, lo = torch.cuda.Stream(), torch.cuda.Stream()
    gpuprio.set_stream_priority(hi, "high")
    gpuprio.set_stream_priority(lo, "low")
    x = torch.randn(2048, 2048, device="cuda")
    y = x.clone()
    announced = False
    deadline = time.time() + 120
    while not os.path.exists(stop) and time.time() < deadline:
        with torch.cuda.stream(lo):
            for _ in range(8):
                y = (y @ x) / 2048
        with torch.cuda.stream(hi):
            x = x * 0.5 + 1
        hi.synchronize()
        if not announced:
            lo.synchronize()
            with open(ready + ".tmp", "w") as f:
                f.write(f"{os.getpid()} {hi.cuda_stream:#x} {lo.cuda_stream:#x}\n")
            os.rename(ready + ".tmp", ready)
            announced = True
    torch.cuda.synchronize()
    check("served until stopped", os.path.exists(stop))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "api":
        api()
    elif what == "not-loaded":
        not_loaded()
    elif what == "serve" and len(sys.argv) == 4:
        serve(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(1 if failures else 0)
