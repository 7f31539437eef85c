#!/bin/sh
# top_set.sh - `gpuprio top --once --json` lists a running process's queue with the right fields,
# and `gpuprio set` changes its priority (per stream and per process) through the board, as the
# process itself then reports; unknown processes and streams fail with status 1, bad priorities
# with 2, and an unreadable board is reported once and skipped.
#
#   top_set.sh GPUPRIO TOOLS_WORKER HIP_SHIM
#
# The worker runs under the shim on a simulated device shared through HIPSIM_SHARED (so it joins
# a board), with GPUPRIO_BOARD_DIR a private directory: nothing else is on its boards.
set -u
gpuprio=$1 worker=$2 shim=$3
tmp=$(mktemp -d)
name=tools-$$-$(date +%s%N)
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$tmp"
    rm -f "/dev/shm/hipsim-$(id -u)-$name-0"
}
trap cleanup EXIT
export GPUPRIO_BOARD_DIR=$tmp/boards
mkdir -m 700 "$GPUPRIO_BOARD_DIR"
unset GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_STREAM_PRIORITIES

. "$(dirname "$0")/expect.sh"
# A field of the JSON object on the line of the worker's pid (top prints one object a line).
field() { # FILE NAME
    grep "\"pid\": $pid," "$1" | sed -n "s/.*\"$2\": \\(\"[^\"]*\"\\|[^,}]*\\).*/\\1/p" | tr -d '"'
}
top_json() { # FILE: gpuprio top --once --json into FILE, stderr into FILE.err; checks status 0
    "$gpuprio" top --once --json >"$1" 2>"$1.err"
    rc=$?
    [ $rc = 0 ] || { echo "FAIL: top --once --json: status $rc: $(cat "$1.err")"; fails=$((fails + 1)); }
}

# An unreadable board (garbage of the wrong size) next to the real one: reported, skipped.
head -c 100 /dev/zero >"$GPUPRIO_BOARD_DIR/gpuprio-$(id -u)-garbage"
chmod 600 "$GPUPRIO_BOARD_DIR/gpuprio-$(id -u)-garbage"

HIPSIM_SHARED=$name GPUPRIO_PRIORITY=low LD_PRELOAD=$shim "$worker" "$tmp/stop" 60 \
    >"$tmp/worker.out" 2>"$tmp/worker.err" &
pid=$!

# Wait until top lists it.
i=0
while :; do
    top_json "$tmp/top.json"
    grep -q "\"pid\": $pid," "$tmp/top.json" && break
    i=$((i + 1))
    if [ $i -ge 100 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "FAIL: gpuprio top never listed pid $pid; last output:"
        cat "$tmp/top.json" "$tmp/top.json.err" "$tmp/worker.out" "$tmp/worker.err"
        exit 1
    fi
    sleep 0.1
done
# Again, now that it was there for both of top's samples (its rate is measured between them).
top_json "$tmp/top.json"
echo "top --once --json:"
cat "$tmp/top.json"
if command -v jq >/dev/null 2>&1; then
    expect "valid JSON (jq)" 1 "$(jq 'map(select(.pid == '"$pid"')) | length' "$tmp/top.json")"
elif command -v python3 >/dev/null 2>&1; then
    expect "valid JSON (python3)" 1 "$(python3 -c 'import json,sys; print(sum(1 for q in json.load(open(sys.argv[1])) if q["pid"] == int(sys.argv[2])))' "$tmp/top.json" "$pid")"
else
    echo "note: neither jq nor python3: JSON checked by pattern only"
fi
expect "one queue" 1 "$(grep -c "\"pid\": $pid," "$tmp/top.json")"
expect "command" tools_worker "$(field "$tmp/top.json" command)"
expect "priority (GPUPRIO_PRIORITY=low)" -10 "$(field "$tmp/top.json" priority)"
expect "device index" 0 "$(field "$tmp/top.json" device_index)"
device=$(field "$tmp/top.json" device)
[ -n "$device" ] || { echo "FAIL: no device key"; fails=$((fails + 1)); }
expect "board file" "$GPUPRIO_BOARD_DIR/gpuprio-$(id -u)-v2-$(printf %s "$device" | tr -c 'A-Za-z0-9._\n-' _)" \
    "$(field "$tmp/top.json" board)"
stream=$(field "$tmp/top.json" stream)
case $stream in 0x*[0-9a-f]) echo "ok: stream $stream" ;; *) echo "FAIL: stream '$stream'"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" state) in active | idle) echo "ok: state" ;; *) echo "FAIL: state"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" gate) in suspended | throttled | tracked | none) echo "ok: gate" ;; *) echo "FAIL: gate"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" in_flight) in [0-9]*) echo "ok: in_flight" ;; *) echo "FAIL: in_flight"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" submitted) in [1-9]*) echo "ok: submitted" ;; *) echo "FAIL: submitted"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" submitted_per_s) in [1-9]*) echo "ok: submitted_per_s" ;; *) echo "FAIL: submitted_per_s: $(field "$tmp/top.json" submitted_per_s)"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" held_ns) in [0-9]*) echo "ok: held_ns" ;; *) echo "FAIL: held_ns"; fails=$((fails + 1)) ;; esac
expect "the garbage board reported once" 1 "$(grep -c "gpuprio-$(id -u)-garbage.*skipped" "$tmp/top.json.err")"

# The table shows it too.
"$gpuprio" top --once >"$tmp/top.txt" 2>/dev/null
expect "table row" 1 "$(grep -c " $pid tools_worker " "$tmp/top.txt")"

# One stream's priority...
"$gpuprio" set "$pid" critical --stream "$stream"
expect "set --stream: status" 0 $?
top_json "$tmp/top2.json"
expect "priority after set --stream" 20 "$(field "$tmp/top2.json" priority)"
"$gpuprio" set "$pid" high --stream 0xdead 2>"$tmp/err"
expect "set --stream of an unknown stream: status" 1 $?
# ... then the process's.
"$gpuprio" set "$pid" high
expect "set: status" 0 $?
top_json "$tmp/top3.json"
expect "priority after set" 10 "$(field "$tmp/top3.json" priority)"
# Errors.
"$gpuprio" set 999999 high 2>"$tmp/err"
expect "set of an unknown process: status" 1 $?
grep -q "no process 999999" "$tmp/err" || { echo "FAIL: message: $(cat "$tmp/err")"; fails=$((fails + 1)); }
"$gpuprio" set "$pid" urgent 2>"$tmp/err"
expect "set of a bad priority: status" 2 $?
grep -q "accepted: idle, low, normal, high, critical" "$tmp/err" ||
    { echo "FAIL: message: $(cat "$tmp/err")"; fails=$((fails + 1)); }

# The process itself sees the priority it was given.
touch "$tmp/stop"
wait "$pid"
expect "worker status" 0 $?
pid=
expect "worker's own priority" "priority 10" "$(grep '^priority' "$tmp/worker.out")"
if [ -s "$tmp/worker.err" ]; then
    echo "worker's stderr:"
    cat "$tmp/worker.err"
fi

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
