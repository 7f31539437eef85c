#!/bin/sh
# tests/gpu/mps_pass.sh OUTDIR SHIM BINDIR PYTHON - step 7 of tests/gpu/run.sh, run by it under
# scripts/with-mps.sh (an MPS control daemon of its own), so every CUDA process here is an MPS
# client (docs/mps.md). Writes one PASS or FAIL line per check to OUTDIR/summary.txt:
#   - the conformance ports (BINDIR) under the shim at high priority (so their created streams get
#     stream priority -1) print what they print without it, under MPS too, and exit 0; the shim
#     says once that the process is an MPS client;
#   - torch_identical.py: output bytes identical without the shim and with it at high priority;
#   - a low-priority process with GPUPRIO_CU_RESERVE=25% is limited by MPS to 75% of the SMs,
#     and says so.
set -u
[ $# -eq 4 ] || { echo "usage: $0 OUTDIR SHIM BINDIR PYTHON" >&2; exit 2; }
out=$1 shim=$2 bin=$3 python=$4
here=$(cd "$(dirname "$0")" && pwd)
: > "$out/summary.txt"
pass() { echo "PASS mps: $*" >> "$out/summary.txt"; }
fail() { echo "FAIL mps: $*" >> "$out/summary.txt"; }

for p in in_order cross_stream_events null_stream; do
    [ -x "$bin/$p" ] || { fail "$p was not built"; continue; }
    "$bin/$p" > "$out/$p.native.out" 2> "$out/$p.native.err"
    nrc=$?
    LD_PRELOAD="$shim" GPUPRIO_LOG=info GPUPRIO_PRIORITY=high "$bin/$p" > "$out/$p.shim.out" \
        2> "$out/$p.shim.err"
    src=$?
    said=$(grep -c "is an MPS client" "$out/$p.shim.err")
    if [ $nrc = 0 ] && [ $src = 0 ] && cmp -s "$out/$p.native.out" "$out/$p.shim.out" &&
        [ "$said" = 1 ]; then
        pass "$p: identical, exit 0, said once that it is an MPS client"
    else
        fail "$p: exit $nrc/$src, outputs $(cmp -s "$out/$p.native.out" "$out/$p.shim.out" && echo identical || echo DIFFER), 'is an MPS client' said $said times"
    fi
done

export CUBLAS_WORKSPACE_CONFIG=:4096:8
"$python" "$here/torch_identical.py" "$out/torch.native.bin" > "$out/torch.native.log" 2>&1
nrc=$?
LD_PRELOAD="$shim" GPUPRIO_LOG=info GPUPRIO_PRIORITY=high "$python" "$here/torch_identical.py" \
    "$out/torch.shim.bin" --expect-gpuprio "$out/torch.shim.stats" > "$out/torch.shim.log" 2>&1
src=$?
if [ $nrc = 0 ] && [ $src = 0 ] && cmp -s "$out/torch.native.bin" "$out/torch.shim.bin"; then
    pass "torch (high priority): outputs bit-identical, exit 0"
else
    fail "torch: exit $nrc/$src, outputs $(cmp -s "$out/torch.native.bin" "$out/torch.shim.bin" && echo identical || echo DIFFER) (see torch.*.log)"
fi

# The share: the shim sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=75 in its constructor.
LD_PRELOAD="$shim" GPUPRIO_LOG=info GPUPRIO_PRIORITY=low GPUPRIO_CU_RESERVE=25% "$bin/in_order" \
    > "$out/reserve.out" 2> "$out/reserve.err"
rc=$?
limit=$(sed -n 's/.*MPS limits this process to \([0-9]*\)% of the device: \([0-9]*\) SMs.*/\1 \2/p' "$out/reserve.err")
set -- $limit
if [ $rc = 0 ] && [ $# = 2 ] && [ "$1" = 75 ] && [ "$2" -gt 0 ] &&
    cmp -s "$out/in_order.native.out" "$out/reserve.out"; then
    pass "reserve: GPUPRIO_CU_RESERVE=25% at low priority: MPS gives it $1% of the device, $2 SMs; output identical"
else
    fail "reserve: exit $rc, limit '${limit:-none}' (want 75% of the device; see reserve.err)"
fi
exit 0
