#!/bin/sh
# launch_overhead.sh [BUILD_DIR] [CALLS]: the shim's observe-only overhead on the simulator.
# For launches and event records, 1 and 4 threads, runs bench/launch_overhead directly and under
# LD_PRELOAD=libgpuprio-hip.so, alternating, 3 times each, and prints the best of each.
set -eu
build=${1:-build-bench}
calls=${2:-200000}
cd "$(dirname "$0")/.."
if [ ! -x "$build/bench/launch_overhead" ]; then
    sh scripts/install-deps.sh
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
fi
prog=$build/bench/launch_overhead
shim=$build/src/libgpuprio-hip.so
best() { # best ns/call of 3 runs: MODE THREADS PRELOAD
    for i in 1 2 3; do
        LD_PRELOAD=$3 "$prog" "$1" "$2" "$calls" | sed 's/.*, \([0-9]*\) ns per call.*/\1/'
    done | sort -n | head -n 1
}
printf '%-8s %-8s %14s %14s %12s\n' call threads "direct ns" "shim ns" "added ns"
for mode in launch record; do
    for t in 1 4; do
        d=$(best $mode $t "")
        s=$(best $mode $t "$shim")
        printf '%-8s %-8s %14s %14s %12s\n' "$mode" "$t" "$d" "$s" "$((s - d))"
    done
done
