"""gpuprio from Python: GPU stream priorities for a program that runs under gpuprio.

gpuprio is a C library preloaded (LD_PRELOAD) into an unmodified program; this package is a thin
layer over its public C API (include/gpuprio.h in the gpuprio sources) through ctypes, and
docs/python.md is its manual.

Design:
- It never loads the library. The functions are looked up in the process's global scope
  (``ctypes.CDLL(None)``), where a preloaded library puts them; opening libgpuprio here would
  map a second copy with its own queues that no GPU call ever reaches. Without the library,
  ``available()`` is False and every other call raises NotLoadedError, one exception class whose
  message says how to preload it.
- It never imports torch. A ``torch.cuda.Stream`` (HIP and CUDA builds alike) is recognised by
  duck typing: its type's module is torch or under it, and it has the integer ``cuda_stream``.
- Priorities are checked here, with the C library's wording (GP_PRIORITY_ACCEPTED), so that a
  mistake is reported with the argument's name rather than as a bare -EINVAL. The C API's
  negative errno values become ValueError (-EINVAL), UnknownStreamError, a LookupError
  (-ENOENT), and TimeoutError (-ETIMEDOUT).
- Everything returned is a plain Python object: ints, strings, QueueStats named tuples.
- Standard library only, so ``pip install ./python`` works offline.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import operator
import threading
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Union

__version__ = "0.1.0"

__all__ = [
    "PRIORITY_MIN",
    "PRIORITY_IDLE",
    "PRIORITY_LOW",
    "PRIORITY_NORMAL",
    "PRIORITY_HIGH",
    "PRIORITY_CRITICAL",
    "PRIORITY_MAX",
    "PRIORITY_NAMES",
    "PRIORITY_ACCEPTED",
    "NotLoadedError",
    "UnknownStreamError",
    "QueueStats",
    "available",
    "version",
    "runtime_path",
    "parse_priority",
    "set_stream_priority",
    "get_stream_priority",
    "set_thread_priority",
    "get_thread_priority",
    "clear_thread_priority",
    "thread_priority",
    "stream_stats",
    "stats",
    "drain",
]

# The scale of include/gpuprio.h: integers, higher runs first.
PRIORITY_MIN = -1000
PRIORITY_IDLE = -20
PRIORITY_LOW = -10
PRIORITY_NORMAL = 0
PRIORITY_HIGH = 10
PRIORITY_CRITICAL = 20
PRIORITY_MAX = 1000

PRIORITY_NAMES: Dict[str, int] = {
    "idle": PRIORITY_IDLE,
    "low": PRIORITY_LOW,
    "normal": PRIORITY_NORMAL,
    "high": PRIORITY_HIGH,
    "critical": PRIORITY_CRITICAL,
}

# Word for word GP_PRIORITY_ACCEPTED (src/util/gp_priority.h), so that the library, the gpuprio
# command and Python all say the same.
PRIORITY_ACCEPTED = (
    "idle, low, normal, high, critical, or an integer from -1000 to 1000 (higher runs first)"
)

Priority = Union[str, int]

_PRELOAD_HINT = (
    "gpuprio is not loaded in this process (no gpuprio_* functions in its global scope). "
    "Start the program under gpuprio: `gpuprio run -- python3 app.py`, or preload the library "
    "yourself: `LD_PRELOAD=/path/to/libgpuprio-hip.so python3 app.py` (HIP/ROCm; "
    "libgpuprio-cuda.so for CUDA). gpuprio.available() tells without raising."
)


class NotLoadedError(RuntimeError):
    """The gpuprio library is not preloaded into this process (or lacks a function)."""

    def __init__(self, message: str = _PRELOAD_HINT) -> None:
        super().__init__(message)


class UnknownStreamError(LookupError):
    """gpuprio knows no such stream (-ENOENT): not a stream of the process's GPU runtime, already
    destroyed, or no GPU runtime is loaded yet."""


class QueueStats(NamedTuple):
    """What gpuprio knows about one stream: struct gpuprio_queue_stats, field for field."""

    stream: int  # the application's handle (0: the null stream)
    thread: int  # the thread of a per-thread queue (null or per-thread stream), or 0
    device: int  # the device the stream belongs to
    flags: int  # the stream's creation flags (e.g. non-blocking)
    stream_priority: int  # the priority given at creation (HIP: -1 high .. 1 low)
    priority: int  # gpuprio's priority (higher runs first)
    suspended: bool  # while the scheduler holds the queue back
    in_flight: int  # commands admitted and not yet reached on the device
    submitted: int  # commands the application put on the stream through gpuprio
    completed: int  # of those, reached on the device
    held_ns: int  # time threads spent held before submitting to it
    suspensions: int  # times the scheduler suspended it


class _CQueueStats(ctypes.Structure):
    """struct gpuprio_queue_stats; its layout is checked against the C compiler's by the test
    python.layout."""

    _fields_ = [
        ("stream", ctypes.c_uint64),
        ("thread", ctypes.c_uint64),
        ("device", ctypes.c_int),
        ("flags", ctypes.c_uint),
        ("stream_priority", ctypes.c_int),
        ("priority", ctypes.c_int),
        ("suspended", ctypes.c_int),
        ("in_flight", ctypes.c_uint),
        ("submitted", ctypes.c_uint64),
        ("completed", ctypes.c_uint64),
        ("held_ns", ctypes.c_uint64),
        ("suspensions", ctypes.c_uint64),
    ]

    def to_tuple(self) -> QueueStats:
        values = {name: getattr(self, name) for name, _ in self._fields_}
        values["suspended"] = bool(values["suspended"])
        return QueueStats(**values)


_STATS_P = ctypes.POINTER(_CQueueStats)
_INT_P = ctypes.POINTER(ctypes.c_int)

# Every function's prototype, as in include/gpuprio.h. gpuprio_thread_clear_priority came later
# than the others: a library without it still serves everything but clearing.
_PROTOTYPES = {
    "gpuprio_version": (ctypes.c_char_p, []),
    "gpuprio_stream_set_priority": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "gpuprio_stream_get_priority": (ctypes.c_int, [ctypes.c_void_p, _INT_P]),
    "gpuprio_thread_set_priority": (ctypes.c_int, [ctypes.c_int]),
    "gpuprio_thread_get_priority": (ctypes.c_int, [_INT_P]),
    "gpuprio_thread_clear_priority": (ctypes.c_int, []),
    "gpuprio_stream_stats": (ctypes.c_int, [ctypes.c_void_p, _STATS_P]),
    "gpuprio_stream_drain": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint]),
    "gpuprio_stats": (ctypes.c_int, [_STATS_P, ctypes.c_size_t]),
    "gpuprio_runtime_path": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t]),
}
_OPTIONAL = frozenset({"gpuprio_thread_clear_priority"})


class _TooOld(Exception):
    """The library is loaded, but lacks a function this package needs."""


class _Library:
    """The preloaded library's functions, found in the process's global scope."""

    def __init__(self, scope: ctypes.CDLL) -> None:
        self.functions: Dict[str, Any] = {}
        missing = []
        for name, (restype, argtypes) in _PROTOTYPES.items():
            try:
                fn = getattr(scope, name)
            except AttributeError:
                if name not in _OPTIONAL:
                    missing.append(name)
                continue
            fn.restype = restype
            fn.argtypes = argtypes
            self.functions[name] = fn
        if missing and "gpuprio_version" not in self.functions:
            raise AttributeError(missing[0])  # no gpuprio at all
        if missing:
            version = self.functions["gpuprio_version"]()
            raise _TooOld(
                f"the loaded gpuprio library (version "
                f"{version.decode(errors='replace') if version else 'unknown'}) has no "
                f"{', '.join(missing)}: it is older than this Python package ({__version__}); "
                f"use the library of the same version"
            )

    def __getattr__(self, name: str) -> Any:
        try:
            return self.functions["gpuprio_" + name]
        except KeyError:
            raise NotLoadedError(
                f"the loaded gpuprio library has no gpuprio_{name}: it is older than this "
                f"Python package ({__version__}); use the library of the same version"
            ) from None


_lock = threading.Lock()
_library: Optional[_Library] = None
_too_old: Optional[str] = None  # why the library found last could not serve


def _find() -> Optional[_Library]:
    """The library when it is in the process. Only a success is kept: nothing can preload it
    later, but a program may still dlopen it RTLD_GLOBAL."""
    global _library, _too_old
    if _library is None:
        with _lock:
            if _library is None:
                try:
                    _library = _Library(ctypes.CDLL(None))
                except _TooOld as e:
                    _too_old = str(e)
                    return None
                except (AttributeError, OSError):
                    return None
    return _library


def _lib() -> _Library:
    lib = _find()
    if lib is None:
        raise NotLoadedError(_too_old) if _too_old else NotLoadedError()
    return lib


def available() -> bool:
    """Whether the gpuprio library is loaded in this process (never raises)."""
    return _find() is not None


# ---- arguments ----


def parse_priority(priority: Priority, name: str = "priority") -> int:
    """The integer for a priority: a name (idle, low, normal, high, critical; any case, as a str)
    or an integer from PRIORITY_MIN to PRIORITY_MAX, also written as a str ("-5"), as the
    library's GPUPRIO_PRIORITY accepts. ValueError, or TypeError for other types; `name` is the
    argument the message names. Needs no library."""
    if isinstance(priority, str):
        text = priority.strip(" \t")
        value = PRIORITY_NAMES.get(text.lower())
        if value is not None:
            return value
        # The C parser's integers: an optional sign and decimal digits, at most 15 characters.
        digits = text[1:] if text[:1] in ("+", "-") else text
        if len(text) <= 15 and digits.isascii() and digits.isdigit():
            value = int(text)
            if PRIORITY_MIN <= value <= PRIORITY_MAX:
                return value
        raise ValueError(f"{name} {priority!r} is not a priority; accepted: {PRIORITY_ACCEPTED}")
    if isinstance(priority, bool):
        raise TypeError(f"{name} must be {PRIORITY_ACCEPTED}, not a bool")
    try:
        value = operator.index(priority)
    except TypeError:
        raise TypeError(
            f"{name} must be {PRIORITY_ACCEPTED}, not {type(priority).__name__}"
        ) from None
    if not PRIORITY_MIN <= value <= PRIORITY_MAX:
        raise ValueError(f"{name} {value} is out of range; accepted: {PRIORITY_ACCEPTED}")
    return value


_STREAM_ACCEPTED = (
    "a torch.cuda.Stream, a raw stream handle (an int such as its .cuda_stream, or a "
    "ctypes.c_void_p), or 0 for the null stream"
)


def _is_torch(obj: Any) -> bool:
    """Whether obj is a torch.cuda.Stream or alike, told without importing torch: its type is
    from torch or a module under it (not torchvision's), and it has .cuda_stream."""
    module = getattr(type(obj), "__module__", None) or ""
    return module.split(".", 1)[0] == "torch" and hasattr(obj, "cuda_stream")


def _handle(stream: Any, name: str = "stream") -> int:
    """The runtime's handle of stream, as an int; never imports torch."""
    if isinstance(stream, bool):
        raise TypeError(f"{name} must be {_STREAM_ACCEPTED}, not a bool")
    if isinstance(stream, int):
        value = stream
    elif isinstance(stream, ctypes.c_void_p):
        value = stream.value or 0
    elif isinstance(stream, ctypes._Pointer):  # a typed pointer (a stream declared as such)
        value = ctypes.cast(stream, ctypes.c_void_p).value or 0
    elif _is_torch(stream):
        # torch.cuda.Stream and ExternalStream, on HIP and CUDA builds: .cuda_stream is the
        # hipStream_t/CUstream as an int.
        value = operator.index(stream.cuda_stream)
    else:
        try:
            value = operator.index(stream)  # numpy integers and the like
        except TypeError:
            raise TypeError(
                f"{name} must be {_STREAM_ACCEPTED}, not {type(stream).__name__}"
            ) from None
    bits = 8 * ctypes.sizeof(ctypes.c_void_p)
    if value < 0:
        raise ValueError(
            f"{name} {value:#x} is not a stream handle: a pointer is never negative; "
            f"accepted: {_STREAM_ACCEPTED}"
        )
    if value >= 1 << bits:
        # Told apart from a negative value: 2**64 is no more negative than a pointer is.
        raise ValueError(
            f"{name} {value:#x} is not a stream handle: it is too large for a pointer (at most "
            f"{(1 << bits) - 1:#x}, {bits} bits); accepted: {_STREAM_ACCEPTED}"
        )
    return value


def _check(rc: int, what: str, stream: Optional[int] = None) -> None:
    """Raises the exception for the C API's return value rc (0 or a negative errno)."""
    if rc >= 0:
        return
    if rc == -errno.EINVAL:
        raise ValueError(f"{what}: invalid argument (-EINVAL); priorities: {PRIORITY_ACCEPTED}")
    if rc == -errno.ENOENT:
        if stream is None:
            raise UnknownStreamError(f"{what}: no GPU runtime in the process (-ENOENT)")
        raise UnknownStreamError(
            f"{what}: gpuprio knows no stream {stream:#x} (-ENOENT): it must be a live stream of "
            "this process's GPU runtime, or 0; this is also the answer while no GPU runtime is "
            "loaded yet"
        )
    if rc == -errno.ETIMEDOUT:
        raise TimeoutError(errno.ETIMEDOUT, f"{what}: timed out")
    raise OSError(-rc, f"{what}: {errno.errorcode.get(-rc, 'error')} ({rc})")


# ---- the API ----


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _lib().version().decode()


def runtime_path() -> Optional[str]:
    """The path of the GPU runtime gpuprio forwards to (e.g. a libamdhip64.so), or None when
    there is none (no runtime found, or none loaded yet)."""
    lib = _lib()
    size = 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        rc = lib.runtime_path(buf, size)
        if rc == -errno.ERANGE:
            size *= 4
            continue
        if rc == -errno.ENOENT:
            return None
        _check(rc, "gpuprio.runtime_path()")
        return buf.value.decode(errors="surrogateescape")


def set_stream_priority(stream: Any, priority: Priority) -> None:
    """Gives the stream its own priority, which nothing else overrides: a torch.cuda.Stream,
    its .cuda_stream, a ctypes.c_void_p, or 0 (the calling thread's null stream)."""
    handle = _handle(stream)
    value = parse_priority(priority)
    _check(
        _lib().stream_set_priority(handle, value),
        f"gpuprio.set_stream_priority({handle:#x}, {value})",
        handle,
    )


def get_stream_priority(stream: Any) -> int:
    """The stream's priority in gpuprio (higher runs first)."""
    handle = _handle(stream)
    out = ctypes.c_int()
    _check(
        _lib().stream_get_priority(handle, ctypes.byref(out)),
        f"gpuprio.get_stream_priority({handle:#x})",
        handle,
    )
    return out.value


def set_thread_priority(priority: Priority) -> None:
    """Sets the calling thread's priority: its null and per-thread streams, the streams it
    created without a priority of their own, and those it creates from now on. (PyTorch's
    torch.cuda.Stream() comes from a pool made by whichever thread asked first: give those
    set_stream_priority.)"""
    value = parse_priority(priority)
    _check(_lib().thread_set_priority(value), f"gpuprio.set_thread_priority({value})")


def get_thread_priority() -> Optional[int]:
    """The calling thread's own priority, or None when it has none."""
    out = ctypes.c_int()
    rc = _lib().thread_get_priority(ctypes.byref(out))
    if rc == -errno.ENOENT:
        return None
    _check(rc, "gpuprio.get_thread_priority()")
    return out.value


def clear_thread_priority() -> None:
    """Forgets the calling thread's priority, as if it had never set one (C:
    gpuprio_thread_clear_priority). No error when it has none."""
    _check(_lib().thread_clear_priority(), "gpuprio.clear_thread_priority()")


@contextlib.contextmanager
def thread_priority(priority: Priority) -> Iterator[int]:
    """``with gpuprio.thread_priority("high"):`` runs the block at that thread priority and then
    restores the thread's earlier one, or clears it when it had none; nests, and works as a
    decorator. Yields the integer priority."""
    value = parse_priority(priority)
    lib = _lib()
    before = get_thread_priority()
    if before is None:
        _ = lib.thread_clear_priority  # a library that cannot restore "none" fails here, first
    set_thread_priority(value)
    try:
        yield value
    finally:
        if before is None:
            clear_thread_priority()
        else:
            set_thread_priority(before)


def stream_stats(stream: Any) -> QueueStats:
    """What gpuprio knows about the stream (its queue)."""
    handle = _handle(stream)
    out = _CQueueStats()
    _check(
        _lib().stream_stats(handle, ctypes.byref(out)),
        f"gpuprio.stream_stats({handle:#x})",
        handle,
    )
    return out.to_tuple()


def stats() -> List[QueueStats]:
    """Every queue of the process (one per stream, and per thread and device for the null and
    per-thread streams), as a list of QueueStats."""
    lib = _lib()
    while True:
        count = lib.stats(None, 0)
        _check(count, "gpuprio.stats()")
        cap = count + 16  # room for queues created meanwhile
        array = (_CQueueStats * cap)()
        count = lib.stats(array, cap)
        _check(count, "gpuprio.stats()")
        if count <= cap:
            return [array[i].to_tuple() for i in range(count)]


def drain(stream: Any, timeout_ms: int) -> None:
    """Waits until every command gpuprio let onto the stream has finished on the device, at most
    timeout_ms; TimeoutError if it did not. Afterwards the stream's stats are settled."""
    handle = _handle(stream)
    if isinstance(timeout_ms, bool):
        raise TypeError("timeout_ms must be an int of milliseconds, not a bool")
    try:
        timeout = operator.index(timeout_ms)
    except TypeError:
        raise TypeError(
            f"timeout_ms must be an int of milliseconds, not {type(timeout_ms).__name__}"
        ) from None
    if not 0 <= timeout <= 0xFFFFFFFF:
        raise ValueError(f"timeout_ms {timeout} is out of range: 0 to {0xFFFFFFFF} milliseconds")
    _check(
        _lib().stream_drain(handle, timeout),
        f"gpuprio.drain({handle:#x}, {timeout})",
        handle,
    )
