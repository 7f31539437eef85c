#!/usr/bin/env python3
"""cdi_check.py - checks a CDI spec offline against the rules of the Container Device Interface
specification (SPEC.md of cncf-tags/container-device-interface, versions 0.3.0 to 0.8.0), and
what `gpuprio cdi` promises of its own spec (docs/cli.md).

    cdi_check.py SPEC [BOARD_DIR CONF_OR_-]

The CDI rules: cdiVersion a released version, no field newer than it (annotations: 0.6.0;
intelRdt, additionalGids: 0.7.0); kind "vendor/class" (vendor: letters, digits, '-', '_', '.',
starting with a letter, ending with a letter or digit; class: the same without '.'); devices
present, each with a valid unique name (letters, digits, '-', '_', '.', ':', starting and ending
with a letter or digit) and non-empty containerEdits; container edits with only known fields,
env entries VAR=VALUE, mounts with hostPath and an absolute containerPath, options strings.
gpuprio's: one device per named priority whose only edit is GPUPRIO_PRIORITY of its level; the
common edits preload every library they mount read-only (by its container path), mount the board
directory BOARD_DIR read-write at its own path and name it in GPUPRIO_BOARD_DIR, and mount CONF
read-only at /etc/gpuprio.conf (none when CONF is -); every host path exists.
Prints one line per finding and "N passed, N failed"; exits 1 on a failure.
"""
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from findings import finding, summary  # noqa: E402 (tests/findings.py, found through the path)

VERSIONS = ["0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0"]
VENDOR = re.compile(r"^[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
CLASS = re.compile(r"^[A-Za-z]([A-Za-z0-9_-]*[A-Za-z0-9])?$")
DEVICE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")
# Each field and the first version that has it.
SPEC_FIELDS = {"cdiVersion": "0.3.0", "kind": "0.3.0", "devices": "0.3.0",
               "containerEdits": "0.3.0", "annotations": "0.6.0"}
DEVICE_FIELDS = {"name": "0.3.0", "containerEdits": "0.3.0", "annotations": "0.6.0"}
EDIT_FIELDS = {"env": "0.3.0", "deviceNodes": "0.3.0", "hooks": "0.3.0", "mounts": "0.3.0",
               "intelRdt": "0.7.0", "additionalGids": "0.7.0"}
MOUNT_FIELDS = {"hostPath": "0.3.0", "containerPath": "0.3.0", "options": "0.3.0",
                "type": "0.4.0"}
LEVELS = {"critical": 20, "high": 10, "normal": 0, "low": -10, "idle": -20}



def vkey(v):
    return tuple(int(x) for x in v.split("."))


def fields(obj, known, version, where):
    if not isinstance(obj, dict):
        finding(False, f"{where}: an object expected")
        return False
    for key in obj:
        if key not in known:
            finding(False, f"{where}.{key}: not a field of the CDI spec")
        else:
            finding(vkey(known[key]) <= vkey(version),
                    f"{where}.{key}: needs cdiVersion {known[key]}, the spec says {version}")
    return True


def edits(e, version, where):
    if not fields(e, EDIT_FIELDS, version, where):
        return
    finding(bool(e), f"{where}: empty")
    for i, v in enumerate(e.get("env", []) or []):
        finding(isinstance(v, str) and re.match(r"^[^=]+=", v) is not None,
                f"{where}.env[{i}] '{v}': not VAR=VALUE")
    for i, m in enumerate(e.get("mounts", []) or []):
        mw = f"{where}.mounts[{i}]"
        if not fields(m, MOUNT_FIELDS, version, mw):
            continue
        finding(isinstance(m.get("hostPath"), str) and m["hostPath"] != "", f"{mw}: hostPath")
        finding(isinstance(m.get("containerPath"), str) and m["containerPath"].startswith("/"),
                f"{mw}: containerPath must be absolute")
        finding(all(isinstance(o, str) for o in m.get("options", []) or []),
                f"{mw}: options must be strings")


def env_of(e):
    return dict(v.split("=", 1) for v in (e or {}).get("env", []) or [])


def main():
    path = sys.argv[1]
    board_dir = sys.argv[2] if len(sys.argv) > 2 else None
    conf = sys.argv[3] if len(sys.argv) > 3 else None
    with open(path) as f:
        spec = yaml.safe_load(f)
    version = spec.get("cdiVersion") if isinstance(spec, dict) else None
    finding(version in VERSIONS, f"cdiVersion {version!r}: not a released version")
    version = version if version in VERSIONS else VERSIONS[-1]
    fields(spec, SPEC_FIELDS, version, "spec")
    for req in ("cdiVersion", "kind", "devices"):
        finding(req in spec, f"spec.{req}: required")
    kind = str(spec.get("kind", ""))
    vendor, _, cls = kind.partition("/")
    finding(bool(VENDOR.match(vendor)) and bool(CLASS.match(cls)),
            f"kind '{kind}': not vendor/class")
    devices = spec.get("devices") or []
    finding(isinstance(devices, list) and len(devices) > 0, "spec.devices: at least one")
    names = []
    for i, d in enumerate(devices):
        where = f"devices[{i}]"
        if not fields(d, DEVICE_FIELDS, version, where):
            continue
        name = d.get("name")
        finding(isinstance(name, str) and bool(DEVICE.match(name)), f"{where}: name {name!r}")
        finding(name not in names, f"{where}: name {name!r} twice")
        names.append(name)
        finding("containerEdits" in d, f"{where}: containerEdits required")
        edits(d.get("containerEdits"), version, f"{where}.containerEdits")
    if "containerEdits" in spec:
        edits(spec["containerEdits"], version, "spec.containerEdits")
    if board_dir is None:
        return summary()

    # What gpuprio cdi promises.
    finding(kind == "gpuprio.dev/priority", f"kind '{kind}'")
    finding(sorted(names) == sorted(LEVELS), f"devices {names}: one per named level")
    for d in devices:
        env = env_of(d.get("containerEdits"))
        finding(env == {"GPUPRIO_PRIORITY": str(LEVELS.get(d.get("name"), "?"))} and
                set(d["containerEdits"]) == {"env"},
                f"device {d.get('name')}: edits {d.get('containerEdits')}")
    common = spec.get("containerEdits") or {}
    env = env_of(common)
    mounts = {m["containerPath"]: m for m in common.get("mounts", [])}
    for m in mounts.values():
        # The board directory may be made later (at boot); the files must be there.
        finding(m["hostPath"] == board_dir or os.path.exists(m["hostPath"]),
                f"mount of {m['hostPath']}: no such path")
        finding("bind" in m.get("options", []), f"mount of {m['hostPath']}: not a bind mount")
    preload = [p for p in re.split(r"[: ]", env.get("LD_PRELOAD", "")) if p]
    finding(len(preload) > 0, "LD_PRELOAD names no library")
    for p in preload:
        m = mounts.get(p)
        finding(m is not None and "ro" in m.get("options", []) and
                os.path.basename(m["hostPath"]) == os.path.basename(p),
                f"LD_PRELOAD's {p}: not a read-only mount of the library")
    finding(env.get("GPUPRIO_BOARD_DIR") == board_dir,
            f"GPUPRIO_BOARD_DIR={env.get('GPUPRIO_BOARD_DIR')}, expected {board_dir}")
    b = mounts.get(board_dir)
    finding(b is not None and b["hostPath"] == board_dir and "rw" in b.get("options", []),
            f"the board directory {board_dir}: not mounted read-write at its own path")
    c = mounts.get("/etc/gpuprio.conf")
    if conf == "-":
        finding(c is None, "/etc/gpuprio.conf mounted though no file is in use")
    else:
        finding(c is not None and c["hostPath"] == conf and "ro" in c.get("options", []),
                f"/etc/gpuprio.conf: not a read-only mount of {conf}")
    finding(set(env) == {"LD_PRELOAD", "GPUPRIO_BOARD_DIR"}, f"common env {sorted(env)}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
