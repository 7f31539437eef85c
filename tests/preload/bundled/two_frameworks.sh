#!/bin/sh
# two_frameworks.sh PROGRAM SHIM FRAMEWORK_A FRAMEWORK_B: both frameworks compute the right result
# with and without the shim, and under the shim gpuprio says once that two runtimes are loaded.
set -u
prog=$1 shim=$2 a=$3 b=$4
"$prog" "$a" "$b" || { echo "FAIL: wrong without the shim"; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
LD_PRELOAD=$shim "$prog" "$a" "$b" 2>"$err"
status=$?
lines=$(grep -c '^gpuprio:' "$err")
said=$(grep -c '^gpuprio: error: two HIP runtimes are loaded' "$err")
if [ $status != 0 ] || [ "$lines" != 1 ] || [ "$said" != 1 ]; then
    echo "FAIL: exit status $status, $lines gpuprio lines ($said about two runtimes); stderr:"
    cat "$err"
    exit 1
fi
