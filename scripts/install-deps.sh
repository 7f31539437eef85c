#!/bin/sh
# install-deps.sh: installs what gpuprio needs to build and test on Debian 12, as root.
# Already-installed packages are left alone, so this is cheap to run before every build.
set -eu
pkgs="cmake make gcc clang binutils libamdhip64-dev libamdhip64-5"
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
