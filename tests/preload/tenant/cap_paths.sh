#!/bin/sh
# tenant.cap_paths: runs cap_paths (see cap_paths.c) under a configuration file that caps this
# user at low, and checks its one warning naming the cap and where it is set; then without the
# file, where the same program must fail (critical is kept), so the check can fail.
#   cap_paths.sh CAP_PATHS SHIM
set -u
prog=$1 shim=$2
[ "$(id -u)" = 0 ] || { echo "SKIPPED: the configuration file must be root's"; exit 77; }
tmp=$(mktemp -d /tmp/gpuprio-cap-paths-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '# caps\ncap.%s = low\n' "$(id -u)" >"$tmp/gpuprio.conf"
chmod 644 "$tmp/gpuprio.conf"
fails=0
GPUPRIO_CONFIG=$tmp/gpuprio.conf GPUPRIO_PRIORITY=critical LD_PRELOAD=$shim "$prog" \
    >"$tmp/out" 2>"$tmp/err"
status=$?
cat "$tmp/out"
[ $status = 0 ] || { echo "FAIL: capped: status $status"; cat "$tmp/err"; fails=$((fails + 1)); }
n=$(grep -c "above the cap of this user, -10, set in $tmp/gpuprio.conf line 2" "$tmp/err")
[ "$n" = 1 ] || { echo "FAIL: $n cap warnings, one wanted:"; cat "$tmp/err"; fails=$((fails + 1)); }
GPUPRIO_CONFIG=$tmp/none GPUPRIO_PRIORITY=critical LD_PRELOAD=$shim "$prog" >"$tmp/out2" 2>&1
[ $? != 0 ] || { echo "FAIL: without the file the program passed: the check cannot fail"; fails=$((fails + 1)); }
[ $fails = 0 ] && echo "ok: every path capped at low, one warning" || exit 1
