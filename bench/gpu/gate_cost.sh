#!/bin/sh
# bench/gpu/gate_cost.sh: what Level 2's gates cost the submitting thread, per launch, on a real
# GPU: bench/gpu/launch_rate (empty kernels, one thread, asynchronous) natively, and under
# libgpuprio-cuda.so at low priority next to an idle high-priority process (a PyTorch process
# that ran one kernel and sleeps), once at GPUPRIO_LEVEL=1 (throttled on the host) and once at
# GPUPRIO_LEVEL=2 (gated on the device). Best of 3 each, side by side. Run bench/gpu/run.sh
# first: it builds build-gpu/ (the library and launch_rate).
set -u
cd "$(dirname "$0")/../.."
build=build-gpu
# SHIM=path measures another build of the library (an earlier commit's, side by side).
shim=${SHIM:-$(find "$(pwd)/$build" -name libgpuprio-cuda.so -type f | head -n 1)}
[ -n "$shim" ] && [ -x "$build/launch_rate" ] || { echo "run bench/gpu/run.sh first" >&2; exit 1; }
n=${CALLS:-200000}
LD_PRELOAD=$shim GPUPRIO_PRIORITY=high python3 -c '
import time, torch
x = torch.ones(1, device="cuda"); x += 1; torch.cuda.synchronize()
print("ready", flush=True); time.sleep(600)' >/tmp/gate_cost_high.txt 2>&1 &
high=$!
i=0
while ! grep -q ready /tmp/gate_cost_high.txt 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
best() { # PRELOAD ENV...: the best of 3 (us per call)
    pre=$1
    shift
    for r in 1 2 3; do
        env LD_PRELOAD=$pre "$@" "$build/launch_rate" rate 1 "$n" 2>>/tmp/gate_cost.log |
            sed 's/.*, \([0-9.]*\) us per call.*/\1/'
    done | sort -n | head -n 1
}
native=$(best "" X=1)
level1=$(best "$shim" GPUPRIO_PRIORITY=low GPUPRIO_LEVEL=1)
level2=$(best "$shim" GPUPRIO_PRIORITY=low GPUPRIO_LEVEL=2 GPUPRIO_LOG=info)
kill $high
wait $high 2>/dev/null
printf 'us per launch (best of 3, %s launches): native %s, level 1 %s, level 2 %s\n' "$n" \
    "$native" "$level1" "$level2"
grep -h "Level" /tmp/gate_cost.log | sort | uniq -c
