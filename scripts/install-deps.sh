#!/bin/sh
# install-deps.sh: installs what gpuprio needs to build and test on Debian 12, as root.
# Already-installed packages are left alone, so this is cheap to run before every build.
set -eu
# The build: cmake, the compilers, Debian's HIP runtime (headers, and a library that loads
# without a GPU). Debian's python3 runs the Python package's tests (python3-venv: pip install
# into a fresh environment; libpython3.11: the ThreadSanitizer build embeds the interpreter, as
# its runtime cannot be preloaded into /usr/bin/python3) and parses `gpuprio metrics`
# (python3-prometheus-client); dpkg-dev,
# lintian, man-db and pkg-config build and check the Debian package and the installed files;
# clang-format checks the sources' format (the test `format`); mmdebstrap makes the roots with
# the real HIP 6.4 and 7.2 runtimes that scripts/test-rocm.sh tests against, and mount mounts
# /proc and /dev in them. The cluster tests (docs/clusters.md): libslurm-dev has the headers the
# Slurm plugin is built against; slurm-wlm (slurmctld, slurmd, the clients) and munge run the
# one-node cluster that tests/slurm starts; podman runs the containers of podman.cdi (rootful,
# with crun); python3-yaml reads the CDI spec and the Kubernetes manifests.
pkgs="cmake make gcc clang binutils libamdhip64-dev libamdhip64-5
      python3 python3-venv libpython3.11 python3-prometheus-client dpkg-dev lintian man-db pkg-config
      clang-format mmdebstrap mount libslurm-dev slurm-wlm munge podman crun python3-yaml"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages:$missing; run this script as root, or install them" >&2
    exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
