#!/bin/sh
# watchdog.sh PROGRAM SHIM [suspended]: runs tests/preload/sched/watchdog.c under the shim with a
# window of 1 and a 200 ms watchdog (its mode the third argument); it must finish, say OK, and
# gpuprio must have warned exactly once. With GPUPRIO_LOG=debug, the held call is also reported as
# slow, with the 200 ms spent admitting it.
set -u
prog=$1 shim=$2 mode=${3:-}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$(GPUPRIO_LOG=debug GPUPRIO_WINDOW=1 GPUPRIO_WATCHDOG_MS=200 LD_PRELOAD=$shim "$prog" 200 $mode 2>"$err")
status=$?
echo "$out"
warnings=$(grep -c "^gpuprio: warn: a thread waited" "$err")
# "a call on queue 0x... took T us: A admitting it (...)": the longest A reported.
admitting=$(sed -n 's/^gpuprio: debug: a call on queue 0x[0-9a-f]* took [0-9]* us: \([0-9]*\) admitting it .*/\1/p' "$err" |
    sort -n | tail -n 1)
if [ $status != 0 ] || [ "$warnings" != 1 ] || [ "${admitting:-0}" -lt 200000 ]; then
    echo "FAIL: exit status $status, $warnings watchdog warnings, longest admission reported" \
        "${admitting:-none} us (expected 0, 1 and at least 200000); stderr:"
    cat "$err"
    exit 1
fi
