#!/bin/sh
# gemm_hostile.sh - a record's GEMM counts are any number its owner writes (tools_forged_gemm:
# 2^64-1 calls sliced, 2^64-2 slices, 2^32-1 calls left whole for every reason, in records of
# devices 0 and 1): `gpuprio top --once`, `top --once --json` and `metrics --once` end with status
# 0, print each count at most 2^53-1 (board.h's GP_RECORD_GEMM_MAX: exact in JSON and in
# Prometheus' samples) and sums over the records clamped there too, and what they print parses.
# So is a queue's longest command (two throttled queues of the forger, at 2^32-1 and 2^31
# microseconds): top's WHOLE column, its JSON and the metrics gauge give at most an hour (board.h's
# GP_SLOT_LONGEST_MAX_US) and 2147.483648 s; `gpuprio doctor` lists both queues as over the gate
# bound and each record's GEMM counts, clamped, in text and in JSON that parses.
#
#   gemm_hostile.sh GPUPRIO TOOLS_FORGED_GEMM
#
# Needs Debian's /usr/bin/python3 with python3-prometheus-client (scripts/install-deps.sh).
set -u
gpuprio=$1 forged=$2
here=$(dirname "$0")
py=/usr/bin/python3
. "$here/expect.sh"
sandbox_boards gemm-hostile
fpid=
cleanup() { sandbox_cleanup $fpid; }
trap cleanup EXIT
max=9007199254740991

"$forged" "$tmp/stop" >"$tmp/forged.out" 2>"$tmp/forged.err" &
fpid=$!
if ! wait_for 10 grep -q ready "$tmp/forged.out"; then
    echo "FAIL: tools_forged_gemm never got ready: $(cat "$tmp/forged.err")"
    exit 1
fi

"$gpuprio" top --once >"$tmp/top.txt" 2>"$tmp/top.err"
expect "top --once: status" 0 $?
cat "$tmp/top.txt"
# Summed over its two records: every count at the clamp, whole ones too (8 * (2^32-1) is less).
expect "top --once: the forged process's GEMMs, clamped" 1 "$(grep -c "^processes: $fpid tools_forged_ge (2 queues, 6 unused; GEMMs $max sliced ($max slices), 34359738360 left whole: 8589934590 small, 8589934590 capturing, 8589934590 unsupported, 8589934590 check_failed)$" "$tmp/top.txt")"

whole_of() { # STREAM: the WHOLE column of the forged queue's row
    grep " $fpid tools_forged_ge .* $1 " "$tmp/top.txt" | awk '{print $(NF - 1)}'
}
expect "top --once: the longest command, clamped to an hour" 60m00s "$(whole_of 0xf00)"
expect "top --once: the longest command of 2^31 us" 35m47s "$(whole_of 0xf01)"

"$gpuprio" top --once --all --json >"$tmp/top.json" 2>"$tmp/top.err"
expect "top --json: status" 0 $?
expect "top --json: parses, each record's counts clamped" "$max $max 4294967295 4" "$($py -c '
import json, sys
g = [o["gemm"] for o in json.load(open(sys.argv[1])) if o["pid"] == int(sys.argv[2])]
print(max(x["sliced"] for x in g), max(x["slices"] for x in g),
      max(max(x["whole"].values()) for x in g), len(g))
' "$tmp/top.json" "$fpid")"
expect "top --json: the longest commands, clamped" "0xf00 3600000000000 0xf01 2147483648000" "$($py -c '
import json, sys
q = [o for o in json.load(open(sys.argv[1])) if o["pid"] == int(sys.argv[2]) and o["kind"] == "queue"]
print(" ".join("%s %d" % (o["stream"], o["longest_command_ns"]) for o in q))
' "$tmp/top.json" "$fpid")"

"$gpuprio" metrics --once >"$tmp/m.prom" 2>"$tmp/m.err"
expect "metrics --once: status" 0 $?
prom_checks "$here/prom_check.py" "$tmp/m.prom" "$tmp/check.out"
expect "metrics: sliced, clamped, per record" 2 "$(grep -c "^gpuprio_process_gemm_sliced_total{.*pid=\"$fpid\".*} $max$" "$tmp/m.prom")"
expect "metrics: slices, clamped, per record" 2 "$(grep -c "^gpuprio_process_gemm_slices_total{.*pid=\"$fpid\".*} $max$" "$tmp/m.prom")"
expect "metrics: whole, every reason of every record" 8 "$(grep -c "^gpuprio_process_gemm_whole_total{.*pid=\"$fpid\".*} 4294967295$" "$tmp/m.prom")"
expect "metrics: the longest command, clamped" 1 "$(grep -c "^gpuprio_queue_longest_command_seconds{.*pid=\"$fpid\".*stream=\"0xf00\".*} 3600.000000$" "$tmp/m.prom")"
expect "metrics: the longest command of 2^31 us" 1 "$(grep -c "^gpuprio_queue_longest_command_seconds{.*pid=\"$fpid\".*stream=\"0xf01\".*} 2147.483648$" "$tmp/m.prom")"

# The doctor reads the same board (no runtime here: its status says nothing of the board).
"$gpuprio" doctor >"$tmp/doctor.txt" 2>"$tmp/doctor.err"
rc=$?
[ $rc -le 1 ] || { echo "FAIL: doctor: status $rc: $(cat "$tmp/doctor.err")"; fails=$((fails + 1)); }
expect "doctor: both forged queues over the gate bound, clamped" 2 "$(grep -Ec "^    forged-gemm: pid $fpid \(tools_forged_ge\), queue 0xf0[01], priority -10: (60m00s|35m47s)$" "$tmp/doctor.txt")"
expect "doctor: each record's GEMM counts, clamped" 2 "$(grep -c "^    forged-gemm (its device [01]): pid $fpid (tools_forged_ge): GEMMs $max sliced ($max slices), 17179869180 left whole: 4294967295 small, 4294967295 capturing, 4294967295 unsupported, 4294967295 check_failed$" "$tmp/doctor.txt")"
"$gpuprio" doctor --json >"$tmp/doctor.json" 2>"$tmp/doctor.err"
rc=$?
[ $rc -le 1 ] || { echo "FAIL: doctor --json: status $rc: $(cat "$tmp/doctor.err")"; fails=$((fails + 1)); }
expect "doctor --json: parses, the queues and records clamped" "3600000000000 2147483648000 $max $max 4294967295 2" "$($py -c '
import json, sys
b = json.load(open(sys.argv[1]))["boards"]
q = [o["longest_command_ns"] for o in b["long_commands"] if o["pid"] == int(sys.argv[2])]
g = [o for o in b["gemm"] if o["pid"] == int(sys.argv[2])]
print(*q, max(x["sliced"] for x in g), max(x["slices"] for x in g),
      max(max(x["whole"].values()) for x in g), len(g))
' "$tmp/doctor.json" "$fpid" 2>&1)"

touch "$tmp/stop"
wait "$fpid"
expect "tools_forged_gemm status" 0 $?
fpid=
[ "$fails" = 0 ] || { echo "$fails FAILED"; exit 1; }
echo "all ok"
