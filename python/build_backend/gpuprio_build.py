"""gpuprio_build - the PEP 517 build backend of the gpuprio Python package, standard library only.

pip builds a package in an isolated environment into which it installs the backend named in
pyproject.toml; with setuptools that means a download, and `pip install ./python` must work
offline in a fresh virtual environment. So the backend lives in the tree (backend-path) and
requires nothing: the package is pure Python, and a wheel of one is a zip file with three
metadata files (PEP 427, PEP 491, core metadata 2.1), which this module writes directly.

Hooks: build_wheel, build_sdist, prepare_metadata_for_build_wheel, build_editable (PEP 660: a
.pth file that puts this directory on sys.path) and their get_requires_for_* (nothing). Archives
are reproducible: fixed timestamps (SOURCE_DATE_EPOCH when set), permissions and order.

The version is read from gpuprio/__init__.py (__version__) without importing it; the test
python.version checks it against the C library's.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Dict, List, Optional, Tuple

NAME = "gpuprio"
SUMMARY = "GPU stream priorities from Python, for programs running under gpuprio (LD_PRELOAD)"
LICENSE = "Apache-2.0"
REQUIRES_PYTHON = ">=3.8"
CLASSIFIERS = [
    "License :: OSI Approved :: Apache Software License",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: Python :: 3",
    "Typing :: Typed",
]
TAG = "py3-none-any"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIR = os.path.join(ROOT, NAME)


def _version() -> str:
    with open(os.path.join(PACKAGE_DIR, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError(f"no __version__ = \"...\" line in {PACKAGE_DIR}/__init__.py")
    return m.group(1)


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _metadata() -> bytes:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {_version()}",
        f"Summary: {SUMMARY}",
        f"License: {LICENSE}",
        f"Requires-Python: {REQUIRES_PYTHON}",
    ]
    lines += [f"Classifier: {c}" for c in CLASSIFIERS]
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return ("\n".join(lines) + "\n\n" + body).encode()


def _wheel_file() -> bytes:
    return (
        "Wheel-Version: 1.0\n"
        f"Generator: gpuprio_build {_version()}\n"
        "Root-Is-Purelib: true\n"
        f"Tag: {TAG}\n"
    ).encode()


def _package_files() -> List[Tuple[str, str]]:
    """(path in the archive, path on disk) of the package, sorted; no byte code."""
    files = []
    for dirpath, dirnames, filenames in os.walk(PACKAGE_DIR):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(dirpath, name)
            files.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    return sorted(files)


def _epoch() -> int:
    # Zip timestamps start in 1980.
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def _write_wheel(wheel_directory: str, contents: Dict[str, bytes]) -> str:
    """A wheel of contents (archive path -> bytes) plus the dist-info; returns its file name."""
    dist_info = _dist_info()
    contents = dict(contents)
    contents[f"{dist_info}/METADATA"] = _metadata()
    contents[f"{dist_info}/WHEEL"] = _wheel_file()
    contents[f"{dist_info}/top_level.txt"] = f"{NAME}\n".encode()
    record_path = f"{dist_info}/RECORD"
    record = io.StringIO()
    for path, data in contents.items():
        record.write(f"{path},{_record_hash(data)},{len(data)}\n")
    record.write(f"{record_path},,\n")
    contents[record_path] = record.getvalue().encode()

    filename = f"{NAME}-{_version()}-{TAG}.whl"
    date_time = time.gmtime(_epoch())[:6]
    os.makedirs(wheel_directory, exist_ok=True)
    tmp = os.path.join(wheel_directory, filename + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in contents.items():  # the dist-info last, RECORD at the very end
            info = zipfile.ZipInfo(path, date_time)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    os.replace(tmp, os.path.join(wheel_directory, filename))
    return filename


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 ----


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[dict] = None
) -> str:
    dist_info = _dist_info()
    target = os.path.join(metadata_directory, dist_info)
    os.makedirs(target, exist_ok=True)
    for name, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(target, name), "wb") as f:
            f.write(data)
    return dist_info


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[dict] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    return _write_wheel(wheel_directory, {arc: _read(disk) for arc, disk in _package_files()})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    base = f"{NAME}-{_version()}"
    members: List[Tuple[str, bytes]] = [(f"{base}/PKG-INFO", _metadata())]
    for name in ("pyproject.toml", "README.md", "build_backend/gpuprio_build.py"):
        if os.path.exists(os.path.join(ROOT, name)):
            members.append((f"{base}/{name}", _read(os.path.join(ROOT, name))))
    members += [(f"{base}/{arc}", _read(disk)) for arc, disk in _package_files()]
    filename = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    tmp = os.path.join(sdist_directory, filename + ".tmp")
    # gzip's own header carries a time too: fixed through GzipFile's mtime.
    with open(tmp, "wb") as raw, gzip.GzipFile(
        filename=filename, mode="wb", fileobj=raw, mtime=_epoch()
    ) as gz, tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, data in sorted(members):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = _epoch()
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, os.path.join(sdist_directory, filename))
    return filename


# ---- PEP 660: pip install -e ./python ----


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: Optional[dict] = None
) -> str:
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[dict] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    # A .pth line is a directory to add to sys.path: the source tree's, so edits take effect.
    pth = (ROOT + "\n").encode()
    return _write_wheel(wheel_directory, {f"__editable__.{NAME}.pth": pth})
