#!/bin/sh
# launch_overhead.sh [BUILD_DIR] [CALLS]: what the shim costs per call, side by side in one run.
# For launches and event records, 1 and 4 threads, it runs bench/launch_overhead directly and
# under LD_PRELOAD=libgpuprio-hip.so: idle (every stream of one priority: calls are only
# observed), tracked (an idle stream of lower priority exists: completion markers follow the
# workers' queues) and throttled (an idle stream of higher priority exists: the workers' queues
# are also held to the in-flight window). Each is the best of 3 runs, in nanoseconds per call
# per thread. Two runtimes: "stub" does nothing per call (bench/stub_runtime.c), so its columns
# minus "direct" are the shim's own cost; "sim" is the simulator, which adds its own work on
# every side.
set -eu
build=${1:-build-bench}
calls=${2:-200000}
cd "$(dirname "$0")/.."
if [ ! -x "$build/bench/launch_overhead_stub" ]; then
    sh scripts/install-deps.sh
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
fi
shim=$(pwd)/$build/src/libgpuprio-hip.so
best() { # PROGRAM MODE THREADS PRELOAD [low|high]: best ns per call per thread of 3 runs
    for i in 1 2 3; do
        LD_PRELOAD=$4 "$1" "$2" "$3" "$calls" ${5:-} | sed 's/.*, \([0-9.]*\) ns per call.*/\1/'
    done | sort -n | head -n 1
}
printf '%-8s %-8s %-8s %10s %10s %10s %10s\n' runtime call threads direct idle tracked throttled
for runtime in stub sim; do
    prog=$build/bench/launch_overhead
    [ $runtime = stub ] && prog=${prog}_stub
    for mode in launch record; do
        for t in 1 4; do
            printf '%-8s %-8s %-8s %10s %10s %10s %10s\n' $runtime $mode $t \
                "$(best "$prog" $mode $t "")" "$(best "$prog" $mode $t "$shim")" \
                "$(best "$prog" $mode $t "$shim" low)" "$(best "$prog" $mode $t "$shim" high)"
        done
    done
done
