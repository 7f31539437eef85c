#!/bin/sh
# gate_watch.sh - bench/gpu/gate_watch (the co-location benchmark's record of the boards) sees
# what the boards say: a low-priority worker running on a shared simulated device, then a
# high-priority one; the record must show the high worker's queue active, the low one's queue
# suspended, then (Level 2) its gate closed, and once the high worker is gone the low queue
# resumed and its gate open again, each line with its owner's pid, in time order. (A new queue's
# slot is published after its first decision, so the low queue's suspension may come first.)
#
#   gate_watch.sh GATE_WATCH TOOLS_WORKER HIP_SHIM
set -u
watch=$1 worker=$2 shim=$3
. "$(dirname "$0")/expect.sh"
sandbox_boards gatewatch
lowpid= highpid= watchpid=
cleanup() { sandbox_cleanup $lowpid $highpid $watchpid; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
export HIPSIM_SHARED=$name GPUPRIO_LEVEL=2
unset GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_STREAM_PRIORITIES
ready() { grep -q '^ready' "$1"; }

GPUPRIO_PRIORITY=low LD_PRELOAD=$shim "$worker" "$tmp/stop" 60 >"$tmp/low.out" 2>"$tmp/low.err" &
lowpid=$!
wait_for 30 ready "$tmp/low.out" || { echo "FAIL: the low worker never ran"; cat "$tmp/low.err"; exit 1; }
"$watch" "$tmp/stop-watch" "$tmp/gates.txt" 2>"$tmp/watch.err" &
watchpid=$!
# The watcher shows the low queue's slot once it has found the board.
wait_for 30 grep -q " $lowpid [0-9]* gate " "$tmp/gates.txt" ||
    { echo "FAIL: gate_watch never showed the low queue"; cat "$tmp/gates.txt" "$tmp/watch.err"; exit 1; }
GPUPRIO_PRIORITY=high LD_PRELOAD=$shim "$worker" "$tmp/stop-high" 60 >"$tmp/high.out" \
    2>"$tmp/high.err" &
highpid=$!
high=$highpid low=$lowpid
# The low process closes its gate itself the first time (it was pinned open while nothing
# ranked above it); later decisions close it directly.
wait_for 30 grep -q " $lowpid [0-9]* gate 0" "$tmp/gates.txt"
touch "$tmp/stop-high"
wait "$highpid"
highpid=
wait_for 30 grep -q " $lowpid [0-9]* suspended 0" "$tmp/gates.txt"
touch "$tmp/stop-watch"
wait "$watchpid"
expect "gate_watch's exit status" 0 $?
watchpid=
touch "$tmp/stop"
wait "$lowpid"
lowpid=

# The first line at which an event happened after line AFTER, or 0.
at() { # PID WHAT VALUES(regex) [AFTER-LINE]
    awk -v p="$1" -v w="$2" -v v="^($3)$" -v after="${4:-0}" \
        'NR > after && $2 == p && $4 == w && $5 ~ v { print NR; exit }' "$tmp/gates.txt" |
        grep . || echo 0
}
yes_if() { [ "$1" -gt 0 ] && echo yes; }
active=$(at "$high" active 1)
suspended=$(at "$low" suspended 1)
closed=$(at "$low" gate 0 "$suspended")
resumed=$(at "$low" suspended 0 "$closed")
opened=$(at "$low" gate "1|2" "$closed")
expect "the high queue turned active" yes "$(yes_if "$active")"
expect "the low queue was suspended" yes "$(yes_if "$suspended")"
expect "then its gate closed" yes "$(yes_if "$closed")"
expect "then it was resumed" yes "$(yes_if "$resumed")"
expect "and its gate opened" yes "$(yes_if "$opened")"
expect "times in order" yes "$(awk 'NR > 1 && $1 < t { bad = 1 } { t = $1 } END { print bad ? "no" : "yes" }' "$tmp/gates.txt")"
if [ "$fails" -gt 0 ]; then
    echo "the record:"
    cat "$tmp/gates.txt" "$tmp/watch.err"
fi
[ "$fails" -eq 0 ]
