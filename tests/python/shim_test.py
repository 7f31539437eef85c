"""shim_test.py - python.shim: the gpuprio package in a Python process that runs under the shim
(libgpuprio-hip.so preloaded) on the simulated HIP device.

The process is /usr/bin/python3 itself, as an application would be: CMake preloads the shim
(after the sanitizer's runtime in sanitizer builds, as the interpreter is not instrumented) and
this script opens the simulator (a libamdhip64) with ctypes and creates streams through it; the
shim sees those calls, as it sees PyTorch's. The package comes from the source tree (the
installed form is python.install's), and is checked against what gpuprio says through its C
API: priorities set and read by an int handle, a ctypes.c_void_p and an object that looks like a
torch.cuda.Stream (torch itself is never imported, and must not be); names in any case and
integers; bad arguments; unknown and destroyed streams; the thread's priority as a context
manager that sets, nests, restores the earlier priority or none, and stays in its thread;
stats() and stream_stats() with the priorities set and work counted; drain(); runtime_path();
version().

Usage: python3 -I -B shim_test.py PACKAGE_DIR HIPSIM_LIBRARY
"""

import ctypes
import errno
import os
import sys
import threading

sys.path.insert(0, sys.argv[1])
import gpuprio  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import expect, finish  # noqa: E402


def raises(exc, call, what, contains=None):
    try:
        call()
    except exc as e:
        if contains is not None:
            expect(contains in str(e), f"{what}: {type(e).__name__} message has {contains!r}: {e}")
        return
    except Exception as e:
        expect(False, f"{what}: raised {type(e).__name__} ({e}), expected {exc.__name__}")
        return
    expect(False, f"{what}: did not raise {exc.__name__}")


if not gpuprio.available():
    print("FAIL available() under the shim: is LD_PRELOAD set?")
    sys.exit(1)

# The simulated runtime, opened the way a framework opens its bundled copy; the shim answers
# ctypes' lookups in it with its wrappers (as it does Triton's dlsym).
hip = ctypes.CDLL(sys.argv[2])
for name, args in {
    "hipStreamCreate": [ctypes.POINTER(ctypes.c_void_p)],
    "hipStreamCreateWithPriority": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_int],
    "hipStreamDestroy": [ctypes.c_void_p],
    "hipStreamSynchronize": [ctypes.c_void_p],
    "hipMalloc": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t],
    "hipFree": [ctypes.c_void_p],
    "hipMemsetAsync": [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p],
}.items():
    fn = getattr(hip, name)
    fn.argtypes, fn.restype = args, ctypes.c_int


def must(rc, what):
    if rc != 0:
        print(f"FAIL {what} -> {rc}")
        sys.exit(1)


def create(priority=None):
    s = ctypes.c_void_p()
    if priority is None:
        must(hip.hipStreamCreate(ctypes.byref(s)), "hipStreamCreate")
    else:
        must(hip.hipStreamCreateWithPriority(ctypes.byref(s), 0, priority),
             "hipStreamCreateWithPriority")
    return s


class Stream:
    """Looks like a torch.cuda.Stream to the package: module torch.*, an int .cuda_stream."""

    def __init__(self, handle):
        self.cuda_stream = handle


Stream.__module__ = "torch.cuda.streams"


class NotTorch:
    cuda_stream = 0


class TorchVision:
    """From a module whose name only starts with "torch": not taken for a stream."""

    cuda_stream = 0


TorchVision.__module__ = "torchvision.io"


# ---- what the library is ----
expect(gpuprio.version() == gpuprio.__version__,
       f"the library's version {gpuprio.version()} is the package's {gpuprio.__version__}")
a, b = create(), create(-1)  # b: HIP's high priority at creation
path = gpuprio.runtime_path()
expect(path is not None and os.path.realpath(path) == os.path.realpath(sys.argv[2]),
       f"runtime_path() {path} is the simulator {sys.argv[2]}")

# ---- stream priorities: every form of handle, names and integers ----
ha = a.value
expect(gpuprio.get_stream_priority(ha) == gpuprio.PRIORITY_NORMAL, "a new stream is normal")
expect(gpuprio.get_stream_priority(b) == gpuprio.PRIORITY_HIGH, "created with -1: high")
gpuprio.set_stream_priority(ha, "HIGH")
expect(gpuprio.get_stream_priority(a) == 10, "set by int, name in capitals; read by c_void_p")
gpuprio.set_stream_priority(a, " low\t")
expect(gpuprio.get_stream_priority(ha) == -10, "set by c_void_p, name with blanks")
gpuprio.set_stream_priority(Stream(ha), "Critical")
expect(gpuprio.get_stream_priority(Stream(ha)) == 20, "set and read through a torch-like object")
for value in (gpuprio.PRIORITY_MIN, gpuprio.PRIORITY_MAX, -7, 0, "+5", "-1000"):
    gpuprio.set_stream_priority(a, value)
    expect(gpuprio.get_stream_priority(a) == int(value), f"priority {value!r}")
for name, value in gpuprio.PRIORITY_NAMES.items():
    gpuprio.set_stream_priority(b, name.upper())
    expect(gpuprio.get_stream_priority(b) == value, f"priority {name.upper()}")
gpuprio.set_stream_priority(b, gpuprio.PRIORITY_IDLE)

# ---- bad arguments ----
for bad in ("urgent", "", "1001", "10 0", 1001, -1001):
    raises(ValueError, lambda: gpuprio.set_stream_priority(a, bad), f"priority {bad!r}",
           gpuprio.PRIORITY_ACCEPTED)
for bad in (1.5, True, None, [10]):
    raises(TypeError, lambda: gpuprio.set_stream_priority(a, bad), f"priority {bad!r}",
           gpuprio.PRIORITY_ACCEPTED)
raises(ValueError, lambda: gpuprio.set_thread_priority("max"), "thread priority 'max'")
raises(ValueError, lambda: gpuprio.thread_priority(2000).__enter__(), "thread_priority(2000)")
for bad in ("0x10", 1.0, NotTorch(), TorchVision(), object()):
    raises(TypeError, lambda: gpuprio.get_stream_priority(bad), f"stream {bad!r}", "torch")
raises(ValueError, lambda: gpuprio.get_stream_priority(-1), "stream -1", "never negative")
# Too large is not negative: the message says which, and what a pointer can be.
_ptr_max = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1
for big in (_ptr_max + 1, 2**64, 2**100):
    raises(ValueError, lambda: gpuprio.set_stream_priority(big, "high"), f"stream {big:#x}",
           f"too large for a pointer (at most {_ptr_max:#x}")
    try:
        gpuprio.set_stream_priority(big, "high")
    except ValueError as e:
        expect("negative" not in str(e), f"stream {big:#x}: not called negative: {e}")
raises(ValueError, lambda: gpuprio.drain(a, -1), "drain timeout -1")
raises(TypeError, lambda: gpuprio.drain(a, 0.5), "drain timeout 0.5")
expect(gpuprio.get_stream_priority(a) == -1000, "a refused call changes nothing")

# ---- unknown streams ----
raises(gpuprio.UnknownStreamError, lambda: gpuprio.set_stream_priority(0x1234, 1),
       "an unknown stream", "0x1234")
raises(LookupError, lambda: gpuprio.get_stream_priority(ctypes.c_void_p(0x1234)),
       "an unknown stream is a LookupError")
raises(LookupError, lambda: gpuprio.stream_stats(0x1234), "stream_stats of an unknown stream")
raises(LookupError, lambda: gpuprio.drain(0x1234, 10), "drain of an unknown stream")
gone = create()
must(hip.hipStreamDestroy(gone), "hipStreamDestroy")
raises(LookupError, lambda: gpuprio.get_stream_priority(gone), "a destroyed stream")

# ---- the C API's other errors, as the package maps them ----
raises(ValueError, lambda: gpuprio._check(-errno.EINVAL, "x"), "-EINVAL")
raises(LookupError, lambda: gpuprio._check(-errno.ENOENT, "x", 5), "-ENOENT")
raises(TimeoutError, lambda: gpuprio._check(-errno.ETIMEDOUT, "x"), "-ETIMEDOUT")

# ---- the thread's priority ----
expect(gpuprio.get_thread_priority() is None, "no thread priority at first")
expect(gpuprio.get_stream_priority(0) == 0, "the null stream is normal")
with gpuprio.thread_priority("high") as p:
    expect(p == 10, "the context manager yields the priority")
    expect(gpuprio.get_thread_priority() == 10, "thread priority set")
    expect(gpuprio.get_stream_priority(0) == 10, "this thread's null stream follows it")
    inside = create()
    expect(gpuprio.get_stream_priority(inside) == 10, "a stream created inside takes it")
    expect(gpuprio.get_stream_priority(a) == -1000, "a stream's own priority stays")
    with gpuprio.thread_priority(-3):
        expect(gpuprio.get_thread_priority() == -3, "nested")
        expect(gpuprio.get_stream_priority(inside) == -3, "nested: its stream follows")
    expect(gpuprio.get_thread_priority() == 10, "the outer priority is back")
    expect(gpuprio.get_stream_priority(inside) == 10, "and its stream's")

    seen = {}

    def other_thread():
        seen["before"] = gpuprio.get_thread_priority()
        with gpuprio.thread_priority("idle"):
            seen["null"] = gpuprio.get_stream_priority(0)
        seen["after"] = gpuprio.get_thread_priority()

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    expect(seen == {"before": None, "null": -20, "after": None},
           f"another thread has its own priority: {seen}")
    expect(gpuprio.get_thread_priority() == 10, "and leaves this one's alone")
    expect(gpuprio.get_stream_priority(0) == 10, "and this one's null stream")
expect(gpuprio.get_thread_priority() is None, "back to none")
expect(gpuprio.get_stream_priority(0) == 0, "the null stream is normal again")
expect(gpuprio.get_stream_priority(inside) == 0, "the stream created inside too")

try:
    with gpuprio.thread_priority("critical"):
        raise KeyError("in the block")
except KeyError:
    pass
expect(gpuprio.get_thread_priority() is None, "restored when the block raises")

gpuprio.set_thread_priority("low")
with gpuprio.thread_priority("high"):
    expect(gpuprio.get_thread_priority() == 10, "over an earlier priority")
expect(gpuprio.get_thread_priority() == -10, "the earlier priority is back, not none")
gpuprio.clear_thread_priority()
gpuprio.clear_thread_priority()  # none to clear: no error
expect(gpuprio.get_thread_priority() is None, "clear_thread_priority()")


@gpuprio.thread_priority("normal")
def decorated():
    return gpuprio.get_thread_priority()


expect(decorated() == 0 and decorated() == 0, "as a decorator, each call")
expect(gpuprio.get_thread_priority() is None, "the decorator restores")

# ---- work, drain and statistics ----
mem = ctypes.c_void_p()
must(hip.hipMalloc(ctypes.byref(mem), 1 << 16), "hipMalloc")
for _ in range(3):
    must(hip.hipMemsetAsync(mem, 0, 1 << 16, b), "hipMemsetAsync")
expect(gpuprio.drain(b, 5000) is None, "drain() of a stream with work")
must(hip.hipStreamSynchronize(b), "hipStreamSynchronize")
st = gpuprio.stream_stats(Stream(b.value))
expect(isinstance(st, gpuprio.QueueStats), "stream_stats() is a QueueStats")
expect(st.stream == b.value and st.thread == 0, f"stream_stats names the stream: {st}")
expect(st.priority == -20 and st.stream_priority == -1, f"its priorities: {st}")
expect(st.submitted == 3 and st.completed <= st.submitted and st.in_flight == 0,
       f"its work: {st}")
expect(st.suspended is False, "suspended is a bool")

all_queues = gpuprio.stats()
expect(isinstance(all_queues, list) and all(isinstance(q, gpuprio.QueueStats)
                                            for q in all_queues), "stats() is a list of QueueStats")
expect(all(type(v) in (int, bool) for q in all_queues for v in q), "plain ints")
created = {q.stream: q for q in all_queues if q.thread == 0}
expect(created.get(ha) is not None and created[ha].priority == -1000, "stats() has a")
expect(created.get(b.value) is not None and created[b.value].priority == -20, "stats() has b")
expect(created.get(inside.value) is not None and created[inside.value].priority == 0,
       "stats() has the stream created inside the block")
expect(created.get(b.value) == st._replace(held_ns=created[b.value].held_ns),
       "stats() and stream_stats() agree")
expect(any(q.stream == 0 and q.thread != 0 for q in all_queues), "the null stream's queue")
# The destroyed stream's handle may have been reused by a later one: compare whole sets.
expect(set(created) == {ha, b.value, inside.value}, "the created streams, none destroyed")

must(hip.hipFree(mem), "hipFree")
for s in (a, b, inside):
    must(hip.hipStreamDestroy(s), "hipStreamDestroy")
expect("torch" not in sys.modules, "torch was never imported")
print(f"{len(all_queues)} queues seen")
sys.exit(finish())
