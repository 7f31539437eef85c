#!/bin/sh
# gemm_hostile.sh - a record's GEMM counts are any number its owner writes (tools_forged_gemm:
# 2^64-1 calls sliced, 2^64-2 slices, 2^32-1 calls left whole for every reason, in records of
# devices 0 and 1): `gpuprio top --once`, `top --once --json` and `metrics --once` end with status
# 0, print each count at most 2^53-1 (board.h's GP_RECORD_GEMM_MAX: exact in JSON and in
# Prometheus' samples) and sums over the records clamped there too, and what they print parses.
#
#   gemm_hostile.sh GPUPRIO TOOLS_FORGED_GEMM
#
# Needs Debian's /usr/bin/python3 with python3-prometheus-client (scripts/install-deps.sh).
set -u
gpuprio=$1 forged=$2
here=$(dirname "$0")
py=/usr/bin/python3
. "$here/expect.sh"
sandbox gemm-hostile
fpid=
cleanup() { sandbox_cleanup $fpid; }
trap cleanup EXIT
export GPUPRIO_BOARD_DIR=$tmp/boards
mkdir -m 700 "$GPUPRIO_BOARD_DIR"
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
expect "top --once: the forged process's GEMMs, clamped" 1 "$(grep -c "^processes: $fpid tools_forged_ge (0 queues, 6 unused; GEMMs $max sliced ($max slices), 34359738360 left whole: 8589934590 small, 8589934590 capturing, 8589934590 unsupported, 8589934590 check_failed)$" "$tmp/top.txt")"

"$gpuprio" top --once --all --json >"$tmp/top.json" 2>"$tmp/top.err"
expect "top --json: status" 0 $?
expect "top --json: parses, each record's counts clamped" "$max $max 4294967295 2" "$($py -c '
import json, sys
g = [o["gemm"] for o in json.load(open(sys.argv[1])) if o["pid"] == int(sys.argv[2])]
print(max(x["sliced"] for x in g), max(x["slices"] for x in g),
      max(max(x["whole"].values()) for x in g), len(g))
' "$tmp/top.json" "$fpid")"

"$gpuprio" metrics --once >"$tmp/m.prom" 2>"$tmp/m.err"
expect "metrics --once: status" 0 $?
if $py "$here/prom_check.py" "$tmp/m.prom" >"$tmp/check.out"; then
    echo "ok: metrics --once parses and checks"
else
    echo "FAIL: metrics --once does not check:"
    grep -v '^ok' "$tmp/check.out"
    fails=$((fails + 1))
fi
expect "metrics: sliced, clamped, per record" 2 "$(grep -c "^gpuprio_process_gemm_sliced_total{.*pid=\"$fpid\".*} $max$" "$tmp/m.prom")"
expect "metrics: slices, clamped, per record" 2 "$(grep -c "^gpuprio_process_gemm_slices_total{.*pid=\"$fpid\".*} $max$" "$tmp/m.prom")"
expect "metrics: whole, every reason of every record" 8 "$(grep -c "^gpuprio_process_gemm_whole_total{.*pid=\"$fpid\".*} 4294967295$" "$tmp/m.prom")"

touch "$tmp/stop"
wait "$fpid"
expect "tools_forged_gemm status" 0 $?
fpid=
[ "$fails" = 0 ] || { echo "$fails FAILED"; exit 1; }
echo "all ok"
