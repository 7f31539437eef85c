#!/bin/sh
# hiplt.sh SHIM WORKER PROGRAM CASE [EXPECT]: runs PROGRAM (hiplt_slices) with CASE under SHIM
# (libgpuprio-hip.so) at GPUPRIO_PRIORITY=low, on a simulated device of 4 CUs shared by name (so
# that processes share a board and gates, Level 2, are used), with GPUPRIO_LOG=info and a private
# board directory. With HIPLT_HIGH=1, WORKER (board_worker) runs meanwhile at
# GPUPRIO_PRIORITY=high, its stream joined on the board and idle, as an inference server between
# requests: the low process's queues are then held by gates on the device. The test's other
# settings (GPUPRIO_GEMM_SLICE_US, FAKE_HIPBLASLT_*) come from the environment. The status is the
# program's, or 1 if HIPLT_SAYS is set and no line of its stderr is exactly that (what gpuprio
# says of its counts at exit), or if HIPLT_SILENT=1 and a line says anything of hipblasLtMatmul.
# With HIPLT_TOOL (the gpuprio command), the program is held once its case is done (GEMM_HOLD),
# and the GEMM counts its record on the board shows in `gpuprio top --once --json` must be
# HIPLT_COUNTS (SLICED,SLICES,SMALL,CAPTURING,UNSUPPORTED,CHECK_FAILED).
set -u
shim=$1 worker=$2 program=$3
shift 3
dir=$(mktemp -d /dev/shm/gpuprio-hiplt.XXXXXX) || exit 2
name=hiplt$$
worker_pid=
cleanup() {
    if [ -n "$worker_pid" ]; then
        kill "$worker_pid" 2>/dev/null
        wait "$worker_pid" 2>/dev/null
    fi
    rm -rf "$dir"
    rm -f "/dev/shm/hipsim-$(id -u)-$name-"*
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
export HIPSIM_SHARED="$name" GPUPRIO_BOARD_DIR="$dir" HIPSIM_COMPUTE_SLOTS=4
if [ "${HIPLT_HIGH:-0}" = 1 ]; then
    # The worker says "ready" once its stream is on the board, then waits for a line that never
    # comes (the FIFO stays open, unwritten, until it is killed).
    mkfifo "$dir/go" || exit 2
    LD_PRELOAD="$shim" GPUPRIO_PRIORITY=high "$worker" 1 hold 100 <"$dir/go" \
        >"$dir/worker.out" 2>"$dir/worker.err" &
    worker_pid=$!
    exec 3>"$dir/go"
    i=0
    while ! grep -qx ready "$dir/worker.out" 2>/dev/null && [ $i -lt 2000 ]; do
        sleep 0.01
        i=$((i + 1))
    done
    if ! grep -qx ready "$dir/worker.out"; then
        echo "FAIL: the high-priority worker never got ready"
        cat "$dir/worker.out" "$dir/worker.err"
        exit 1
    fi
fi
if [ -n "${HIPLT_TOOL:-}" ]; then
    # Held once its case is done, while `gpuprio top` reads its record on the board.
    mkfifo "$dir/hold" || exit 2
    LD_PRELOAD="$shim" GPUPRIO_PRIORITY=low GPUPRIO_LOG=info GEMM_HOLD="$dir/hold" "$program" "$@" \
        >"$dir/out" 2>"$dir/err" &
    pid=$!
    i=0
    while ! grep -qx held "$dir/out" && kill -0 "$pid" 2>/dev/null && [ $i -lt 6000 ]; do
        sleep 0.01
        i=$((i + 1))
    done
    trc=1
    if grep -qx held "$dir/out"; then
        "$HIPLT_TOOL" top --once --json >"$dir/top.json" 2>"$dir/top.err"
        got=$(python3 -c '
import json, sys
g = [o["gemm"] for o in json.load(open(sys.argv[1])) if o["pid"] == int(sys.argv[2])]
print(" ".join(sorted({",".join(str(v) for v in [x["sliced"], x["slices"]] + [x["whole"][r]
      for r in ("small", "capturing", "unsupported", "check_failed")]) for x in g})))
' "$dir/top.json" "$pid")
        if [ "$got" = "${HIPLT_COUNTS:-}" ]; then
            echo "ok: top --json shows $pid's GEMM counts $got"
            trc=0
        else
            echo "FAIL: top --json: the GEMM counts of $pid are '$got', not ${HIPLT_COUNTS:-}"
            cat "$dir/top.err"
        fi
    else
        echo "FAIL: the program never got held"
    fi
    echo go >"$dir/hold" &
    releaser=$!
    wait "$pid"
    rc=$?
    wait "$releaser" 2>/dev/null
    [ "$trc" = 0 ] || rc=1
else
    LD_PRELOAD="$shim" GPUPRIO_PRIORITY=low GPUPRIO_LOG=info "$program" "$@" >"$dir/out" \
        2>"$dir/err"
    rc=$?
fi
grep -vx held "$dir/out"
if [ -n "${HIPLT_SAYS:-}" ] && ! grep -qxF "$HIPLT_SAYS" "$dir/err"; then
    echo "FAIL: gpuprio did not say: $HIPLT_SAYS"
    rc=1
fi
if [ "${HIPLT_SILENT:-0}" = 1 ] && grep -q "hipblasLtMatmul" "$dir/err"; then
    echo "FAIL: gpuprio said something of hipblasLtMatmul"
    rc=1
fi
[ $rc -eq 0 ] || { echo "--- its stderr:"; grep -v "^gpuprio: debug" "$dir/err" | tail -20; }
exit $rc
