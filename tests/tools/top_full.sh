#!/bin/sh
# top_full.sh - a full board (docs/board.md, "The file"): a process whose queues outnumber the
# board's slots has the queues that got none scheduled within the process only; gpuprio top and
# metrics must show them. A worker with 601 streams that each ran a kernel (600, then the one it
# keeps running), alone on its board: its record and 511 queues fill the 512 slots, 90 get none.
# - `top --once`: the processes line says "(511 queues, 0 unused, 90 without a slot)";
# - `top --once --json`: its rows carry "unslotted_queues": 90, and with --all one "unused"
#   object says so too; `top --once --all`: a row "0 unused, 90 no slot";
# - `metrics --once`: gpuprio_process_unslotted_queues{...,pid="PID",...} 90;
# - the worker says once that the board is full and that top and metrics count them.
#
#   top_full.sh GPUPRIO TOOLS_WORKER HIP_SHIM
set -u
gpuprio=$1 worker=$2 shim=$3
. "$(dirname "$0")/expect.sh"
sandbox_boards tools-full
pid=
cleanup() { sandbox_cleanup $pid; }
trap cleanup EXIT
unset GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_STREAM_PRIORITIES GPUPRIO_LOG
export HIPSIM_SHARED=$name HIPSIM_COMPUTE_SLOTS=8
ready() { grep -q '^ready' "$1"; }

LD_PRELOAD=$shim "$worker" "$tmp/stop" 120 600 full >"$tmp/worker.out" 2>"$tmp/worker.err" &
pid=$!
wait_for 60 ready "$tmp/worker.out" || echo "FAIL: the worker never got ready: $(cat "$tmp/worker.err")"

"$gpuprio" top --once >"$tmp/top.txt" 2>"$tmp/top.err"
expect "top --once: status" 0 $?
grep '^processes:' "$tmp/top.txt"
expect "processes line" "$pid tools_worker (511 queues, 0 unused, 90 without a slot)" \
    "$(grep '^processes:' "$tmp/top.txt" | grep -o " $pid [^(]*([^)]*)" | sed 's/^ //')"
"$gpuprio" top --once --json >"$tmp/top.json" 2>"$tmp/top.err"
expect "top --once --json: rows with the count" 511 \
    "$(grep "\"pid\": $pid," "$tmp/top.json" | grep -c '"unused_queues": 0, "unslotted_queues": 90,')"
"$gpuprio" top --once --json --all >"$tmp/all.json" 2>"$tmp/top.err"
expect "--all --json: the record's object" 1 \
    "$(grep "\"pid\": $pid," "$tmp/all.json" | grep '"kind": "unused"' | grep -c '"unused_queues": 0, "unslotted_queues": 90,')"
"$gpuprio" top --once --all >"$tmp/all.txt" 2>"$tmp/top.err"
expect "--all: the record's row" 1 "$(grep -c " $pid tools_worker .* 0 unused, 90 no slot " "$tmp/all.txt")"
"$gpuprio" metrics --once >"$tmp/metrics.prom" 2>"$tmp/metrics.err"
expect "metrics --once: status" 0 $?
expect "metrics: unslotted queues" 90 \
    "$(grep "^gpuprio_process_unslotted_queues{.*pid=\"$pid\"," "$tmp/metrics.prom" | sed 's/.* //')"
expect "metrics: queue series" 511 "$(grep -c "^gpuprio_queue_priority{.*pid=\"$pid\"," "$tmp/metrics.prom")"
expect "the worker's warning, once" 1 "$(grep -c 'is full (512 queues).*count them as without a slot' "$tmp/worker.err")"

touch "$tmp/stop"
wait "$pid"
expect "worker: status" 0 $?
pid=
[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
