#!/bin/sh
# graph_gates.sh CASE LIB PROG - gates inside HIP graph launches (docs/design.md, "Gates inside
# graphs"): PROG (graph_gates.c) runs CASE alone without gpuprio, then under LIB
# (libgpuprio-hip.so) at low priority on a simulated device it shares with PROG's high-priority
# neighbour (graph_gates high; HIPSIM_SHARED, so both have its bus id and one board under
# GPUPRIO_BOARD_DIR, on /dev/shm: direct gates, Level 2), with GPUPRIO_LOG=debug. The neighbour is
# joined and idle, and bursts once the low program's first launch after the learning one cues it
# (GRAPH_GO), saying so through GRAPH_ACK. The test's GPUPRIO_GRAPH_GATE_US comes from the
# environment (on HIP the option is off unless it is set), and so do the simulator's settings
# (HIPSIM_*). The simulator says when a graph's wait held (HIPSIM_GRAPH_SAY=1).
# Fails unless both runs print the same and exit 0 (the kernels ran in the same order with the same
# arguments, and gpuprio destroyed what it made: the program prints the executable graphs alive),
# the simulator reported no misuse ("hipsim: error"), and:
#   GRAPH_SAYS=ERE      a line of the low program's stderr matches ERE (gpuprio's counts at exit);
#   GRAPH_NOT_SAYS=ERE  no line of it does;
#   GRAPH_HELD=1        a wait node held the rest of a graph while the gate was closed: the
#                       simulator says "graph wait held N ms after K of M kernel nodes", 0 < K < M;
#   GRAPH_HELD=0        no wait node held;
#   GRAPH_RETARGETED=1  the run under gpuprio made more hipGraphExecBatchMemOpNodeSetParams calls
#                       than the native run (gpuprio moved its wait nodes);
#   GRAPH_NO_HIGH=1     no neighbour;
#   GRAPH_HIGH_EXITS=1  the neighbour exits after its burst.
# GRAPH_PRINT_CALLS and GRAPH_INSTANTIATE reach the program (graph_gates.c says what they do).
set -u
if [ $# != 3 ]; then
    echo "usage: graph_gates.sh CASE LIB PROG" >&2
    exit 2
fi
case=$1 lib=$2 prog=$3
gate_us=${GPUPRIO_GRAPH_GATE_US-}
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
tmp=$(mktemp -d /dev/shm/gpuprio-hipgraph.XXXXXX) || exit 1
name=hipgraph$$
high= writer= stopper=
cleanup() {
    [ -z "$high" ] || kill -9 "$high" 2>/dev/null
    [ -z "$writer" ] || kill -9 "$writer" 2>/dev/null
    [ -z "$stopper" ] || kill -9 "$stopper" 2>/dev/null
    rm -rf "$tmp"
    rm -f "/dev/shm/hipsim-$(id -u)-$name-"*
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
export GPUPRIO_BOARD_DIR="$tmp/boards" HIPSIM_SHARED="$name" HIPSIM_GRAPH_SAY=1
mkdir -m 700 "$GPUPRIO_BOARD_DIR"
status=0

"$prog" "$case" >"$tmp/native.out" 2>"$tmp/native.err"
native=$?

if [ "${GRAPH_NO_HIGH:-0}" != 1 ]; then
    mkfifo "$tmp/ready" "$tmp/go" "$tmp/ack" "$tmp/stop" || exit 1
    GRAPH_ACK="$tmp/ack" GRAPH_STOP="$tmp/stop" LD_PRELOAD="$lib" GPUPRIO_PRIORITY=high \
        "$prog" high "$tmp/go" \
        ${GRAPH_HIGH_EXITS:+exit} >"$tmp/ready" 2>"$tmp/high.err" &
    high=$!
    read -r ready <"$tmp/ready"
    if [ "$ready" != ready ]; then
        echo "FAIL: the high-priority neighbour did not start"
        cat "$tmp/high.err"
        exit 1
    fi
fi
env ${gate_us:+GPUPRIO_GRAPH_GATE_US=$gate_us} \
    ${high:+GRAPH_GO=$tmp/go GRAPH_ACK=$tmp/ack GRAPH_STOP=$tmp/stop} \
    LD_PRELOAD="$lib" GPUPRIO_PRIORITY=low GPUPRIO_LOG=debug "$prog" "$case" \
    >"$tmp/shim.out" 2>"$tmp/shim.err"
shimmed=$?
if [ -n "$high" ]; then
    # The neighbour reads a cue, bursts until told to stop (GRAPH_STOP), then reads a line more
    # before it exits: one never cued (a case without the cue) gets all three from here, and must
    # exit 0. The writers, blocked in their opens once nobody reads, are killed for good (a
    # trapped TERM waits for the open); a line written as the reader closes fails, and the next
    # one is tried.
    (trap '' PIPE; while :; do echo go >"$tmp/go"; done) 2>/dev/null &
    writer=$!
    (trap '' PIPE; while :; do echo stop >"$tmp/stop"; done) 2>/dev/null &
    stopper=$!
    if ! wait "$high"; then
        echo "FAIL: the high-priority neighbour failed"
        cat "$tmp/high.err"
        status=1
    fi
    high=
    kill -9 "$writer" "$stopper" 2>/dev/null
    writer= stopper=
fi
grep -v '^gpuprio: debug: a call on queue' "$tmp/shim.err"

if ! diff -u "$tmp/native.out" "$tmp/shim.out"; then
    echo "FAIL: stdout differs under gpuprio"
    status=1
fi
if [ "$native" != 0 ] || [ "$shimmed" != 0 ]; then
    echo "FAIL: exit status $native without gpuprio, $shimmed with it (expected 0 and 0)"
    status=1
fi
if grep -q "hipsim: error" "$tmp/shim.err" "$tmp/native.err"; then
    echo "FAIL: the simulator reported a misuse"
    status=1
fi
if [ -n "${GRAPH_SAYS:-}" ] && ! grep -Eq "$GRAPH_SAYS" "$tmp/shim.err"; then
    echo "FAIL: gpuprio did not say: $GRAPH_SAYS"
    status=1
fi
if [ -n "${GRAPH_NOT_SAYS:-}" ] && grep -Eq "$GRAPH_NOT_SAYS" "$tmp/shim.err"; then
    echo "FAIL: gpuprio said: $(grep -E "$GRAPH_NOT_SAYS" "$tmp/shim.err" | head -n 1)"
    status=1
fi
held=$(sed -n 's/^hipsim: graph wait held [0-9]* ms after \([0-9]*\) of \([0-9]*\) kernel nodes$/\1 \2/p' \
    "$tmp/shim.err")
case "${GRAPH_HELD:-}" in
1)
    inside=$(echo "$held" | awk '$1 > 0 && $1 < $2 { n++ } END { print n + 0 }')
    if [ "$inside" = 0 ]; then
        echo "FAIL: no wait node held a graph between its kernels"
        status=1
    fi ;;
0)
    if [ -n "$held" ]; then
        echo "FAIL: a wait node held: $held"
        status=1
    fi ;;
esac
if [ "${GRAPH_RETARGETED:-0}" = 1 ]; then
    sets() {
        sed -n 's/^graph_gates: \([0-9]*\) hipGraphExecBatchMemOpNodeSetParams calls$/\1/p' "$1"
    }
    native_sets=$(sets "$tmp/native.err") shim_sets=$(sets "$tmp/shim.err")
    if [ -z "$native_sets" ] || [ -z "$shim_sets" ] || [ "$shim_sets" -le "$native_sets" ]; then
        echo "FAIL: gpuprio moved no wait node (hipGraphExecBatchMemOpNodeSetParams: ${native_sets:-?} calls without gpuprio, ${shim_sets:-?} with it)"
        status=1
    fi
fi
[ $status = 0 ] && echo "identical: $(wc -l <"$tmp/native.out") lines${held:+; held after (kernels done, of): $(echo $held)}"
exit $status
