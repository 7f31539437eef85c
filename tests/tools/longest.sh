#!/bin/sh
# longest.sh - the longest command a lower queue runs whole (docs/design.md, "Long kernels: GEMM
# slices"): a low-priority worker launching 8-ms kernels next to a high-priority one whose queue
# ran once and is idle (a server between requests), so the low queue is throttled, not suspended.
# Its queue learns what its kernels take and shows it on the board: `gpuprio top --once` gives it
# in the low queue's WHOLE column (and `-` in the high one's, which holds nobody back), `top --json`
# as longest_command_ns, `metrics --once` as gpuprio_queue_longest_command_seconds, each between 4
# and 40 ms (about 8: what the watcher sees includes its polling and the host's delays), and
# `gpuprio doctor` lists the low queue as over the gate bound (100 us) in text and in JSON.
#
#   longest.sh GPUPRIO TOOLS_WORKER HIP_SHIM HIP_SIM_LIBRARY [MODE]
#
# MODE is the low worker's (default long); long_ext launches through hipExtModuleLaunchKernel, as
# rocBLAS and hipBLAS launch their GEMMs' kernels, which gpuprio leaves whole.
#
# Needs /usr/bin/python3 with python3-prometheus-client (scripts/install-deps.sh).
set -u
gpuprio=$1 worker=$2 shim=$3 sim=$4 mode=${5:-long}
here=$(dirname "$0")
py=/usr/bin/python3
. "$here/expect.sh"
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
sandbox_boards longest
high= low=
cleanup() { sandbox_cleanup $high $low; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
export GPUPRIO_CONFIG=$tmp/absent.conf HIPSIM_SHARED=$name HIPSIM_COMPUTE_SLOTS=8

GPUPRIO_PRIORITY=high LD_PRELOAD=$shim "$worker" "$tmp/stop" 60 0 once >"$tmp/high.out" \
    2>"$tmp/high.err" &
high=$!
wait_for 20 grep -q '^ready' "$tmp/high.out" || { echo "FAIL: the high worker never got ready"; show_stderr "$tmp" high; exit 1; }
GPUPRIO_PRIORITY=low LD_PRELOAD=$shim "$worker" "$tmp/stop" 60 0 "$mode" >"$tmp/low.out" \
    2>"$tmp/low.err" &
low=$!
wait_for 20 grep -q '^ready' "$tmp/low.out" || { echo "FAIL: the low worker never got ready"; show_stderr "$tmp" low; exit 1; }

# The low queue's longest command in JSON (ns), or "null"; empty while it has no row.
longest_json() {
    "$gpuprio" top --once --json >"$tmp/top.json" 2>"$tmp/top.err" || return 1
    $py -c '
import json, sys
q = [o for o in json.load(open(sys.argv[1])) if o["pid"] == int(sys.argv[2])]
print(q[0]["longest_command_ns"] if q and q[0]["longest_command_ns"] is not None else "null")
' "$tmp/top.json" "$low"
}
known() { [ "$(longest_json)" != null ] && [ -n "$(longest_json)" ]; }
if ! wait_for 20 known; then
    echo "FAIL: the low queue's longest command never shown; last top --json:"
    cat "$tmp/top.json" "$tmp/top.err"
    show_stderr "$tmp" low high
    exit 1
fi
# About 8 ms: at least half, at most five times (a loaded host sees completions late).
about() { # WHAT NS
    if [ "$2" -ge 4000000 ] && [ "$2" -le 40000000 ]; then
        echo "ok: $1: $2 ns"
    else
        echo "FAIL: $1: $2 ns, not about 8 ms"
        fails=$((fails + 1))
    fi
}
ns=$(longest_json)
about "top --json: the low queue's longest command" "$ns"
expect "top --json: the high queue's, none (a command of 1 ms, then idle: not learned)" null "$($py -c '
import json, sys
print([o["longest_command_ns"] for o in json.load(open(sys.argv[1])) if o["pid"] == int(sys.argv[2])][0] or "null")
' "$tmp/top.json" "$high")"

"$gpuprio" top --once >"$tmp/top.txt" 2>"$tmp/top.err"
expect "top --once: status" 0 $?
cat "$tmp/top.txt"
whole_of() { # PID: the WHOLE column of its row
    grep -v '^processes:' "$tmp/top.txt" | grep " $1 tools_worker " | awk '{print $(NF - 1)}'
}
case $(whole_of "$low") in
    [4-9].[0-9]ms | [1-3][0-9].[0-9]ms | 40.0ms) echo "ok: top --once: WHOLE of the low queue: $(whole_of "$low")" ;;
    *) echo "FAIL: top --once: WHOLE of the low queue: '$(whole_of "$low")'"; fails=$((fails + 1)) ;;
esac
expect "top --once: WHOLE of the high queue (not held back: no floor)" - "$(whole_of "$high")"

"$gpuprio" metrics --once >"$tmp/m.prom" 2>"$tmp/m.err"
expect "metrics --once: status" 0 $?
prom_checks "$here/prom_check.py" "$tmp/m.prom" "$tmp/check.out"
seconds=$(sed -n "s/^gpuprio_queue_longest_command_seconds{.*pid=\"$low\".*} \\([0-9.]*\\)$/\\1/p" "$tmp/m.prom")
about "metrics: gpuprio_queue_longest_command_seconds of the low queue" \
    "$($py -c 'import sys; print(round(float(sys.argv[1]) * 1e9) if sys.argv[1] else -1)' "$seconds")"
expect "metrics: no series for the high queue" 0 "$(grep -c "^gpuprio_queue_longest_command_seconds{.*pid=\"$high\"" "$tmp/m.prom")"

export GPUPRIO_HIP_LIBRARY=$sim
"$gpuprio" doctor >"$tmp/doctor.txt" 2>"$tmp/doctor.err"
expect "doctor: status" 0 $?
sed -n '/^boards:/,/^administrator/p' "$tmp/doctor.txt"
expect "doctor: the low queue over the gate bound" 1 "$(grep -Ec "^    [^ ]+: pid $low \\(tools_worker\\), queue 0x[0-9a-f]+, priority -10: [0-9.]+ms$" "$tmp/doctor.txt")"
expect "doctor: nothing else over it" 1 "$(grep -c '^    .*: pid .*, queue 0x' "$tmp/doctor.txt")"
expect "doctor: the gate bound" 1 "$(grep -c '^  lower queues whose longest recent command exceeds the gate bound (100 us)' "$tmp/doctor.txt")"
"$gpuprio" doctor --json >"$tmp/doctor.json" 2>"$tmp/doctor.err"
expect "doctor --json: status" 0 $?
out=$($py -c '
import json, sys
b = json.load(open(sys.argv[1]))["boards"]
q = [o for o in b["long_commands"] if o["pid"] == int(sys.argv[2])]
print(b["read"], b["gate_bound_us"], len(b["long_commands"]), len(q), q[0]["longest_command_ns"] if q else 0)
' "$tmp/doctor.json" "$low" 2>&1)
expect "doctor --json: the low queue, and only it, over 100 us" "True 100 1 1" "${out% *}"
about "doctor --json: its longest command" "${out##* }"

touch "$tmp/stop"
wait "$low"
expect "low worker status" 0 $?
low=
wait "$high"
expect "high worker status" 0 $?
high=
[ "$fails" = 0 ] || { echo "$fails FAILED"; show_stderr "$tmp" low high; exit 1; }
echo "all ok"
