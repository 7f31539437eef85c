#!/bin/sh
# doctor.sh - gpuprio doctor over the fake CUDA driver (fake_cuda.c, "Device facts"): per device
# the stream priority range of a context (the device's primary context, retained for the
# question: 0 to -5 as on an H100) and whether created streams get it, none where the range is
# 0 to 0, whether a process would be an MPS client (FAKE_CUDA_MPS; unknown when the driver cannot
# say), an MPS client's gate bound (300 us), Level 1 for an MPS client before Volta (a problem),
# and GPUPRIO_CU_RESERVE: a percentage is an MPS client's share of the SMs; without MPS it has no
# effect, and as a count under MPS it cannot be applied: problems with their fixes.
#
#   doctor.sh GPUPRIO FAKE_LIBCUDA
#
# Only the CUDA driver's facts are checked (a HIP runtime on the machine may add its own).
set -u
if [ $# != 2 ]; then
    echo "usage: doctor.sh GPUPRIO FAKE_LIBCUDA" >&2
    exit 2
fi
gpuprio=$1 fake=$2
. "$(dirname "$0")/../tools/expect.sh"
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset FAKE_CUDA_MPS FAKE_CUDA_CC_MAJOR FAKE_CUDA_SMS FAKE_CUDA_GREATEST CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
sandbox_boards doctor-cuda
trap sandbox_cleanup EXIT
trap 'exit 1' HUP INT TERM
# A device identity makes the fake's devices able to wait on host memory (Level 2).
export GPUPRIO_CUDA_LIBRARY=$fake GPUPRIO_CONFIG=$tmp/absent.conf FAKE_CUDA_BUS_ID=doctor$$
json() { # FILE EXPRESSION(on d, c: the CUDA driver's device 0, p: its problems)
    python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); c = d["runtimes"][1]["devices"][0]
p = [x for x in d["problems"] if x["problem"].startswith("CUDA ")]
print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}
doctor() { # NAME VAR=VALUE...: NAME.txt, NAME.json, and NAME.rc the text's exit status
    _d_name=$1
    shift
    env "$@" "$gpuprio" doctor >"$tmp/$_d_name.txt" 2>"$tmp/$_d_name.err"
    echo $? >"$tmp/$_d_name.rc"
    env "$@" "$gpuprio" doctor --json >"$tmp/$_d_name.json" 2>"$tmp/$_d_name.json.err"
}
has() { grep -c "$2" "$tmp/$1.txt"; } # NAME PATTERN

doctor mps FAKE_CUDA_MPS=1 GPUPRIO_CU_RESERVE=25%
expect "MPS client: the driver bound" 1 "$(has mps "^CUDA driver: $fake (found: environment")"
expect "MPS client: the context's priority range, given to streams" 2 \
    "$(has mps '^    hardware stream priorities: 0 (least) to -5 (greatest), given to created streams')"
expect "MPS client: said" 2 "$(has mps '^    MPS: a process would be a client: stream priorities compare across processes$')"
expect "MPS client: the gate bound" 2 "$(has mps ': Level 2 (.*gate bound 300 us (an MPS client.s default)$')"
expect "MPS client: the SMs kept" 2 \
    "$(has mps '^    CU reservation: 25% of the SMs kept for priorities above normal: a client at normal priority or below is limited to the other 75%')"
expect "MPS client --json: hardware priorities" "{'least': 0, 'greatest': -5, 'given_to_streams': True}" \
    "$(json "$tmp/mps.json" 'c["hardware_priorities"]')"
expect "MPS client --json: mps" "{'client': True, 'compute_capability_major': 9}" "$(json "$tmp/mps.json" 'c["mps"]')"
expect "MPS client --json: gate_us" 300 "$(json "$tmp/mps.json" 'c["gate_us"]')"
expect "MPS client --json: cu_reserve" "25% mps_share True 25 100 percent of SMs" \
    "$(json "$tmp/mps.json" '" ".join(str(v) for k, v in c["cu_reserve"].items() if k != "what")')"
expect "MPS client --json: no CUDA problem" 0 "$(json "$tmp/mps.json" 'len(p)')"

doctor nomps FAKE_CUDA_MPS=0 GPUPRIO_CU_RESERVE=25%
expect "not a client: exit status" 1 "$(cat "$tmp/nomps.rc")"
expect "not a client: said" 2 "$(has nomps '^    MPS: not a client: stream priorities order a process.s own streams only')"
expect "not a client: the gate bound" 2 "$(has nomps ': Level 2 (.*gate bound 100 us$')"
expect "not a client: the reservation, a problem" 1 \
    "$(has nomps '^  CUDA device 0: GPUPRIO_CU_RESERVE=25% has no effect: a process would not be an MPS client')"
expect "not a client: its fix" 2 "$(has nomps '^    fix: run the processes as MPS clients (docs/mps.md), or unset GPUPRIO_CU_RESERVE$')"
expect "not a client --json: mps" False "$(json "$tmp/nomps.json" 'c["mps"]["client"]')"
expect "not a client --json: cu_reserve not in effect" "None False" \
    "$(json "$tmp/nomps.json" 'str(c["cu_reserve"]["by"]) + " " + str(c["cu_reserve"]["in_effect"])')"

doctor count FAKE_CUDA_MPS=1 GPUPRIO_CU_RESERVE=16
expect "a count under MPS: exit status" 1 "$(cat "$tmp/count.rc")"
expect "a count under MPS: the problem" 1 "$(has count '^  CUDA device 0: GPUPRIO_CU_RESERVE=16 is a count of compute units, but MPS takes .* a percentage')"
expect "a count under MPS: its fix" 2 "$(has count '^    fix: give it as a percentage')"

doctor pascal FAKE_CUDA_MPS=1 FAKE_CUDA_CC_MAJOR=6
expect "MPS before Volta: exit status" 1 "$(cat "$tmp/pascal.rc")"
expect "MPS before Volta: Level 1" 2 "$(has pascal '^  device [01]: Level 1 (an MPS client on a GPU before Volta: compute capability 6)$')"
expect "MPS before Volta: the problem" 1 "$(has pascal '^  CUDA device 0: Level 1 only: an MPS client on a GPU before Volta')"
expect "MPS before Volta: its fix" 2 "$(has pascal '^    fix: run without MPS, or on a GPU from Volta on')"
expect "MPS before Volta --json: level, no gates" "1 None" "$(json "$tmp/pascal.json" 'str(c["level"]) + " " + str(c["gate_us"])')"

doctor unknown
expect "MPS unknown: no problem" 0 "$(json "$tmp/unknown.json" 'len(p)')"
expect "MPS unknown: said" 2 "$(has unknown '^    MPS: unknown')"
expect "MPS unknown: the gate bound either way" 2 "$(has unknown 'gate bound 100 us (300 in an MPS client)$')"
expect "MPS unknown: no reservation asked" 2 "$(has unknown '^    CU reservation: none')"
expect "MPS unknown --json" "{'client': None, 'compute_capability_major': 9} None" \
    "$(json "$tmp/unknown.json" 'str(c["mps"]) + " " + str(c["cu_reserve"])')"

doctor flat FAKE_CUDA_MPS=0 FAKE_CUDA_GREATEST=0
expect "no stream priorities: no problem" 0 "$(json "$tmp/flat.json" 'len(p)')"
expect "no stream priorities: said" 2 "$(has flat '^    hardware stream priorities: none (the device.s range is 0 to 0): priorities act by admission and gates only$')"
expect "no stream priorities --json" "{'least': 0, 'greatest': 0, 'given_to_streams': False}" \
    "$(json "$tmp/flat.json" 'c["hardware_priorities"]')"

doctor hwoff FAKE_CUDA_MPS=0 GPUPRIO_HW_PRIORITY=off
expect "GPUPRIO_HW_PRIORITY=off: not used" 2 "$(has hwoff '^    hardware stream priorities: 0 (least) to -5 (greatest), not used (GPUPRIO_HW_PRIORITY=off)$')"
expect "GPUPRIO_HW_PRIORITY=off --json" False "$(json "$tmp/hwoff.json" 'c["hardware_priorities"]["given_to_streams"]')"

if [ "$fails" -gt 0 ]; then
    for f in "$tmp"/*.txt "$tmp"/*.json "$tmp"/*.err; do
        [ -s "$f" ] && { echo "--- $f"; cat "$f"; }
    done
fi
[ "$fails" -eq 0 ]
