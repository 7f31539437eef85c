"""install_test.py - python.install: `pip install ./python` in a fresh virtual environment,
offline, and the installed package without the library.

The interpreter that runs this (CMake passes Debian's /usr/bin/python3, the one CI installs with
python3-venv) makes a virtual environment in a temporary directory, and its own pip installs the
package twice: with --no-index, which proves that the build needs nothing from an index (the
in-tree backend; build isolation would otherwise fetch setuptools), and then as a user types it,
with the index pointed at a closed local port, which proves that plain `pip install ./python`
never tries the network. After each, the environment's python imports gpuprio from its
site-packages and runs no_library.py. The source tree must be left as it was (no byte code, no
build directories). Exits 77 (skipped) when the interpreter cannot make a virtual environment.

Usage: python3 install_test.py PACKAGE_DIR NO_LIBRARY_SCRIPT
"""

import importlib.util
import os
import subprocess
import sys
import tempfile


def tree(root):
    """Every path under root, for telling whether an install wrote into the source tree."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def run(args, **kw):
    print("+", " ".join(args), flush=True)
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def main():
    package, no_library = sys.argv[1], sys.argv[2]
    # Debian's venv module makes no pip without ensurepip, which is in python3-venv.
    missing = [m for m in ("venv", "ensurepip") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"skipped: {sys.executable} cannot make a virtual environment with pip (no "
              f"{', '.join(missing)}); install python3-venv (scripts/install-deps.sh does)")
        return 77
    before = tree(package)
    failures = 0
    # pip's own settings must not leak in from the user running the test.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    env["PIP_CONFIG_FILE"] = os.devnull
    with tempfile.TemporaryDirectory(prefix="gpuprio-py-") as tmp:
        venv_dir = os.path.join(tmp, "venv")
        r = run([sys.executable, "-m", "venv", venv_dir], env=env)
        if r.returncode != 0:
            print(r.stdout)
            print(f"FAIL: {sys.executable} -m venv failed")
            return 1
        py = os.path.join(venv_dir, "bin", "python")
        site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   env=env).stdout.strip()
        installs = [
            ("--no-index", ["--no-index"], env),
            # As typed by a user, with every index unreachable: port 9 (discard) on localhost is
            # closed, so any attempt to download fails the install at once.
            ("an unreachable index", ["--retries", "0", "--timeout", "2"],
             dict(env, PIP_INDEX_URL="http://127.0.0.1:9/simple")),
        ]
        for what, extra, install_env in installs:
            r = run([py, "-m", "pip", "install", "--no-cache-dir", *extra, package],
                    env=install_env, cwd=tmp)
            if r.returncode != 0:
                print(r.stdout)
                print(f"FAIL: pip install with {what}")
                failures += 1
                continue
            r = run([py, no_library, site], env=env, cwd=tmp)
            print(r.stdout, end="")
            if r.returncode != 0:
                print(f"FAIL: the package installed with {what}, without the library")
                failures += 1
            r = run([py, "-m", "pip", "uninstall", "-y", "gpuprio"], env=env, cwd=tmp)
            if r.returncode != 0:
                print(r.stdout)
                print("FAIL: pip uninstall")
                failures += 1
    after = tree(package)
    if after != before:
        print(f"FAIL: the install changed the source tree: added {sorted(after - before)}, "
              f"removed {sorted(before - after)}")
        failures += 1
    print("FAILED" if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
