#!/bin/sh
# reset.sh LIB PROG [MODE] - a HIP program that resets its device between phases (reset_phases.c's
# MODE: phases, unless given; other: device 0 reset again and again while device 1 works, on two
# simulated devices), at low priority next to a high-priority process bursting on the same
# simulated device (HIPSIM_SHARED, so both join one board, with Level 2 gates; device 1 for other),
# both under gpuprio, against the same program alone without gpuprio. Fails unless both runs print
# the same and exit 0, the simulator saw no use of a stream, event or registration the reset
# destroyed ("hipsim: error" on stderr), no gate was refused, and (phases) gpuprio registered the
# board's gates again after a reset.
set -u
if [ $# != 2 ] && [ $# != 3 ]; then
    echo "usage: reset.sh LIB PROG [phases|other]" >&2
    exit 2
fi
lib=$1 prog=$2 mode=${3:-phases} neighbour_device=0
. "$(dirname "$0")/../../tools/expect.sh"
if [ "$mode" = other ]; then
    export HIPSIM_DEVICES=2
    neighbour_device=1
fi
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
unset HIPSIM_SHARED HIPSIM_FAULT HIPSIM_TRACE
tmp=$(mktemp -d /dev/shm/gpuprio-reset.XXXXXX) || exit 1
high=
cleanup() {
    [ -z "$high" ] || kill -9 "$high" 2>/dev/null
    rm -rf "$tmp"
    rm -f /dev/shm/hipsim-*-"reset$$"-* # the shared simulated devices' segments
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
status=0

"$prog" "$mode" >"$tmp/native.out" 2>"$tmp/native.err"
native=$?

export GPUPRIO_BOARD_DIR="$tmp/boards" HIPSIM_SHARED="reset$$"
mkdir -m 700 "$GPUPRIO_BOARD_DIR"
# The neighbour bursts for longer than the program runs; the program starts once it is ready.
start_high LD_PRELOAD="$lib" GPUPRIO_PRIORITY=high "$prog" burst 60000 "$neighbour_device"
LD_PRELOAD="$lib" GPUPRIO_PRIORITY=low GPUPRIO_LOG=debug "$prog" "$mode" \
    >"$tmp/shim.out" 2>"$tmp/shim.err"
shimmed=$?
kill -9 "$high" 2>/dev/null
wait "$high" 2>/dev/null
high=
grep -E "hipsim|warn|error|Level|registered again|destroyed" "$tmp/shim.err" | sort | uniq -c

same_as_native "$tmp" "$native" "$shimmed" || status=1
if grep -q "hipsim: error" "$tmp/shim.err"; then
    echo "FAIL: gpuprio used what hipDeviceReset destroyed"
    status=1
fi
if grep -q "refused a gate" "$tmp/shim.err"; then
    echo "FAIL: a gate was refused"
    status=1
fi
if [ "$mode" = phases ] && ! grep -q "gates are registered again" "$tmp/shim.err"; then
    echo "FAIL: the board's gates were not registered again after a reset (no Level 2 there?)"
    status=1
fi
[ $status = 0 ] && echo "identical: $(wc -l <"$tmp/native.out") lines"
exit $status
