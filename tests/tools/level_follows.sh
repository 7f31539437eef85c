#!/bin/sh
# level_follows.sh - a low-priority worker's level follows the throttle other processes set in its
# slot while its queue never goes idle (GPUPRIO_GRACE_US of 10 s, so no decision of its own at an
# activation does it, nor its watchdog: it is throttled, not held suspended), as gpuprio top shows
# it (docs/design.md, "Level 2: gates on the device"):
#   1. running alone (level 1), then a high-priority worker joins in mode once (one kernel, then
#      joined and idle, as a server between requests): the low queue is throttled at Level 2;
#   2. the high worker exits cleanly: the low queue is at level 1, neither suspended nor
#      throttled, while it still runs.
# The other process writes the decision into the low queue's slot; only its owner changes its
# level. Step 2 failed before 2026-11-30 (scheduler.c, note_request): the low queue kept Level 2
# (gates on every command, graph launches to their gated copies) until it went idle.
#
#   level_follows.sh GPUPRIO TOOLS_WORKER HIP_SHIM
set -u
gpuprio=$1 worker=$2 shim=$3
. "$(dirname "$0")/expect.sh"
sandbox_boards levelfollows
lowpid= highpid=
cleanup() { sandbox_cleanup $lowpid $highpid; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
unset GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_STREAM_PRIORITIES GPUPRIO_LOG GPUPRIO_LEVEL
export HIPSIM_SHARED=$name
ready() { grep -q '^ready' "$1"; }

# The low worker's running queue as gpuprio top shows it: "GATE LEVEL" (gate: suspended,
# throttled, running...), or nothing.
low_row() {
    "$gpuprio" top --once --json >"$tmp/top.json" 2>"$tmp/top.err"
    grep "\"pid\": $lowpid," "$tmp/top.json" |
        sed -n 's/.*"gate": "\([a-z]*\)".*"level": \([0-9]*\).*/\1 \2/p' | head -1
}
at_level() { # GATE-REGEX LEVEL
    row=$(low_row)
    echo "$row" | grep -Eq "^($1) $2\$"
}

GPUPRIO_GRACE_US=10000000 GPUPRIO_PRIORITY=low LD_PRELOAD=$shim "$worker" "$tmp/stop" 90 \
    >"$tmp/low.out" 2>"$tmp/low.err" &
lowpid=$!
wait_for 30 ready "$tmp/low.out" || { echo "FAIL: the low worker never ran"; cat "$tmp/low.err"; exit 1; }
wait_for 30 at_level 'none|tracked' 1
expect "the low queue at level 1, alone" yes "$(at_level 'none|tracked' 1 && echo yes || echo "no ($row)")"
GPUPRIO_PRIORITY=high LD_PRELOAD=$shim "$worker" "$tmp/stop-high" 90 0 once >"$tmp/high.out" \
    2>"$tmp/high.err" &
highpid=$!
wait_for 30 ready "$tmp/high.out" || { echo "FAIL: the high worker never ran"; cat "$tmp/high.err"; exit 1; }
# Within 5 s, half the low queue's grace: a process that changed its level only once its queue
# went idle would not have while it ran.
wait_for 5 at_level throttled 2
expect "the low queue throttled at Level 2 within 5 s of the high worker's join" yes \
    "$(at_level throttled 2 && echo yes || echo "no ($row)")"
touch "$tmp/stop-high"
wait "$highpid"
expect "the high worker's exit status" 0 $?
highpid=
# Likewise within 5 s.
wait_for 5 at_level 'none|tracked' 1
expect "the low queue off Level 2 within 5 s of the high worker's exit" "yes" \
    "$(at_level 'none|tracked' 1 && echo yes || echo "no ($row)")"
expect "the low worker still running" yes "$(kill -0 "$lowpid" 2>/dev/null && echo yes)"
touch "$tmp/stop"
wait "$lowpid"
expect "the low worker's exit status" 0 $?
lowpid=
expect "warnings" 0 "$(cat "$tmp/low.err" "$tmp/high.err" | grep -c 'gpuprio: warn')"
if [ "$fails" -gt 0 ]; then
    echo "the last top:"
    cat "$tmp/top.json" "$tmp/top.err" "$tmp/low.err" "$tmp/high.err"
fi
[ "$fails" -eq 0 ]
