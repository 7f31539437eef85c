#!/bin/sh
# secure.sh HELPER SHIM LURE: the library in a program that runs in secure-execution mode
# (setuid here; setgid and file capabilities are the same mode to the kernel) ignores every
# GPUPRIO_* variable: the environment is the unprivileged user's, and GPUPRIO_HIP_LIBRARY would
# load its library into the program, GPUPRIO_CONFIG have the program read its file.
#   - run plainly (as root), the helper loads LURE (named by GPUPRIO_HIP_LIBRARY) and says what
#     is wrong with the file GPUPRIO_CONFIG names: the test can see both;
#   - the same helper setuid to another user (run by root: real uid 0, effective uid 65534, so
#     AT_SECURE): LURE is not loaded, the file is not read (nothing names it), and one warning per
#     variable says it is ignored and why.
# Needs root (to make a setuid program of another user's); 77 (skipped) otherwise, or where the
# temporary directory's file system ignores the setuid bit (nosuid).
. "$(dirname "$0")/lib.sh"
helper=$1 shim=$2 lure=$3
if [ "$(id -u)" != 0 ]; then
    echo "SKIPPED: making a setuid program of another user needs root"
    exit 77
fi
# Where the helper's effective user reaches everything (a build tree under a private home is
# not reachable).
chmod 0755 "$tmp"
cp "$helper" "$tmp/helper" && cp "$shim" "$tmp/libgpuprio-hip.so" && cp "$lure" "$tmp/liblure.so" ||
    exit 1
chmod 0644 "$tmp/libgpuprio-hip.so" "$tmp/liblure.so"
printf 'this is not KEY = VALUE\n' >"$tmp/gpuprio.conf"
chmod 0644 "$tmp/gpuprio.conf"
run_helper() {
    env GPUPRIO_HIP_LIBRARY="$tmp/liblure.so" GPUPRIO_CONFIG="$tmp/gpuprio.conf" \
        GPUPRIO_PRIORITY=critical "$tmp/helper" "$tmp/libgpuprio-hip.so"
}

run_case "plain: the environment is the program's" run_helper
expect_status 0
grep -qx 'secure 0' "$tmp/out" || fail "not run plainly"
grep -qF 'LURE LOADED' "$tmp/err" || fail "GPUPRIO_HIP_LIBRARY's library was not loaded"
expect_gpuprio_says "$tmp/gpuprio.conf"

chown 65534 "$tmp/helper" && chmod 4755 "$tmp/helper" || exit 1
run_case "setuid: the environment is not the program's" run_helper
if grep -qx 'secure 0' "$tmp/out"; then
    echo "SKIPPED: the setuid bit has no effect in $tmp (a nosuid file system)"
    exit 77
fi
expect_status 0
grep -qx 'secure 1' "$tmp/out" || fail "not in secure-execution mode"
grep -qF 'LURE LOADED' "$tmp/err" && fail "GPUPRIO_HIP_LIBRARY's library was loaded"
grep -qF "$tmp/gpuprio.conf" "$tmp/err" && fail "GPUPRIO_CONFIG's file was read"
for v in GPUPRIO_HIP_LIBRARY GPUPRIO_CONFIG GPUPRIO_PRIORITY; do
    n=$(grep -c "^gpuprio: warn: $v is ignored: this program runs with privileges" "$tmp/err")
    [ "$n" = 1 ] || fail "$n warnings that $v is ignored, expected 1"
done
finish
