"""backend_test.py - python.backend: the in-tree build backend (python/build_backend) writes a
correct wheel and sdist, and the package's version is the project's.

pip only checks a wheel's RECORD loosely, so a wrong hash, a missing entry or a stray file would
go unnoticed by python.install; here every hook is called as pip calls it, and the archives are
read back: RECORD lists every file with its sha256 (urlsafe base64, unpadded) and size, and
itself without either; WHEEL and METADATA say what the package is; there is no byte code; two
builds are byte-identical (reproducible); the sdist has what a rebuild needs; the editable wheel
points at the source tree. The version is compared with CMake's PROJECT_VERSION (the C
library's gpuprio_version() is compared with it under the shim, in python.shim).

Usage: python3 -I -B backend_test.py PACKAGE_DIR PROJECT_VERSION
"""

import base64
import hashlib
import os
import sys
import tarfile
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import expect, finish  # noqa: E402


def main():
    package, project_version = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(package, "build_backend"))
    sys.path.insert(0, package)
    import gpuprio
    import gpuprio_build as backend

    expect(gpuprio.__version__ == project_version,
           f"gpuprio.__version__ {gpuprio.__version__} is the project's {project_version}")
    for hook in ("get_requires_for_build_wheel", "get_requires_for_build_sdist",
                 "get_requires_for_build_editable"):
        expect(getattr(backend, hook)() == [], f"{hook}() requires nothing")

    dist_info = f"gpuprio-{project_version}.dist-info"
    with tempfile.TemporaryDirectory() as tmp:
        name = backend.prepare_metadata_for_build_wheel(os.path.join(tmp, "meta"))
        expect(name == dist_info, f"prepare_metadata_for_build_wheel -> {name}")

        wheels = [backend.build_wheel(os.path.join(tmp, d)) for d in ("w1", "w2")]
        expect(wheels[0] == f"gpuprio-{project_version}-py3-none-any.whl", f"wheel {wheels[0]}")
        data = [open(os.path.join(tmp, d, w), "rb").read() for d, w in zip(("w1", "w2"), wheels)]
        expect(data[0] == data[1], "two builds of the wheel are byte-identical")
        expect(not [f for f in os.listdir(os.path.join(tmp, "w1")) if f.endswith(".tmp")],
               "no temporary file left")

        with zipfile.ZipFile(os.path.join(tmp, "w1", wheels[0])) as zf:
            names = zf.namelist()
            expect(sorted(n for n in names if not n.startswith(dist_info))
                   == ["gpuprio/__init__.py", "gpuprio/py.typed"],
                   f"the wheel holds the package and nothing else: {names}")
            expect(not [n for n in names if n.endswith(".pyc") or "__pycache__" in n],
                   "no byte code in the wheel")
            expect(names[-1] == f"{dist_info}/RECORD", "RECORD comes last")
            record = zf.read(f"{dist_info}/RECORD").decode().splitlines()
            listed = {}
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                listed[path] = (digest, size)
            expect(set(listed) == set(names), "RECORD lists exactly the files of the wheel")
            for path in names:
                digest, size = listed.get(path, ("", ""))
                if path == f"{dist_info}/RECORD":
                    expect(digest == "" and size == "", "RECORD's own entry has no hash")
                    continue
                body = zf.read(path)
                want = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=")
                expect(digest == "sha256=" + want.decode(), f"RECORD's hash of {path}")
                expect(size == str(len(body)), f"RECORD's size of {path}")
            wheel = zf.read(f"{dist_info}/WHEEL").decode()
            for line in ("Wheel-Version: 1.0", "Root-Is-Purelib: true", "Tag: py3-none-any"):
                expect(line in wheel.splitlines(), f"WHEEL has {line}")
            metadata = zf.read(f"{dist_info}/METADATA").decode()
            head = metadata.split("\n\n", 1)[0].splitlines()
            for line in ("Metadata-Version: 2.1", "Name: gpuprio",
                         f"Version: {project_version}", "Requires-Python: >=3.8"):
                expect(line in head, f"METADATA has {line}")
            expect(zf.read("gpuprio/__init__.py")
                   == open(os.path.join(package, "gpuprio", "__init__.py"), "rb").read(),
                   "the wheel's gpuprio/__init__.py is the source's")
            for info in zf.infolist():
                expect(info.external_attr >> 16 == 0o644, f"{info.filename} is rw-r--r--")

        sdist = backend.build_sdist(os.path.join(tmp, "s"))
        expect(sdist == f"gpuprio-{project_version}.tar.gz", f"sdist {sdist}")
        with tarfile.open(os.path.join(tmp, "s", sdist)) as tar:
            members = sorted(tar.getnames())
        base = f"gpuprio-{project_version}"
        for need in ("PKG-INFO", "pyproject.toml", "build_backend/gpuprio_build.py",
                     "gpuprio/__init__.py", "gpuprio/py.typed"):
            expect(f"{base}/{need}" in members, f"the sdist has {need}: {members}")

        editable = backend.build_editable(os.path.join(tmp, "e"))
        with zipfile.ZipFile(os.path.join(tmp, "e", editable)) as zf:
            pth = zf.read("__editable__.gpuprio.pth").decode().strip()
            expect(os.path.realpath(pth) == os.path.realpath(package),
                   f"the editable wheel points at the source tree: {pth}")
            expect("gpuprio/__init__.py" not in zf.namelist(), "and holds no copy of it")

    return finish()


if __name__ == "__main__":
    sys.exit(main())
