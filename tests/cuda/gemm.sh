#!/bin/sh
# gemm.sh LIB PROGRAM CLIENT CASE [EXPECT]: runs PROGRAM (gemm_slices) with CASE under LIB
# (libgpuprio-cuda.so), at GPUPRIO_PRIORITY=low (or GEMM_PRIORITY), over the fake driver and the fake cuBLASLt,
# with a device identity (so that processes share a board and gates, Level 2, are used), 4 SMs,
# GPUPRIO_LOG=debug and a private board directory. With GEMM_HIGH=1, CLIENT (mps_client) runs
# meanwhile at GPUPRIO_PRIORITY=high, its two streams joined on the board and idle, as an
# inference server between requests: the low process's queues are then held by gates on the
# device. The test's other settings (GPUPRIO_GEMM_SLICE_US, FAKE_CUBLASLT_*) come from the
# environment. The status is the program's (1 if the client failed, or if GEMM_SAYS is set and
# no line of its stderr is exactly that: what gpuprio says of its counts at exit); its output is
# printed.
#
# With GEMM_TOOL (the gpuprio command) and GEMM_COUNTS (SLICED,SLICES,SMALL,CAPTURING,UNSUPPORTED,
# CHECK_FAILED), the program is held once its case is done (GEMM_HOLD), and the counts its record
# shows must be those, in `gpuprio metrics --once` (tests/tools/prom_check.py --gemm) and `gpuprio
# top --once --json`, and `gpuprio top --once` must give the process's entry GEMM_TOP_SAYS (as in
# "PID COMMAND (2 queues, 0 unused; GEMM_TOP_SAYS)"), or no GEMMs at all when it is empty. The
# process checked is the program, or the one whose "pid PID" line it prints (a forked child).
set -u
lib=$1 program=$2 client=$3
shift 3
. "$(dirname "$0")/../tools/expect.sh"
fakedir=${FAKE_CUDA_DIR:-$(dirname "$program")/fakecuda}
tmp=$(mktemp -d) || exit 1
pid= writer= low= checked= releaser=
cleanup() {
    [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null
    [ -z "$low" ] || kill -9 "$low" 2>/dev/null
    [ -z "$checked" ] || kill -9 "$checked" 2>/dev/null
    [ -z "$writer" ] || kill -9 "$writer" 2>/dev/null
    [ -z "$releaser" ] || kill -9 "$releaser" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
mkdir -m 700 "$tmp/boards"
export GPUPRIO_BOARD_DIR="$tmp/boards" FAKE_CUDA_BUS_ID="gemm$$" FAKE_CUDA_SMS=${GEMM_SMS:-4}
export LD_LIBRARY_PATH="$fakedir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ready_or_gone() {
    grep -qx ready "$tmp/client.out" || ! kill -0 "$pid" 2>/dev/null
}
if [ "${GEMM_HIGH:-0}" = 1 ]; then
    mkfifo "$tmp/fifo" || exit 1
    env LD_PRELOAD="$lib" GPUPRIO_PRIORITY=high "$client" "$tmp/fifo" >"$tmp/client.out" \
        2>"$tmp/client.err" &
    pid=$!
    wait_for 20 ready_or_gone
    if ! grep -qx ready "$tmp/client.out"; then
        echo "FAIL: the high-priority client never got ready"
        cat "$tmp/client.out" "$tmp/client.err"
        exit 1
    fi
fi
# The counts the held process's record shows, as GEMM_COUNTS and GEMM_TOP_SAYS say.
tools_say() {
    tfails=0
    "$GEMM_TOOL" metrics --once >"$tmp/m.prom" || tfails=$((tfails + 1))
    if ! /usr/bin/python3 "$(dirname "$0")/../tools/prom_check.py" "$tmp/m.prom" \
        --gemm "$checked:$GEMM_COUNTS" >"$tmp/check.out"; then
        grep -v '^ok' "$tmp/check.out"
        tfails=$((tfails + 1))
    fi
    "$GEMM_TOOL" top --once --json >"$tmp/top.json" || tfails=$((tfails + 1))
    got=$(/usr/bin/python3 -c '
import json, sys
g = [o["gemm"] for o in json.load(open(sys.argv[1])) if o["pid"] == int(sys.argv[2])]
print(" ".join(sorted({",".join(str(v) for v in [x["sliced"], x["slices"]] + [x["whole"][r]
      for r in ("small", "capturing", "unsupported", "check_failed")]) for x in g})))
' "$tmp/top.json" "$checked")
    if [ "$got" != "$GEMM_COUNTS" ]; then
        echo "FAIL: top --json: the GEMM counts of $checked are '$got', not $GEMM_COUNTS"
        tfails=$((tfails + 1))
    fi
    "$GEMM_TOOL" top --once >"$tmp/top.txt" || tfails=$((tfails + 1))
    entry=$(/usr/bin/python3 -c '
import re, sys
entry = r" %s [^(]*\(((?:[^()]|\([^()]*\))*)\)" % sys.argv[1]  # "(... (8 slices), ...)"
m = re.search(r"^processes:.*" + entry, open(sys.argv[2]).read(), re.M)
print(m.group(1) if m else "none")
' "$checked" "$tmp/top.txt")
    case "$entry" in
    none) echo "FAIL: top --once: no entry for $checked"; tfails=$((tfails + 1)) ;;
    *"; GEMMs"*)
        if [ "${entry#*; }" != "${GEMM_TOP_SAYS:-}" ]; then
            echo "FAIL: top --once: $checked's entry says '${entry#*; }', not '${GEMM_TOP_SAYS:-}'"
            tfails=$((tfails + 1))
        fi ;;
    *)
        if [ -n "${GEMM_TOP_SAYS:-}" ]; then
            echo "FAIL: top --once: $checked's entry ($entry) says nothing of GEMMs"
            tfails=$((tfails + 1))
        fi ;;
    esac
    [ "$tfails" = 0 ] && echo "ok: top and metrics show $checked's GEMM counts $GEMM_COUNTS"
    cat "$tmp/top.txt"
    return "$tfails"
}
held_or_gone() {
    grep -qx held "$tmp/out" || ! kill -0 "$low" 2>/dev/null
}
if [ -n "${GEMM_TOOL:-}" ]; then
    mkfifo "$tmp/hold" || exit 1
    env LD_PRELOAD="$lib" GPUPRIO_PRIORITY=${GEMM_PRIORITY:-low} GPUPRIO_LOG=debug GEMM_HOLD="$tmp/hold" \
        "$program" "$@" >"$tmp/out" 2>"$tmp/err" &
    low=$!
    wait_for 20 held_or_gone
    if grep -qx held "$tmp/out"; then
        checked=$(sed -n 's/^pid \([0-9][0-9]*\)$/\1/p' "$tmp/out" | head -n 1)
        checked=${checked:-$low}
        tools_say
        trc=$?
    else
        echo "FAIL: the program never got held"
        trc=1
    fi
    # Its writer blocks until a reader opens the FIFO: one that died before it never will, and
    # the writer, holding the test's output open, must not outlive the script.
    echo go >"$tmp/hold" &
    releaser=$!
    wait "$low"
    rc=$?
    low= checked=
    grep -vx held "$tmp/out"
    [ "$trc" = 0 ] || rc=1
else
    env LD_PRELOAD="$lib" GPUPRIO_PRIORITY=${GEMM_PRIORITY:-low} GPUPRIO_LOG=debug "$program" "$@" 2>"$tmp/err"
    rc=$?
fi
cat "$tmp/err" >&2
if [ -n "${GEMM_SAYS:-}" ] && ! grep -qxF "$GEMM_SAYS" "$tmp/err"; then
    echo "FAIL: gpuprio did not say: $GEMM_SAYS"
    rc=1
fi
if [ -n "$pid" ]; then
    echo go >"$tmp/fifo" &
    writer=$!
    wait_for 20 sh -c "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null
    wait "$pid" || { echo "FAIL: the high-priority client failed"; rc=1; }
    pid=
fi
exit $rc
