#!/bin/sh
# gemm.sh LIB PROGRAM CLIENT CASE [EXPECT]: runs PROGRAM (gemm_slices) with CASE under LIB
# (libgpuprio-cuda.so), at GPUPRIO_PRIORITY=low, over the fake driver and the fake cuBLASLt,
# with a device identity (so that processes share a board and gates, Level 2, are used), 4 SMs,
# GPUPRIO_LOG=debug and a private board directory. With GEMM_HIGH=1, CLIENT (mps_client) runs
# meanwhile at GPUPRIO_PRIORITY=high, its two streams joined on the board and idle, as an
# inference server between requests: the low process's queues are then held by gates on the
# device. The test's other settings (GPUPRIO_GEMM_SLICE_US, FAKE_CUBLASLT_*) come from the
# environment. The status is the program's (1 if the client failed, or if GEMM_SAYS is set and
# no line of its stderr is exactly that: what gpuprio says of its counts at exit); its output is
# printed.
set -u
lib=$1 program=$2 client=$3
shift 3
. "$(dirname "$0")/../tools/expect.sh"
fakedir=${FAKE_CUDA_DIR:-$(dirname "$program")/fakecuda}
tmp=$(mktemp -d) || exit 1
pid= writer=
cleanup() {
    [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null
    [ -z "$writer" ] || kill -9 "$writer" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
mkdir -m 700 "$tmp/boards"
export GPUPRIO_BOARD_DIR="$tmp/boards" FAKE_CUDA_BUS_ID="gemm$$" FAKE_CUDA_SMS=4
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
env LD_PRELOAD="$lib" GPUPRIO_PRIORITY=low GPUPRIO_LOG=debug "$program" "$@" 2>"$tmp/err"
rc=$?
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
