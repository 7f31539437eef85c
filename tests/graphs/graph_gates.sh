#!/bin/sh
# graph_gates.sh RUNTIME CASE LIB PROG - gates inside graph launches (docs/design.md, "Gates inside
# graphs"), for either runtime, RUNTIME:
#   cuda  PROG is tests/cuda/graph_gates.c over the fake driver (fake_cuda.c), LIB
#         libgpuprio-cuda.so; a device identity (FAKE_CUDA_BUS_ID) gives both processes one board;
#         the fake says when a graph's wait held;
#   hip   PROG is tests/hipgraph/graph_gates.c over the simulated HIP runtime (tests/sim), LIB
#         libgpuprio-hip.so; the processes share a simulated device (HIPSIM_SHARED, so both have
#         its bus id and one board); the simulator says when a graph's wait held
#         (HIPSIM_GRAPH_SAY=1), and the simulator's other settings (HIPSIM_*) come from the
#         environment.
# What differs between the two is set in one block in graph_runtime.sh, sourced first, which also
# makes the sandbox: a directory on /dev/shm with the board's in it (GPUPRIO_BOARD_DIR), the device
# shared under a new name. PROG runs CASE alone without gpuprio, then under LIB at low priority
# next to PROG's high-priority neighbour (graph_gates high), on that board (direct gates, Level 2),
# with GPUPRIO_LOG=debug. The neighbour is joined and idle, and bursts once the low program's first
# launch after the learning one (its first gated launch) cues it (GRAPH_GO); on HIP it says so
# through GRAPH_ACK, and bursts until told to stop through GRAPH_STOP. The test's
# GPUPRIO_GRAPH_GATE_US comes from the environment (on CUDA the option is on by default; on HIP it
# is off unless it is set).
# Fails unless both runs print the same and exit 0 (the kernels ran in the same order with the same
# arguments, and gpuprio destroyed what it made: the program prints the executable graphs alive,
# as the fake counts them), the fake reported no misuse ("fake_cuda: error", "hipsim: error"), and:
#   GRAPH_SAYS=ERE      a line of the low program's stderr matches ERE (gpuprio's counts at exit);
#   GRAPH_NOT_SAYS=ERE  no line of it does;
#   GRAPH_HELD=1        a wait node held the rest of a graph while the gate was closed: the fake
#                       says "graph wait held N ms after K of M kernel nodes", 0 < K < M;
#   GRAPH_HELD=0        no wait node held;
#   GRAPH_RETARGETED=1  (HIP) the run under gpuprio made more hipGraphExecBatchMemOpNodeSetParams
#                       calls than the native run (gpuprio moved its wait nodes);
#   GRAPH_NO_HIGH=1     no neighbour (on CUDA, GRAPH_PRINT_CALLS=1 then compares the driver's graph
#                       calls);
#   GRAPH_HIGH_EXITS=1  the neighbour exits after its burst.
# GRAPH_PRINT_CALLS and GRAPH_INSTANTIATE reach the program (graph_gates.c says what they do).
set -u
gate_us=${GPUPRIO_GRAPH_GATE_US-}
. "$(dirname "$0")/graph_runtime.sh"
graph_sandbox gates
status=0

"$prog" "$case" >"$tmp/native.out" 2>"$tmp/native.err"
native=$?

talk=
[ -z "$handshake" ] || talk="GRAPH_ACK=$tmp/ack GRAPH_STOP=$tmp/stop"
if [ "${GRAPH_NO_HIGH:-0}" != 1 ]; then
    mkfifo "$tmp/go" ${handshake:+"$tmp/ack" "$tmp/stop"} || exit 1
    start_high $talk LD_PRELOAD="$lib" GPUPRIO_PRIORITY=high "$prog" high "$tmp/go" \
        ${GRAPH_HIGH_EXITS:+exit}
fi
env ${gate_us:+GPUPRIO_GRAPH_GATE_US=$gate_us} ${high:+GRAPH_GO=$tmp/go $talk} \
    LD_PRELOAD="$lib" GPUPRIO_PRIORITY=low GPUPRIO_LOG=debug "$prog" "$case" \
    >"$tmp/shim.out" 2>"$tmp/shim.err"
shimmed=$?
if [ -n "$high" ]; then
    # The neighbour reads a cue, bursts (on HIP until told to stop, through GRAPH_STOP), then reads
    # a line more before it exits: one never cued (a case without the cue) gets them all from here,
    # and must exit 0. The writers, blocked in their opens once nobody reads, are killed for good
    # (a trapped TERM waits for the open); a line written as the reader closes fails, and the next
    # one is tried.
    (trap '' PIPE; while :; do echo go >"$tmp/go"; done) 2>/dev/null &
    writer=$!
    if [ -n "$handshake" ]; then
        (trap '' PIPE; while :; do echo stop >"$tmp/stop"; done) 2>/dev/null &
        stopper=$!
    fi
    if ! wait "$high"; then
        echo "FAIL: the high-priority neighbour failed"
        cat "$tmp/high.err"
        status=1
    fi
    high=
    kill -9 $writer $stopper 2>/dev/null
    writer= stopper=
fi
grep -v '^gpuprio: debug: a call on queue' "$tmp/shim.err"

same_as_native "$tmp" "$native" "$shimmed" || status=1
if grep -q "$fake: error" "$tmp/shim.err" "$tmp/native.err"; then
    echo "FAIL: $fake_is reported a misuse"
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
held=$(sed -n "s/^$fake: graph wait held [0-9]* ms after \([0-9]*\) of \([0-9]*\) kernel nodes\$/\1 \2/p" \
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
        sed -n "s/^graph_gates: \([0-9]*\) $retargets calls\$/\1/p" "$1"
    }
    native_sets=$(sets "$tmp/native.err") shim_sets=$(sets "$tmp/shim.err")
    if [ -z "$retargets" ]; then
        echo "FAIL: GRAPH_RETARGETED: the $runtime program counts no moves of wait nodes"
        status=1
    elif [ -z "$native_sets" ] || [ -z "$shim_sets" ] || [ "$shim_sets" -le "$native_sets" ]; then
        echo "FAIL: gpuprio moved no wait node ($retargets: ${native_sets:-?} calls without gpuprio, ${shim_sets:-?} with it)"
        status=1
    fi
fi
[ $status = 0 ] && echo "identical: $(wc -l <"$tmp/native.out") lines${held:+; held after (kernels done, of): $(echo $held)}"
exit $status
