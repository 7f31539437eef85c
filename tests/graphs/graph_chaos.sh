#!/bin/sh
# graph_chaos.sh RUNTIME CASE LIB PROG - neighbours that die, stop and exit around gated graphs
# (docs/design.md, "Gates inside graphs"; docs/testing.md, cuda.graph_chaos_* and
# hip.graph_chaos_*), for either runtime, RUNTIME:
#   cuda  PROG is tests/cuda/graph_gates.c over the fake driver (fake_cuda.c), LIB
#         libgpuprio-cuda.so; the processes share a device, and so a board, by its bus id
#         (FAKE_CUDA_BUS_ID); the fake's wait nodes always say when they start holding and when
#         they open;
#   hip   PROG is tests/hipgraph/graph_gates.c over the simulated HIP runtime (tests/sim), LIB
#         libgpuprio-hip.so; the processes share a simulated device (HIPSIM_SHARED), whose graph
#         waits say when they start holding and when they open with HIPSIM_GRAPH_SAY=1; the
#         neighbour and the low program also talk through GRAPH_ACK and GRAPH_STOP (below).
# What differs between the two is set in one block in graph_runtime.sh, sourced first, which also
# makes the sandbox: a directory on /dev/shm with the board's in it, the device shared under a new
# name. PROG replays a graph of 40 kernels at low priority under LIB (GPUPRIO_GRAPH_GATE_US=10000)
# next to a high-priority neighbour (graph_gates high) on that board (direct gates: Level 2). The
# waits' times are the wall clock's, as `date +%s%3N` reads it. The bounds derive from
# GPUPRIO_WATCHDOG_MS, set here per case; none measures the machine's speed.
#
#   kill_high        the neighbour (bursting until told) is SIGKILLed while the low program's graph
#                    is held at a wait node: that wait opens within 20 + 230 ms of the kill (the
#                    board's reclaim of the dead's slots, looked for every 20 ms, and chaos.c's
#                    margin: its HELD_BOUND_MS less the watchdog), WATCHDOG_MS 2000, so that the
#                    stall watch, which would open it after WATCHDOG_MS, cannot be what did;
#   stop_high        the neighbour is SIGSTOPped while the graph is held, for 5 * WATCHDOG_MS: the
#                    wait opens within WATCHDOG_MS + 20 + 230 ms of the stop (the stall watch, its
#                    20-ms look, and chaos.c's margin) and before SIGCONT; after SIGCONT the low
#                    program is held again (the neighbour's priority works again): a later wait
#                    holds, or a launch is held on the host for longer than that bound, as a
#                    suspended queue's next command is, WATCHDOG_MS 300;
#   kill_low_held    the low program is SIGKILLed while its graph is held at a wait node,
#   kill_low_opened  ... or just after its wait opened (the neighbour's burst ended; its gated
#                    launches in flight): the neighbour then exits 0;
#   thread_exit      the thread that launched the gated graph 4 times exits with them in flight,
#                    once a wait node holds them (the neighbour's burst: 60 ms on CUDA; on HIP
#                    until the low program says through GRAPH_STOP that a wait node held, 200 ms
#                    without it), then another thread launches it (on HIP after an event behind
#                    them: HIP orders launches of one executable graph on two streams by nothing
#                    else);
#   stream_gone      the same, the first thread's stream destroyed with them in flight (the fake's
#                    cuStreamDestroy returning at once, as the driver's, with
#                    FAKE_CUDA_STREAM_DESTROY_RETURNS=1; the simulator's hipStreamDestroy returns
#                    at once, as clr's): no wait holds longer than WATCHDOG_MS + 20 + 230 ms
#                    (WATCHDOG_MS 300).
# Every case: the low program (but where killed) prints what it prints without gpuprio and exits
# 0, having gated launches (gpuprio's counts at exit); the neighbour (but where killed) exits 0;
# the fake reports no misuse ("fake_cuda: error", "hipsim: error"); nothing hangs (60 s); and once
# everyone has exited, the board directory is empty (no slot and no file left).
set -u
. "$(dirname "$0")/graph_runtime.sh"
graph_sandbox chaos
HANG_S=60
low_prog=replay high_mode=hold watchdog=300
case $case in
kill_high) watchdog=2000 ;;
stop_high | kill_low_held | kill_low_opened) ;;
thread_exit | stream_gone)
    low_prog=$case high_mode=
    [ -z "$gone_env" ] || export "$gone_env" ;;
*)
    echo "graph_chaos.sh: unknown case $case" >&2
    exit 2 ;;
esac
reclaim_bound=$((20 + 230)) held_bound=$((watchdog + 20 + 230))
status=0
fail() {
    echo "FAIL: $*"
    status=1
}
now_ms() {
    date +%s%3N
}
# The times at which the low program's waits started holding, or opened.
waits() { # holding|opened
    sed -n "s/^$fake: graph wait $1 at \([0-9]*\) ms .*/\1/p" "$tmp/low.err"
}
holding() {
    [ "$(waits holding | wc -l)" -gt "$(waits opened | wc -l)" ]
}
opened_all() {
    [ "$(waits holding | wc -l)" = "$(waits opened | wc -l)" ]
}
gone() {
    ! kill -0 "$1" 2>/dev/null
}
# The first time in LIST (one a line) at or after T, or nothing.
first_after() { # T LIST
    echo "$2" | awk -v t="$1" '$1 >= t { print; exit }'
}
# One line to the bursting neighbour, which holds the FIFO open while it bursts.
end_burst() {
    timeout 10 sh -c 'echo go >"$1"' sh "$tmp/go" || fail "the neighbour took no line to end its burst"
}
# Every line the neighbour will read from now on (a writer killed for good afterwards).
lines_for_high() {
    (trap '' PIPE; while :; do echo go >"$tmp/go"; done) 2>/dev/null &
    writer=$!
}
# Waits for the process whose pid variable VAR (high or low) holds, at most HANG_S: its status in
# $rc and VAR emptied, or rc "hung" and VAR kept, so that the cleanup kills it.
reap() { # VAR
    eval "_reap_pid=\$$1"
    rc=hung
    if wait_for $HANG_S gone "$_reap_pid"; then
        wait "$_reap_pid"
        rc=$?
        eval "$1="
    fi
}

export GPUPRIO_GRAPH_GATE_US=10000 GPUPRIO_WATCHDOG_MS=$watchdog
case $case in
kill_low_*) ;;
*)
    "$prog" "$low_prog" >"$tmp/native.out" 2>"$tmp/native.err"
    native=$? ;;
esac

mkfifo "$tmp/go" || exit 1
# A long grace keeps the bursting neighbour active between its bursts however slow its host code
# is (a sanitizer), so that the low program stays held until this script acts.
if [ -n "$handshake" ]; then
    mkfifo "$tmp/ack" "$tmp/stop" || exit 1
    # The neighbour says through GRAPH_ACK when it bursts: the low program holds the launch it
    # cued it after until then (graph_gates.c, hold_for_cue), so that a wait node of that launch
    # holds however late either woke.
    export GRAPH_ACK="$tmp/ack"
    # Without hold, the neighbour bursts until the low program says through GRAPH_STOP that a
    # wait node held (graph_gates.c, burst_until_stopped).
    [ -n "$high_mode" ] || export GRAPH_STOP="$tmp/stop"
fi
start_high LD_PRELOAD="$lib" GPUPRIO_PRIORITY=high GPUPRIO_GRACE_US=50000 "$prog" high "$tmp/go" \
    $high_mode
GRAPH_GO="$tmp/go" LD_PRELOAD="$lib" GPUPRIO_PRIORITY=low GPUPRIO_LOG=info "$prog" "$low_prog" \
    >"$tmp/shim.out" 2>"$tmp/low.err" &
low=$!

# Without a wait node held, what the neighbour's death or stop opens is not measured (the case has
# failed already).
measured=yes
if [ -n "$high_mode" ]; then
    wait_for $HANG_S holding || { fail "no wait node held the low program's graph"; measured=; }
fi
case $case in
kill_high)
    at=$(now_ms)
    kill -9 "$high"
    reap high
    [ "$rc" = 137 ] || fail "the killed neighbour ended with $rc"
    reap low
    shimmed=$rc
    opened=$(first_after "$at" "$(waits opened)")
    if [ -z "$measured" ]; then
        :
    elif [ -z "$opened" ] || [ $((opened - at)) -gt $reclaim_bound ]; then
        fail "the wait held at the kill opened $([ -n "$opened" ] && echo "$((opened - at)) ms after it" || echo never) (bound $reclaim_bound ms: the dead's slots are reclaimed; watchdog $watchdog ms)"
    else
        echo "the wait held at the kill opened $((opened - at)) ms after it (bound $reclaim_bound ms)"
    fi ;;
stop_high)
    stop_ms=$((5 * watchdog))
    at=$(now_ms)
    kill -STOP "$high"
    sleep "$((stop_ms / 1000)).$(printf %03d $((stop_ms % 1000)))"
    cont=$(now_ms)
    kill -CONT "$high"
    opened=$(first_after "$at" "$(waits opened)")
    if [ -z "$measured" ]; then
        :
    elif [ -z "$opened" ] || [ "$opened" -ge "$cont" ] || [ $((opened - at)) -gt $held_bound ]; then
        fail "the wait held at the stop opened $([ -n "$opened" ] && echo "$((opened - at)) ms after it" || echo "not before SIGCONT") (stopped for $((cont - at)) ms; bound $held_bound ms: the stall watch)"
    else
        echo "the wait held at the stop opened $((opened - at)) ms after it (bound $held_bound ms; stopped for $((cont - at)) ms)"
    fi
    # Held again: at a wait node, or on the host (its next launch suspended), where a launch
    # call made after SIGCONT has not returned for longer than the stall watch's bound.
    held_on_host() {
        last=$(sed -n 's/^graph_gates: launch \([0-9]*\) \(called\|returned\) at \([0-9]*\) ms$/\1 \2 \3/p' \
            "$tmp/low.err" | tail -n 1)
        set -- $last
        [ "${2:-}" = called ] || return 1
        from=$(($3 > cont ? $3 : cont))
        [ $(($(now_ms) - from)) -gt $held_bound ] && host="launch $1 held on the host"
    }
    again_after_cont() {
        again=$(first_after "$cont" "$(waits holding)")
        [ -n "$again" ] || held_on_host || gone "$low"
    }
    host=
    wait_for $HANG_S again_after_cont
    if [ -n "$again" ]; then
        echo "after SIGCONT, a wait held again $((again - cont)) ms later"
    elif [ -n "$host" ]; then
        echo "after SIGCONT, $host for over $held_bound ms"
    else
        fail "after SIGCONT, neither a wait node nor the host held the low program again: the neighbour's priority did not work again"
    fi
    end_burst
    reap low
    shimmed=$rc
    lines_for_high
    reap high
    [ "$rc" = 0 ] || fail "the neighbour ended with $rc" ;;
kill_low_*)
    if [ "$case" = kill_low_opened ]; then
        end_burst
        wait_for $HANG_S opened_all || fail "the wait did not open once the burst ended"
    fi
    kill -9 "$low"
    reap low
    [ "$rc" = 137 ] || fail "the killed low program ended with $rc"
    [ "$case" = kill_low_opened ] || end_burst
    lines_for_high
    reap high
    [ "$rc" = 0 ] || fail "the neighbour ended with $rc" ;;
thread_exit | stream_gone)
    reap low
    shimmed=$rc
    lines_for_high
    reap high
    [ "$rc" = 0 ] || fail "the neighbour ended with $rc"
    grep -q '^graph_gates: the first thread goes on while a wait node holds its launches$' \
        "$tmp/low.err" || fail "no wait node held the first thread's launches"
    long=$(sed -n "s/^$fake: graph wait held \([0-9]*\) ms .*/\1/p" "$tmp/low.err" |
        awk -v b=$held_bound '$1 > b')
    [ -z "$long" ] || fail "a wait held longer than $held_bound ms: $(echo $long) ms" ;;
esac
[ -z "$writer" ] || kill -9 "$writer" 2>/dev/null
writer=
grep -v "^$fake: graph wait \(holding\|opened\)\|^graph_gates: launch" "$tmp/low.err"

case $case in
kill_low_*) ;;
*)
    same_as_native "$tmp" "$native" "$shimmed" || status=1
    grep -Eq '^gpuprio: info: graph launches: [1-9][0-9]* gated' "$tmp/low.err" ||
        fail "gpuprio gated no launch" ;;
esac
if grep -qs "$fake: error" "$tmp/native.err" "$tmp/low.err" "$tmp/high.err"; then
    fail "$fake_is reported a misuse"
fi
left=$(ls -A "$GPUPRIO_BOARD_DIR")
[ -z "$left" ] || fail "left in the board directory once everyone exited: $left"
if [ $status != 0 ]; then
    echo "the neighbour's stderr:"
    cat "$tmp/high.err"
else
    echo "ok: $case"
fi
exit $status
