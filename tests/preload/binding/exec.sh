#!/bin/sh
# exec.sh PROGRAM SHIM RUNS: PROGRAM = exec_test.c under LD_PRELOAD=SHIM, RUNS times each: exec
# from the main thread, and from a second thread while the main thread launches. Every run must
# end with the exec'd image's status (5) and gpuprio must stay silent.
. "$(dirname "$0")/lib.sh"
prog=$1 shim=$2 runs=$3
i=1
while [ $i -le "$runs" ]; do
    for mode in main thread; do
        run_case "exec from the $mode thread, run $i" env LD_PRELOAD="$shim" "$prog" $mode 5
        expect_status 5
        expect_gpuprio_lines 0
        expect_stderr_only_gpuprio
        grep -q "^ok image exec'd from $mode" "$tmp/out" || fail "the new image did not report"
    done
    i=$((i + 1))
done
finish
