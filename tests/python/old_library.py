"""old_library.py - python.old_library: the package in a process whose gpuprio library is older
than it (OLD_LIBRARY, python_old_library: gpuprio_version says 0.0.1, gpuprio_runtime_path is
missing), loaded RTLD_GLOBAL as a program may load it. available() is False, and a call raises
NotLoadedError saying that the library is older than the package and which function it lacks,
with its version (before: "not loaded in this process (no gpuprio_* functions ...)", which was
false). Usage: python old_library.py PACKAGE_DIR OLD_LIBRARY; prints OK or FAIL lines.
"""

import ctypes
import os
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpuprio  # noqa: E402
from check import expect, finish  # noqa: E402

ctypes.CDLL(sys.argv[2], mode=ctypes.RTLD_GLOBAL)
expect(gpuprio.available() is False, "available() is False with a library too old")
try:
    gpuprio.version()
    expect(False, "version() raised nothing")
except gpuprio.NotLoadedError as e:
    text = str(e)
    expect("older than this Python package" in text, f"says it is older: {text}")
    expect("gpuprio_runtime_path" in text, f"names the missing function: {text}")
    expect("version 0.0.1" in text, f"says its version: {text}")
    expect("no gpuprio_* functions" not in text, f"does not say none is there: {text}")
sys.exit(finish())
