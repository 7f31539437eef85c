#!/bin/sh
# reset.sh MODE LIB PROG - a CUDA program that tears its context down between phases (ctx_reset.c:
# MODE reset, destroy or release), at low priority next to a high-priority process bursting on the
# same device (ctx_reset burst), both under gpuprio with a shared board and Level 2 (the fake
# driver's device identity: FAKE_CUDA_BUS_ID), against the same program alone without gpuprio.
# Fails unless both runs print the same and exit 0, the fake driver saw no use of a dead stream,
# event or registration ("fake_cuda: error" on stderr), no gate was refused, and gates were put
# after the first teardown too (gpuprio registered the board's gate lines again).
# The board directory is a private one under /dev/shm (tmpfs), as shim.device_reset's, so that the
# runtime registers the board's gate lines themselves (direct gates: the log must say Level 2, not
# mirrored): under /tmp, a disk filesystem on many hosts, the gates were mirrored and direct
# re-registration after a teardown went untested.
# RESET_BOARDS_IN=DIR: the board directory is made in DIR instead (disk_board.sh: a disk
# filesystem, where the gates are mirrored, which that script checks).
set -u
if [ $# != 3 ]; then
    echo "usage: reset.sh MODE LIB PROG" >&2
    exit 2
fi
mode=$1 lib=$2 prog=$3
. "$(dirname "$0")/../tools/expect.sh"
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
tmp=$(mktemp -d /dev/shm/gpuprio-cuda-reset.XXXXXX) || exit 1
high= boards=
cleanup() {
    [ -z "$high" ] || kill -9 "$high" 2>/dev/null
    [ -z "$boards" ] || rm -rf "$boards"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
if [ -n "${RESET_BOARDS_IN:-}" ]; then
    boards=$(mktemp -d "$RESET_BOARDS_IN/gpuprio-reset-boards.XXXXXX") || exit 1
    chmod 700 "$boards"
    export GPUPRIO_BOARD_DIR="$boards"
else
    export GPUPRIO_BOARD_DIR="$tmp/boards"
    mkdir -m 700 "$GPUPRIO_BOARD_DIR"
fi
export FAKE_CUDA_BUS_ID="fake$$"
status=0

"$prog" "$mode" >"$tmp/native.out" 2>"$tmp/native.err"
native=$?

# The neighbour bursts for longer than the program runs; the program starts once it is ready.
start_high LD_PRELOAD="$lib" GPUPRIO_PRIORITY=high "$prog" burst 30000
LD_PRELOAD="$lib" GPUPRIO_PRIORITY=low GPUPRIO_LOG=info "$prog" "$mode" --shim \
    >"$tmp/shim.out" 2>"$tmp/shim.err"
shimmed=$?
kill -9 "$high" 2>/dev/null
wait "$high" 2>/dev/null
high=
cat "$tmp/shim.err"

same_as_native "$tmp" "$native" "$shimmed" || status=1
if grep -q "fake_cuda: error" "$tmp/shim.err"; then
    echo "FAIL: gpuprio used what died with a context"
    status=1
fi
if grep -q "refused a gate" "$tmp/shim.err"; then
    echo "FAIL: a gate was refused"
    status=1
fi
if [ -z "${RESET_BOARDS_IN:-}" ]; then
    if ! grep -q "^gpuprio: info: device 0: Level 2 (" "$tmp/shim.err" ||
        grep "^gpuprio: info: device 0: Level 2 (" "$tmp/shim.err" | grep -q mirrored; then
        echo "FAIL: the log does not say Level 2 with direct gates (the board under $tmp)"
        status=1
    fi
fi
after=$(sed -n 's/^ctx_reset: gates \([0-9]*\) after the first teardown.*/\1/p' "$tmp/shim.err")
if [ "${after:-0}" -eq 0 ]; then
    echo "FAIL: no gate after the first teardown (the scenario did not reach Level 2 there)"
    status=1
fi
[ $status = 0 ] && echo "identical: $(wc -l <"$tmp/native.out") lines; $after gates after the first teardown"
exit $status
