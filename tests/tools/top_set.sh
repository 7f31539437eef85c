#!/bin/sh
# top_set.sh - `gpuprio top --once --json` lists a running process's queue with the right fields,
# and `gpuprio set` changes its priority (per stream and per process) through the board, as the
# process itself then reports; unknown processes and streams fail with status 1, bad priorities
# with 2, and an unreadable board is reported once and skipped.
#
# CU masks: the worker runs low with GPUPRIO_CU_RESERVE=2 on a device of 8 CUs, so its stream is
# confined to 6 (cu_mask "reserved", "6/8*" in the table); a worker of normal priority without a
# reservation shows its created stream on every CU ("all") and its null stream as one that
# cannot be masked ("unmaskable", "null").
#
# Unused queues (streams created that never ran, which hold no slot): a worker with 20 of them
# and one running stream shows one queue row and 20 unused, in the processes line of
# `top --once` and in `--json`; `--all` adds a row (an object) with the count; `gpuprio set`
# gives them the priority too. A worker none of whose streams ran is on the board through its
# record only: counted, shown by --all, reached by `gpuprio set`; its record is freed when it
# exits, reclaimed by the running worker when it is killed, and reclaimed by its own new image
# when it execs itself. The last worker to leave removes the board, and top then shows nothing
# (status 0: under UBSan it once handed qsort a null pointer in a directory without boards).
#
#   top_set.sh GPUPRIO TOOLS_WORKER HIP_SHIM
#
# The workers run under the shim on a simulated device shared through HIPSIM_SHARED (so they
# join a board), with GPUPRIO_BOARD_DIR a private directory: nothing else is on their boards.
set -u
gpuprio=$1 worker=$2 shim=$3
. "$(dirname "$0")/expect.sh"
sandbox_boards tools
pid= pid2= pid3= pid4= pid5=
cleanup() { sandbox_cleanup $pid $pid2 $pid3 $pid4 $pid5; }
trap cleanup EXIT
unset GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_STREAM_PRIORITIES

# A field of the JSON object on the line of the worker's pid (top prints one object a line).
field() { # FILE NAME
    grep "\"pid\": $pid," "$1" | sed -n "s/.*\"$2\": \\(\"[^\"]*\"\\|[^,}]*\\).*/\\1/p" | tr -d '"'
}
top_json() { # FILE [--all]: gpuprio top --once --json into FILE, stderr into FILE.err; status 0
    out=$1
    shift
    "$gpuprio" top --once --json "$@" >"$out" 2>"$out.err"
    rc=$?
    [ $rc = 0 ] || { echo "FAIL: top --once --json: status $rc: $(cat "$out.err")"; fails=$((fails + 1)); }
}
# The processes line of `gpuprio top --once` (FILE) for pid PID.
process_entry() { # FILE PID
    grep '^processes:' "$1" | grep -o " $2 [^(]*([^)]*)" | sed 's/^ //'
}
# Table rows of `gpuprio top --once` (FILE) of pid PID.
table_rows() { # FILE PID
    grep -v '^processes:' "$1" | grep -c " $2 tools_worker "
}
# Slots in use on a board file (free ones have an owner word of 0; the 512 slots of 136 bytes
# follow the 256-byte header, board.h).
slots_in_use() { # BOARD
    od -An -v -tx8 -w136 -j256 -N69632 "$1" | awk '$1 != "0000000000000000"' | wc -l
}
slots_are() { # BOARD N
    [ "$(slots_in_use "$1")" = "$2" ]
}
ready() { # FILE
    grep -q '^ready' "$1"
}

# An unreadable board (garbage of the wrong size, under a board's name) next to the real one:
# reported, skipped. A file whose name is no board's is not looked at (nor is it by the library).
garbage=$GPUPRIO_BOARD_DIR/gpuprio-$(id -u)-v4-garbage
head -c 100 /dev/zero >"$garbage"
chmod 600 "$garbage"
head -c 100 /dev/zero >"$GPUPRIO_BOARD_DIR/gpuprio-$(id -u)-no-board"

export HIPSIM_SHARED=$name HIPSIM_COMPUTE_SLOTS=8
GPUPRIO_PRIORITY=low GPUPRIO_CU_RESERVE=2 LD_PRELOAD=$shim "$worker" "$tmp/stop" 60 20 \
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
expect "user" "$(id -un)" "$(field "$tmp/top.json" user)"
expect "uid" "$(id -u)" "$(field "$tmp/top.json" uid)"
expect "cap (no configuration file)" null "$(field "$tmp/top.json" cap)"
# With the administrator's file capping this user below the queue's priority, top shows the cap
# and the priority as other users take it (the file must be root's: as root only).
if [ "$(id -u)" = 0 ]; then
    printf 'cap.%s = idle\n' "$(id -u)" >"$tmp/caps.conf"
    chmod 644 "$tmp/caps.conf"
    GPUPRIO_CONFIG=$tmp/caps.conf top_json "$tmp/capped.json"
    expect "cap (capped at idle)" -20 "$(field "$tmp/capped.json" cap)"
    expect "priority at the cap" -20 "$(field "$tmp/capped.json" priority)"
fi
expect "device index" 0 "$(field "$tmp/top.json" device_index)"
device=$(field "$tmp/top.json" device)
[ -n "$device" ] || { echo "FAIL: no device key"; fails=$((fails + 1)); }
expect "board file" "$GPUPRIO_BOARD_DIR/gpuprio-$(id -u)-v4-$(printf %s "$device" | tr -c 'A-Za-z0-9._\n-' _)" \
    "$(field "$tmp/top.json" board)"
stream=$(field "$tmp/top.json" stream)
case $stream in 0x*[0-9a-f]) echo "ok: stream $stream" ;; *) echo "FAIL: stream '$stream'"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" state) in active | idle) echo "ok: state" ;; *) echo "FAIL: state"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" gate) in suspended | throttled | tracked | none) echo "ok: gate" ;; *) echo "FAIL: gate"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" level) in 1 | 2) echo "ok: level" ;; *) echo "FAIL: level"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" in_flight) in [0-9]*) echo "ok: in_flight" ;; *) echo "FAIL: in_flight"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" submitted) in [1-9]*) echo "ok: submitted" ;; *) echo "FAIL: submitted"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" submitted_per_s) in [1-9]*) echo "ok: submitted_per_s" ;; *) echo "FAIL: submitted_per_s: $(field "$tmp/top.json" submitted_per_s)"; fails=$((fails + 1)) ;; esac
case $(field "$tmp/top.json" held_ns) in [0-9]*) echo "ok: held_ns" ;; *) echo "FAIL: held_ns"; fails=$((fails + 1)) ;; esac
expect "the garbage board reported once" 1 "$(grep -c "$garbage .*wrong size.*ignored" "$tmp/top.json.err")"
expect "a file not named as a board not looked at" 0 "$(grep -c "no-board" "$tmp/top.json.err")"
expect "kind" queue "$(field "$tmp/top.json" kind)"
expect "unused queues in JSON" 20 "$(field "$tmp/top.json" unused_queues)"
expect "cu_mask (GPUPRIO_CU_RESERVE=2)" reserved "$(field "$tmp/top.json" cu_mask)"
expect "cu_usable" 6 "$(field "$tmp/top.json" cu_usable)"
expect "cu_total" 8 "$(field "$tmp/top.json" cu_total)"
board=$(field "$tmp/top.json" board)

# The table shows it too: one row, and the processes line above it counts the 20 unused.
"$gpuprio" top --once >"$tmp/top.txt" 2>/dev/null
echo "top --once:"
cat "$tmp/top.txt"
expect "table row" 1 "$(table_rows "$tmp/top.txt" "$pid")"
expect "table heading" "PRIO CAP STATE GATE LVL INFL" "$(grep -o 'PRIO *CAP *STATE *GATE *LVL *INFL' "$tmp/top.txt" | tr -s ' ')"
expect "table: the queue's user and cap" 1 "$(grep " $pid tools_worker *$(id -un) .* -10 *- " "$tmp/top.txt" | wc -l)"
expect "table: LVL of the queue" 1 "$(grep -v '^processes:' "$tmp/top.txt" | grep " $pid tools_worker " | grep -Ec ' (suspended|throttled|tracked|none) +[12] +[0-9]+ ')"
expect "processes line" "$pid tools_worker (1 queue, 20 unused)" "$(process_entry "$tmp/top.txt" "$pid")"
expect "table heading: WHOLE, then CUS last" "HELD WHOLE CUS" "$(grep -o 'HELD *WHOLE *CUS$' "$tmp/top.txt" | tr -s ' ')"
expect "table: CUS of the reserved stream" "6/8*" "$(grep -v '^processes:' "$tmp/top.txt" | grep " $pid tools_worker " | awk '{print $NF}')"

# A worker on its created stream and the null stream, without a reservation.
LD_PRELOAD=$shim "$worker" "$tmp/stop5" 60 0 null >"$tmp/worker5.out" 2>"$tmp/worker5.err" &
pid5=$!
wait_for 10 ready "$tmp/worker5.out" || echo "FAIL: the null-stream worker never got ready"
top_json "$tmp/null.json"
grep "\"pid\": $pid5," "$tmp/null.json"
expect "null-stream worker: two queues" 2 "$(grep -c "\"pid\": $pid5," "$tmp/null.json")"
expect "created stream: every CU" 1 \
    "$(grep "\"pid\": $pid5," "$tmp/null.json" | grep '"thread": 0,' | grep -c '"cu_mask": "all", "cu_usable": 8, "cu_total": 8')"
expect "null stream: cannot be masked" 1 \
    "$(grep "\"pid\": $pid5," "$tmp/null.json" | grep -v '"thread": 0,' | grep -c '"cu_mask": "unmaskable", "cu_usable": null, "cu_total": null')"
"$gpuprio" top --once >"$tmp/null.txt" 2>/dev/null
expect "table: CUS of the two" "all null" "$(grep -v '^processes:' "$tmp/null.txt" | grep " $pid5 tools_worker " | awk '{print $NF}' | sort | tr '\n' ' ' | sed 's/ $//')"
touch "$tmp/stop5"
wait "$pid5"
expect "null-stream worker: status" 0 $?
pid5=
# --all: one more row, with the count; in JSON, one more object.
"$gpuprio" top --once --all >"$tmp/all.txt" 2>/dev/null
echo "top --once --all:"
cat "$tmp/all.txt"
expect "--all: rows" 2 "$(table_rows "$tmp/all.txt" "$pid")"
expect "--all: the unused row" 1 "$(grep -v '^processes:' "$tmp/all.txt" | grep -c " $pid tools_worker  *$(id -un)  *20 unused  *- ")"
top_json "$tmp/all.json" --all
expect "--all --json: objects" 2 "$(grep -c "\"pid\": $pid," "$tmp/all.json")"
expect "--all --json: the unused object" 1 \
    "$(grep "\"pid\": $pid," "$tmp/all.json" | grep -c '"kind": "unused", .*"device_index": 0, "unused_queues": 20, "unslotted_queues": 0, "mps": null, "mps_share": null, "mps_sms": null, "gemm": {"sliced": 0, "slices": 0, "whole": {"small": 0, "capturing": 0, "unsupported": 0, "check_failed": 0}}}')"
if command -v jq >/dev/null 2>&1; then
    expect "--all --json: valid (jq)" 20 "$(jq 'map(select(.pid == '"$pid"' and .kind == "unused")) | .[0].unused_queues' "$tmp/all.json")"
fi

# One stream's priority...
"$gpuprio" set "$pid" critical --stream "$stream"
expect "set --stream: status" 0 $?
top_json "$tmp/top2.json"
expect "priority after set --stream" 20 "$(field "$tmp/top2.json" priority)"
"$gpuprio" set "$pid" high --stream 0xdead 2>"$tmp/err"
expect "set --stream of an unknown stream: status" 1 $?
# ... then the process's: its unused queues too.
"$gpuprio" set "$pid" high >"$tmp/set.out"
expect "set: status" 0 $?
expect "set: what it says" "$pid (tools_worker): priority 10 on 21 queues and the queues it creates from now on" "$(cat "$tmp/set.out")"
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

# A worker none of whose streams ran: on the board through its record only.
GPUPRIO_PRIORITY=low LD_PRELOAD=$shim "$worker" "$tmp/stop2" 60 5 idle \
    >"$tmp/worker2.out" 2>"$tmp/worker2.err" &
pid2=$!
wait_for 10 ready "$tmp/worker2.out" || echo "FAIL: the idle worker never got ready"
"$gpuprio" top --once >"$tmp/idle.txt" 2>/dev/null
echo "top --once, with the idle worker:"
cat "$tmp/idle.txt"
expect "idle worker: processes line" "$pid2 tools_worker (0 queues, 5 unused)" "$(process_entry "$tmp/idle.txt" "$pid2")"
expect "idle worker: no row" 0 "$(table_rows "$tmp/idle.txt" "$pid2")"
"$gpuprio" top --once --all >"$tmp/idle-all.txt" 2>/dev/null
expect "idle worker: --all row" 1 "$(grep -v '^processes:' "$tmp/idle-all.txt" | grep -c " $pid2 tools_worker  *$(id -un)  *5 unused ")"
top_json "$tmp/idle.json"
expect "idle worker: not in --json without --all" 0 "$(grep -c "\"pid\": $pid2," "$tmp/idle.json")"
expect "slots: a queue and two records" 3 "$(slots_in_use "$board")"
"$gpuprio" set "$pid2" high >"$tmp/set2.out" 2>"$tmp/set2.err"
expect "set of the idle worker: status" 0 $?
expect "set of the idle worker: what it says" "$pid2 (tools_worker): priority 10 on 5 queues and the queues it creates from now on" "$(cat "$tmp/set2.out")"
"$gpuprio" set "$pid2" high --stream 0x0 2>"$tmp/err"
expect "set --stream of the idle worker (no queue slot): status" 1 $?
touch "$tmp/stop2"
wait "$pid2"
expect "idle worker: status" 0 $?
pid2=
expect "idle worker: its unused streams' priority" "unused priority 10" "$(grep '^unused' "$tmp/worker2.out")"
expect "idle worker's record freed at its exit" 2 "$(slots_in_use "$board")"

# A worker whose user the administrator's file caps at normal: gpuprio set asks it for critical,
# it takes normal, with one warning, and set says so (the file must be root's: as root only).
if [ "$(id -u)" = 0 ]; then
    printf 'cap.%s = normal\n' "$(id -u)" >"$tmp/cap-normal.conf"
    chmod 644 "$tmp/cap-normal.conf"
    GPUPRIO_CONFIG=$tmp/cap-normal.conf LD_PRELOAD=$shim "$worker" "$tmp/stop6" 60 2 idle \
        >"$tmp/worker6.out" 2>"$tmp/worker6.err" &
    pid6=$!
    wait_for 10 ready "$tmp/worker6.out" || echo "FAIL: the capped worker never got ready"
    listed() { "$gpuprio" top --once 2>/dev/null | grep -q "^processes:.* $pid6 tools_worker"; }
    wait_for 10 listed || echo "FAIL: the capped worker never showed on its board"
    GPUPRIO_CONFIG=$tmp/cap-normal.conf "$gpuprio" set "$pid6" critical >"$tmp/set6.out" 2>/dev/null
    expect "set above the cap: status" 0 $?
    expect "set above the cap: what it says" "$pid6 (tools_worker): priority 0 on 2 queues and the queues it creates from now on
  (priority 20 is above the cap of its user, set in $tmp/cap-normal.conf line 1)" "$(cat "$tmp/set6.out")"
    touch "$tmp/stop6"
    wait "$pid6"
    expect "capped worker: its unused streams' priority" "unused priority 0" "$(grep '^unused' "$tmp/worker6.out")"
    expect "capped worker: one warning" 1 "$(grep -c 'priority 20 from gpuprio set is above the cap of this user, 0' "$tmp/worker6.err")"
fi

# One killed: the running worker's listener reclaims its record (it checks every second).
LD_PRELOAD=$shim "$worker" "$tmp/stop3" 60 3 idle >"$tmp/worker3.out" 2>"$tmp/worker3.err" &
pid3=$!
wait_for 10 ready "$tmp/worker3.out" || echo "FAIL: the third worker never got ready"
expect "slots with the third worker" 3 "$(slots_in_use "$board")"
kill -9 "$pid3"
wait "$pid3" 2>/dev/null
pid3=
if wait_for 10 slots_are "$board" 2; then
    echo "ok: the killed worker's record reclaimed"
else
    echo "FAIL: the killed worker's record was not reclaimed: $(slots_in_use "$board") slots in use"
    fails=$((fails + 1))
fi

# One that execs itself: its new image (same pid, 2 unused streams) reclaims the first image's
# record (4 unused), which nobody else could tell from a live one.
LD_PRELOAD=$shim "$worker" "$tmp/stop4" 60 4 exec >"$tmp/worker4.out" 2>"$tmp/worker4.err" &
pid4=$!
wait_for 10 ready "$tmp/worker4.out" || echo "FAIL: the exec'd worker never got ready"
exec_entry() {
    "$gpuprio" top --once >"$tmp/exec.txt" 2>/dev/null
    [ "$(process_entry "$tmp/exec.txt" "$pid4")" = "$pid4 tools_worker (0 queues, 2 unused)" ]
}
if wait_for 10 exec_entry && wait_for 5 slots_are "$board" 3; then
    echo "ok: the exec'd worker's first record reclaimed by its new image"
else
    echo "FAIL: after exec: $(process_entry "$tmp/exec.txt" "$pid4"), $(slots_in_use "$board") slots in use"
    fails=$((fails + 1))
fi
touch "$tmp/stop4"
wait "$pid4"
expect "exec'd worker: status" 0 $?
pid4=

# The process itself sees the priority it was given, on its unused streams too.
touch "$tmp/stop"
wait "$pid"
expect "worker status" 0 $?
pid=
expect "worker's own priority" "priority 10" "$(grep '^priority' "$tmp/worker.out")"
expect "worker's unused streams' priority" "unused priority 10" "$(grep '^unused' "$tmp/worker.out")"
expect "the board removed by the last process to leave it" no "$([ -e "$board" ] && echo yes || echo no)"
# With no board left (the garbage one removed too), top shows nothing, successfully.
rm -f "$garbage" "$GPUPRIO_BOARD_DIR/gpuprio-$(id -u)-no-board"
top_json "$tmp/none.json"
expect "top --json without boards" "[]" "$(cat "$tmp/none.json")"
show_stderr "$tmp" worker worker2 worker3 worker4 worker5

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
