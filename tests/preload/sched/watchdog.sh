#!/bin/sh
# watchdog.sh PROGRAM SHIM: runs tests/preload/sched/watchdog.c under the shim with a window of 1
# and a 200 ms watchdog; it must finish, say OK, and gpuprio must have warned exactly once.
set -u
prog=$1 shim=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$(GPUPRIO_WINDOW=1 GPUPRIO_WATCHDOG_MS=200 LD_PRELOAD=$shim "$prog" 200 2>"$err")
status=$?
echo "$out"
warnings=$(grep -c "^gpuprio: warn: a thread waited" "$err")
if [ $status != 0 ] || [ "$warnings" != 1 ]; then
    echo "FAIL: exit status $status, $warnings watchdog warnings (expected 0 and 1); stderr:"
    cat "$err"
    exit 1
fi
