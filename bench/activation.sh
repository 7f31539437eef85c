#!/bin/sh
# activation.sh [BUILD_DIR] [SHIM]: what a scheduled client's call costs when its queue becomes
# active, with 0, 16, 64 and 256 streams per process that never run anything (PyTorch keeps
# about 145), in 1, 2 and 4 processes sharing one simulated device. Process 1 is the client
# (GPUPRIO_PRIORITY=high): 300 times, it sleeps 1 ms (its queue goes idle), launches an empty
# kernel and waits for it; the launch call is timed. The others (low) warmed one stream up and
# stay idle, taking part in every decision. Each row is the median of 3 runs of P50 and P99, in
# microseconds; "direct" is the same client without gpuprio (the simulator's own cost), and
# "x0" the P50 over the row with no idle streams and the same processes. "act" is the part of
# the call that went to activating the queue, from the library's own report of every call
# (GPUPRIO_LOG=debug GPUPRIO_SLOW_US=1, a separate run; whole microseconds). SHIM defaults to
# the build's libgpuprio-hip.so: pass another build's to compare two versions side by side.
set -eu
build=${1:-build-bench}
cd "$(dirname "$0")/.."
if [ ! -x "$build/bench/activation" ]; then
    sh scripts/install-deps.sh
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
fi
prog=$(pwd)/$build/bench/activation
shim=${2:-$(pwd)/$build/src/libgpuprio-hip.so}
dir=$(mktemp -d /tmp/gpuprio-activation-XXXXXX)
trap 'rm -rf "$dir"; rm -f /dev/shm/hipsim-$(id -u)-activation$$-*' EXIT
export HIPSIM_SHARED=activation$$ GPUPRIO_BOARD_DIR=$dir
once() { # PRELOAD PROCESSES IDLE: the client's "P50 P99"
    rm -f "$dir/done"
    others=""
    i=1
    while [ "$i" -lt "$2" ]; do
        LD_PRELOAD=$1 GPUPRIO_PRIORITY=low ACTIVATION_DONE=$dir/done \
            "$prog" other "$3" 0 0 >"$dir/out$i" &
        others="$others $!"
        until grep -q ready "$dir/out$i" 2>/dev/null; do sleep 0.01; done
        i=$((i + 1))
    done
    if [ -n "${SPLIT:-}" ]; then # the library's report of each call: its activation part
        LD_PRELOAD=$1 GPUPRIO_PRIORITY=high GPUPRIO_LOG=debug GPUPRIO_SLOW_US=1 \
            "$prog" client "$3" 300 1000 2>&1 >/dev/null |
            sed -n 's/.*admitting it (\([0-9]*\) of them activating.*/\1/p' | sort -n |
            awk '{v[NR] = $1} END {
                if (!NR) { print "- -"; exit }
                p99 = int(NR * 0.99); if (p99 < 1) p99 = 1
                printf "%d %d\n", v[int((NR + 1) / 2)], v[p99] }'
    else
        LD_PRELOAD=$1 GPUPRIO_PRIORITY=high "$prog" client "$3" 300 1000
    fi
    touch "$dir/done"
    for p in $others; do wait "$p"; done
}
median3() { # PRELOAD PROCESSES IDLE: the median of 3 runs, "P50 P99"
    for r in 1 2 3; do once "$@"; done | sort -n | sed -n 2p
}
printf '%-9s %-5s %8s %8s %8s %6s %9s %9s\n' processes idle direct P50 P99 x0 \
    "act P50" "act P99"
for procs in 1 2 4; do
    base=""
    for idle in 0 16 64 256; do
        direct=$(median3 "" "$procs" "$idle" | cut -d' ' -f1)
        set -- $(median3 "$shim" "$procs" "$idle") $(SPLIT=1 median3 "$shim" "$procs" "$idle")
        [ -n "$base" ] || base=$1
        printf '%-9s %-5s %8s %8s %8s %6s %9s %9s\n' "$procs" "$idle" "$direct" "$1" "$2" \
            "$(echo "$1 $base" | awk '{printf "%.2f", $1 / $2}')" "$3" "$4"
    done
done
