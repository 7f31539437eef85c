#!/bin/sh
# graph_gates.sh CASE LIB PROG - gates inside graph launches (docs/design.md, "Gates inside
# graphs"): PROG (graph_gates.c) runs CASE alone without gpuprio, then under LIB
# (libgpuprio-cuda.so) at low priority with a device identity (a shared board under /dev/shm,
# direct gates: Level 2) and GPUPRIO_LOG=debug, next to PROG's high-priority neighbour (graph_gates
# high), which is joined and idle, and bursts once the low program's first gated launch cues it
# (GRAPH_GO). The test's GPUPRIO_GRAPH_GATE_US comes from the environment.
# Fails unless both runs print the same and exit 0 (the kernels ran in the same order with the same
# arguments, and gpuprio destroyed what it made: the fake counts executable graphs alive), the fake
# reported no misuse ("fake_cuda: error"), and:
#   GRAPH_SAYS=ERE    a line of the low program's stderr matches ERE (gpuprio's counts at exit);
#   GRAPH_HELD=1      a wait node held the rest of a graph while the gate was closed: the fake says
#                     "graph wait held N ms after K of M kernel nodes" with 0 < K < M;
#   GRAPH_HELD=0      no wait node held;
#   GRAPH_NO_HIGH=1   no neighbour (GRAPH_PRINT_CALLS=1 then compares the driver's graph calls);
#   GRAPH_HIGH_EXITS=1  the neighbour exits after its burst.
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
tmp=$(mktemp -d /dev/shm/gpuprio-graph-gates.XXXXXX) || exit 1
high= writer=
cleanup() {
    [ -z "$high" ] || kill -9 "$high" 2>/dev/null
    [ -z "$writer" ] || kill -9 "$writer" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
export GPUPRIO_BOARD_DIR="$tmp/boards" FAKE_CUDA_BUS_ID="graph$$"
mkdir -m 700 "$GPUPRIO_BOARD_DIR"
status=0

"$prog" "$case" >"$tmp/native.out" 2>"$tmp/native.err"
native=$?

if [ "${GRAPH_NO_HIGH:-0}" != 1 ]; then
    mkfifo "$tmp/ready" "$tmp/go" || exit 1
    LD_PRELOAD="$lib" GPUPRIO_PRIORITY=high "$prog" high "$tmp/go" \
        ${GRAPH_HIGH_EXITS:+exit} >"$tmp/ready" 2>"$tmp/high.err" &
    high=$!
    read -r ready <"$tmp/ready"
    if [ "$ready" != ready ]; then
        echo "FAIL: the high-priority neighbour did not start"
        cat "$tmp/high.err"
        exit 1
    fi
fi
env ${gate_us:+GPUPRIO_GRAPH_GATE_US=$gate_us} ${high:+GRAPH_GO=$tmp/go} LD_PRELOAD="$lib" \
    GPUPRIO_PRIORITY=low GPUPRIO_LOG=debug "$prog" "$case" >"$tmp/shim.out" 2>"$tmp/shim.err"
shimmed=$?
if [ -n "$high" ]; then
    # The neighbour reads a cue, bursts, then reads a line more before it exits: one never cued
    # (a case without the cue) gets both from here, and must exit 0. The writer, blocked in its
    # open once nobody reads, is killed for good (a trapped TERM waits for the open); a line
    # written as the reader closes fails, and the next one is tried.
    (trap '' PIPE; while :; do echo go >"$tmp/go"; done) 2>/dev/null &
    writer=$!
    if ! wait "$high"; then
        echo "FAIL: the high-priority neighbour failed"
        cat "$tmp/high.err"
        status=1
    fi
    high=
    kill -9 "$writer" 2>/dev/null
    writer=
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
if grep -q "fake_cuda: error" "$tmp/shim.err" "$tmp/native.err"; then
    echo "FAIL: the fake driver reported a misuse"
    status=1
fi
if [ -n "${GRAPH_SAYS:-}" ] && ! grep -Eq "$GRAPH_SAYS" "$tmp/shim.err"; then
    echo "FAIL: gpuprio did not say: $GRAPH_SAYS"
    status=1
fi
held=$(sed -n 's/^fake_cuda: graph wait held [0-9]* ms after \([0-9]*\) of \([0-9]*\) kernel nodes$/\1 \2/p' \
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
[ $status = 0 ] && echo "identical: $(wc -l <"$tmp/native.out") lines${held:+; held after (kernels done, of): $(echo $held)}"
exit $status
