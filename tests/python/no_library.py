"""no_library.py - the gpuprio package in a process without the library (python.install runs it
with the package installed into a fresh virtual environment).

Without the library preloaded, importing works, available() is False, and every call that needs
the library raises the one exception class, NotLoadedError, whose message says how to preload
it; what needs no library (parsing priorities, checking arguments) still works. Nothing imports
torch. Usage: python no_library.py [EXPECTED_PACKAGE_DIR_PREFIX]; prints OK or FAIL lines.
"""

import ctypes
import os
import sys

import gpuprio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import expect, finish  # noqa: E402


if len(sys.argv) > 1:
    where = os.path.realpath(gpuprio.__file__)
    expect(where.startswith(os.path.realpath(sys.argv[1])), f"gpuprio imported from {where}")

expect(gpuprio.available() is False, "available() is False without the library")


class Stream:
    """What the package must take for a torch.cuda.Stream, without torch."""

    cuda_stream = 0x5000


Stream.__module__ = "torch.cuda.streams"

calls = {
    "version()": lambda: gpuprio.version(),
    "runtime_path()": lambda: gpuprio.runtime_path(),
    "set_stream_priority(int)": lambda: gpuprio.set_stream_priority(0x1234, "high"),
    "set_stream_priority(c_void_p)": lambda: gpuprio.set_stream_priority(
        ctypes.c_void_p(0x1234), 5
    ),
    "set_stream_priority(torch)": lambda: gpuprio.set_stream_priority(Stream(), "low"),
    "get_stream_priority()": lambda: gpuprio.get_stream_priority(0),
    "set_thread_priority()": lambda: gpuprio.set_thread_priority("critical"),
    "get_thread_priority()": lambda: gpuprio.get_thread_priority(),
    "clear_thread_priority()": lambda: gpuprio.clear_thread_priority(),
    "stream_stats()": lambda: gpuprio.stream_stats(0),
    "stats()": lambda: gpuprio.stats(),
    "drain()": lambda: gpuprio.drain(0, 10),
}


def enter_thread_priority():
    with gpuprio.thread_priority("high"):
        pass


calls["thread_priority()"] = enter_thread_priority

for name, call in calls.items():
    try:
        call()
    except gpuprio.NotLoadedError as e:
        message = str(e)
        expect("gpuprio run -- python3" in message, f"{name}: message names `gpuprio run`")
        expect("LD_PRELOAD=" in message, f"{name}: message names LD_PRELOAD")
        expect("libgpuprio-hip.so" in message, f"{name}: message names libgpuprio-hip.so")
        expect("libgpuprio-cuda.so" in message, f"{name}: message names libgpuprio-cuda.so")
        expect(isinstance(e, RuntimeError), f"{name}: NotLoadedError is a RuntimeError")
    except Exception as e:  # anything else is a failure too
        expect(False, f"{name} raised {type(e).__name__}: {e}")
    else:
        expect(False, f"{name} returned without the library")

# Without a library: priorities parse, and bad arguments are reported before the library is
# missed (a message about the argument is the more useful of the two).
expect(gpuprio.parse_priority("HIGH") == gpuprio.PRIORITY_HIGH, "parse_priority('HIGH')")
try:
    gpuprio.set_stream_priority(0, "urgent")
    expect(False, "a bad name is refused")
except ValueError as e:
    expect(gpuprio.PRIORITY_ACCEPTED in str(e), "the ValueError says what is accepted")

expect("torch" not in sys.modules, "torch was not imported")
sys.exit(finish())
