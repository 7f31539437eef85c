#!/bin/sh
# hip-coverage.sh SRC LIB INCLUDE_DIR - shim.hip_coverage: tools/hip-coverage.sh against the real
# runtime LIB and the headers of INCLUDE_DIR; fails where an exported function that touches a
# stream is neither wrapped nor left out for a recorded reason (the tool's exit status 1), or where
# the headers cannot be read or declare nothing taking a stream (2).
set -eu
src=$1 lib=$2 inc=$3
out=$(sh "$src/tools/hip-coverage.sh" "$lib" "$inc" 2>&1) || status=$?
echo "$out"
[ "${status:-0}" = 0 ] || exit 1
echo "$out" | grep -Eq '^[1-9][0-9]* exported functions touch a stream' ||
    { echo "FAIL: no exported function of $lib touches a stream"; exit 1; }
