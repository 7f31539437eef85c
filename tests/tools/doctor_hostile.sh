#!/bin/sh
# doctor_hostile.sh - `gpuprio doctor` against records whose MPS state is any byte, and against
# many records and lower queues that no record of their board matches (tools_forged_mps, as a
# process of the user could write its own boards).
#
# Where each of five lower queues of 5-ms commands has its own record, of MPS state 0, 1, 2, 3 and
# 255, below another process's idle queue of higher priority: only the one whose record says it is
# no MPS client (1) has "waits_less_under_mps": true in doctor's JSON (which parses), and the text
# says so once; a queue of that record whose longest command is under 1 ms (999 us) is listed with
# false, one that is not lower is not listed. A process of state 1 whose only higher priority is
# its own ("forged-mps-alone": one context, where the higher priority waits for SMs already) is
# listed with false (before: true). Next to 124 boards more (62 devices, each under two names:
# with the two above, the 64 devices a reader takes of a user) of 254 such records and 256 lower
# queues of 5 ms each, whose records are on other boards only: doctor, text and JSON, answers
# within 5 s (killed then), listing the 31,744 queues, none with the hint. Each queue's record
# was looked for with a pass over all of them: doctor --json took 16 s on an idle host, and the
# text as long where the one queue that gets the hint sorts last (it does: "forged-mps" after
# "forged-many-..."); with the records sorted once, 0.3 s.
#
#   doctor_hostile.sh GPUPRIO TOOLS_FORGED_MPS
set -u
gpuprio=$1 forged=$2
here=$(dirname "$0")
py=/usr/bin/python3
. "$here/expect.sh"
sandbox_boards doctor-hostile
fpid=
cleanup() { sandbox_cleanup $fpid; }
trap cleanup EXIT
hint="as MPS clients (on NVIDIA) a higher priority would wait for SMs, not for such a command's end"

"$forged" "$tmp/stop" 63 >"$tmp/forged.out" 2>"$tmp/forged.err" &
fpid=$!
if ! wait_for 30 grep -qs ready "$tmp/forged.out"; then
    echo "FAIL: tools_forged_mps never got ready: $(cat "$tmp/forged.err")"
    exit 1
fi

# Runs doctor ARGS... into $tmp/OUT for at most 5 s (then killed): its status, 124 when killed;
# 0 for 1 (it found problems: no runtime here, which says nothing of the boards).
doctor() { # OUT ARGS...
    _d_out=$1
    shift
    timeout -s KILL 5 "$gpuprio" doctor "$@" >"$tmp/$_d_out" 2>"$tmp/$_d_out.err"
    _d_rc=$?
    [ $_d_rc = 137 ] && _d_rc=124
    [ $_d_rc = 1 ] && _d_rc=0
    return $_d_rc
}

start=$(date +%s%N)
doctor doctor.json --json
rc=$?
echo "doctor --json: $((($(date +%s%N) - start) / 1000000)) ms"
expect "doctor --json: status (124: killed after 5 s)" 0 $rc
expect "doctor --json: parses; the listed queues' waits_less_under_mps" \
    "0xa00 false 0xa01 true 0xa02 false 0xa03 false 0xaff false 0xb00 false; alone: 0xd00 false; 31744 other, 0 true" \
    "$($py -c '
import json, sys
listed = [q for q in json.load(open(sys.argv[1]))["boards"]["long_commands"]
          if q["pid"] == int(sys.argv[2])]
def of(device):
    return " ".join("%s %s" % (q["stream"], str(q["waits_less_under_mps"]).lower())
                    for q in sorted(listed, key=lambda q: q["stream"]) if q["device"] == device)
other = [q["waits_less_under_mps"] for q in listed if q["device"].startswith("forged-many-")]
print("%s; alone: %s; %d other, %d true" % (of("forged-mps"), of("forged-mps-alone"), len(other),
                                           sum(other)))
' "$tmp/doctor.json" "$fpid" 2>&1)"

start=$(date +%s%N)
doctor doctor.txt
rc=$?
echo "doctor: $((($(date +%s%N) - start) / 1000000)) ms"
expect "doctor: status (124: killed after 5 s)" 0 $rc
expect "doctor: lines saying MPS would shorten the wait" 1 "$(grep -cF "$hint" "$tmp/doctor.txt")"

touch "$tmp/stop"
wait $fpid
expect "tools_forged_mps: exit status" 0 $?
fpid=
[ $fails = 0 ] || exit 1
echo PASS
