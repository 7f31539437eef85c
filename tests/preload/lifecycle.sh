#!/bin/sh
# lifecycle.sh PROGRAM SHIM RUNS [MODE:STATUS...]: runs each mode of PROGRAM
# (tests/preload/lifecycle.c) RUNS times under LD_PRELOAD=SHIM, and once without; every run must
# exit with the mode's status. Without MODE:STATUS arguments, all modes.
set -u
prog=$1 shim=$2 runs=$3
shift 3
specs=${*:-return:7 thread:9 signal:143 ctor:0 fork:0}
failures=0 total=0
check() { # MODE EXPECTED PRELOAD
    LD_PRELOAD=$3 "$prog" "$1" >/dev/null 2>&1
    got=$?
    total=$((total + 1))
    if [ "$got" != "$2" ]; then
        echo "FAIL: $1 exited $got, expected $2 (LD_PRELOAD='$3')"
        failures=$((failures + 1))
    fi
}
for spec in $specs; do
    mode=${spec%%:*} want=${spec#*:}
    check "$mode" "$want" ""
    i=0
    while [ $i -lt "$runs" ]; do
        check "$mode" "$want" "$shim"
        i=$((i + 1))
    done
done
echo "$total runs, $failures with the wrong exit status"
[ $failures = 0 ]
