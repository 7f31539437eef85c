#!/bin/sh
# gated.sh WORKER SHIM PROGRAM EXPECTED - runs a conformance program under the shim with Level 2
# at work: the program runs at low priority on a shared simulated device, next to a
# high-priority process (board_worker) that bursts the whole time, so the program's queues are
# held by gates on the device that close and open under it. Its output must still be exactly
# the expected output (tests/conformance/run.sh compares).
worker=$1
shim=$2
prog=$3
expected=$4
here=$(dirname "$0")
dir=$(mktemp -d /dev/shm/gpuprio-gated.XXXXXX) || exit 2
name=gated$$
export HIPSIM_SHARED="$name" GPUPRIO_BOARD_DIR="$dir"
# The worker starts on "go", then bursts (2 kernels of 200 us, 1 ms apart) until killed.
fifo=$dir/go
mkfifo "$fifo" || exit 2
LD_PRELOAD="$shim" GPUPRIO_PRIORITY=high "$worker" 1 burst 100000 2 200 1000 <"$fifo" >"$dir/worker.out" &
worker_pid=$!
exec 3>"$fifo"
# The high-priority queue exists on the board before the program starts ("ready").
i=0
while ! grep -q ready "$dir/worker.out" 2>/dev/null && [ $i -lt 500 ]; do
    sleep 0.01
    i=$((i + 1))
done
echo go >&3
GPUPRIO_PRIORITY=low GPUPRIO_HW_PRIORITY=off sh "$here/../conformance/run.sh" "$prog" "$expected" "$shim"
status=$?
kill "$worker_pid" 2>/dev/null
wait "$worker_pid" 2>/dev/null
exec 3>&-
rm -rf "$dir"
rm -f "/dev/shm/hipsim-$(id -u)-$name-"*
exit $status
