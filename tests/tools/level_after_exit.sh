#!/bin/sh
# level_after_exit.sh - a low-priority worker throttled at Level 2 (gates on the device, open) for
# a joined, idle high-priority one leaves Level 2 once the high worker exits cleanly, while it keeps running
# (its queue never idle: GPUPRIO_GRACE_US of 10 s, so no decision of its own at an activation
# does it): gpuprio top shows its queue at level 1, neither suspended nor throttled
# (docs/design.md, "Level 2: gates on the device"). The exiting process decides for those that
# stay; the one it let go must decide again for its own queues, since only it takes them off
# Level 2. It did not before 2026-11-30: its gates stayed open but went on every command, and its
# graph launches to their gated copies, until its queue went idle (never, here, while it ran).
#
#   level_after_exit.sh GPUPRIO TOOLS_WORKER HIP_SHIM
set -u
gpuprio=$1 worker=$2 shim=$3
. "$(dirname "$0")/expect.sh"
sandbox_boards levelexit
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

# The high worker first, in mode once: joined and idle (a server between requests), so the low
# queue is throttled, not suspended, and runs at Level 2 with its gates open, its queue never idle;
# nothing but being let go can take it off Level 2 then.
GPUPRIO_PRIORITY=high LD_PRELOAD=$shim "$worker" "$tmp/stop-high" 90 0 once >"$tmp/high.out" \
    2>"$tmp/high.err" &
highpid=$!
wait_for 30 ready "$tmp/high.out" || { echo "FAIL: the high worker never ran"; cat "$tmp/high.err"; exit 1; }
GPUPRIO_GRACE_US=10000000 GPUPRIO_PRIORITY=low LD_PRELOAD=$shim "$worker" "$tmp/stop" 90 \
    >"$tmp/low.out" 2>"$tmp/low.err" &
lowpid=$!
wait_for 30 ready "$tmp/low.out" || { echo "FAIL: the low worker never ran"; cat "$tmp/low.err"; exit 1; }
wait_for 30 at_level throttled 2
expect "the low queue throttled at Level 2 next to the idle high worker" "yes" \
    "$(at_level throttled 2 && echo yes || echo "no ($row)")"
touch "$tmp/stop-high"
wait "$highpid"
expect "the high worker's exit status" 0 $?
highpid=
# Within 5 s, half the low queue's grace: a process that left Level 2 only once its queue went
# idle takes the whole grace (10 s) or longer; one that decides when it is let go, its listener's
# next wake or look (20 ms while held).
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
