#!/bin/sh
# top_controls.sh GPUPRIO FORGED: command names on a board that would steer a terminal if printed
# as they are (FORGED = tools_forged_comm in mode steering: U+009B, C1's CSI; U+202E, a
# right-to-left override; U+2066, an isolate; as any process of the user, or another user on the
# shared directory, can write into its own board): gpuprio top --once shows each as '?' and none
# of their bytes; doctor prints names the same way; top --once --json escapes them (\u009b,
# \u202e, \u2066) and parses. Then FORGED in mode priorities: of its queues at priorities
# 2^31 - 1, -2^31 (which no gpuprio writes, and the scheduler ignores) and 7, top --once, its
# JSON and metrics --once show the last only.
#
#   top_controls.sh GPUPRIO FORGED
set -u
gpuprio=$1 forged=$2
. "$(dirname "$0")/expect.sh"
sandbox_boards topctl
fpid=
trap 'sandbox_cleanup $fpid' EXIT
trap 'exit 1' HUP INT TERM
export GPUPRIO_CONFIG=$tmp/absent.conf
"$forged" "$tmp/stop" steering >"$tmp/forged.out" 2>"$tmp/forged.err" &
fpid=$!
wait_for 10 grep -q ready "$tmp/forged.out" || {
    echo "FAIL: tools_forged_comm never got ready: $(cat "$tmp/forged.err")"
    exit 1
}
# The UTF-8 of U+0080..U+009F, U+202A..U+202E and U+2066..U+2069, as od prints bytes.
steers() { od -An -tx1 -v "$1" | tr -s ' \n' '  ' |
    grep -c -E ' c2 [89][0-9a-f] | e2 80 a[a-e] | e2 81 a[6-9] '; }
timeout 20 "$gpuprio" top --once >"$tmp/top.txt" 2>"$tmp/top.err"
expect "top --once: exit status" 0 $?
expect "top --once: no byte of a steering character" 0 "$(steers "$tmp/top.txt")"
for name in 'a?2J' 'b?rtl' 'c?iso'; do
    expect "top --once: $name shown in its row" 1 \
        "$(grep '^forged ' "$tmp/top.txt" | grep -c -F " $name ")"
done
timeout 20 "$gpuprio" top --once --json >"$tmp/top.json" 2>"$tmp/json.err"
expect "top --once --json: exit status" 0 $?
expect "top --once --json: no byte of a steering character" 0 "$(steers "$tmp/top.json")"
expect "top --once --json: parses, the names escaped" "['a\\x9b2J', 'b\\u202ertl', 'c\\u2066iso']" \
    "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(sorted(q["command"] for q in d if q["kind"] == "queue" and q["pid"] == int(sys.argv[2])))' \
        "$tmp/top.json" "$fpid" 2>&1)"
touch "$tmp/stop"
wait $fpid
expect "tools_forged_comm status" 0 $?
fpid=

rm -f "$tmp/stop"
"$forged" "$tmp/stop" priorities >"$tmp/forged.out" 2>"$tmp/forged.err" &
fpid=$!
wait_for 10 grep -q ready "$tmp/forged.out" || {
    echo "FAIL: tools_forged_comm priorities never got ready: $(cat "$tmp/forged.err")"
    exit 1
}
timeout 20 "$gpuprio" top --once >"$tmp/ptop.txt" 2>"$tmp/ptop.err"
expect "priorities: top --once: exit status" 0 $?
expect "priorities: top --once: only the valid one's row" "p-ok" \
    "$(grep '^forged ' "$tmp/ptop.txt" | grep -o -E 'p-(max|min|ok)' | tr '\n' ' ' | sed 's/ $//')"
timeout 20 "$gpuprio" top --once --json >"$tmp/ptop.json" 2>"$tmp/pjson.err"
expect "priorities: top --once --json: exit status" 0 $?
expect "priorities: top --once --json: only the valid one's queue" "[('p-ok', 7)]" \
    "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(sorted((q["command"], q["priority"]) for q in d
             if q["kind"] == "queue" and q["pid"] == int(sys.argv[2])))' \
        "$tmp/ptop.json" "$fpid" 2>&1)"
timeout 20 "$gpuprio" metrics --once >"$tmp/p.prom" 2>"$tmp/pprom.err"
expect "priorities: metrics --once: exit status" 0 $?
expect "priorities: metrics --once: only the valid one's priority" "7" \
    "$(grep "^gpuprio_queue_priority{.*pid=\"$fpid\"" "$tmp/p.prom" | awk '{print $2}' | tr '\n' ' ' |
        sed 's/ $//')"
touch "$tmp/stop"
wait $fpid
expect "tools_forged_comm priorities status" 0 $?
fpid=
show_stderr "$tmp" top json ptop pjson pprom
[ $fails = 0 ]
