"""layout_test.py - python.layout: the package's ctypes mirror of struct gpuprio_queue_stats is
the C compiler's layout of it, field for field, and QueueStats has the same fields in order.

gpuprio_stats writes an array of these structs into memory the package allocates, so a mirror
that is a few bytes short corrupts memory rather than failing. The C side is printed by the
helper `python_layout` (layout.c), compiled against include/gpuprio.h in the same build; the
sizes must agree too, which catches a field added to the header but not to the helper.

Usage: python3 -I -B layout_test.py PACKAGE_DIR PYTHON_LAYOUT_BINARY
"""

import ctypes
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
import gpuprio  # noqa: E402

out = subprocess.run([sys.argv[2]], stdout=subprocess.PIPE, text=True, check=True).stdout
lines = [line.split() for line in out.splitlines()]
c_size = int(lines[0][1])
c_fields = [(name, int(offset), int(size)) for name, offset, size in lines[1:]]

mirror = gpuprio._CQueueStats
py_fields = [(name, getattr(mirror, name).offset, getattr(mirror, name).size)
             for name, _ in mirror._fields_]
failures = 0
if ctypes.sizeof(mirror) != c_size:
    print(f"FAIL sizeof: ctypes {ctypes.sizeof(mirror)}, C {c_size}")
    failures += 1
if py_fields != c_fields:
    print(f"FAIL fields:\n  ctypes {py_fields}\n  C      {c_fields}")
    failures += 1
if list(gpuprio.QueueStats._fields) != [name for name, _, _ in c_fields]:
    print(f"FAIL QueueStats fields {gpuprio.QueueStats._fields}")
    failures += 1
print(f"struct gpuprio_queue_stats: {c_size} bytes, {len(c_fields)} fields")
print("FAILED" if failures else "OK")
sys.exit(1 if failures else 0)
