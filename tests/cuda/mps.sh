#!/bin/sh
# mps.sh - gpuprio in NVIDIA Multi-Process Service (MPS) clients, over the fake driver's MPS mode
# (fake_cuda.c, "Device facts"); one CASE a run, each its own ctest (cuda.mps_CASE):
#
#   detect         under MPS (FAKE_CUDA_MPS=1) the process says once that device 0 is an MPS
#                  client, and `gpuprio top` shows "mps": true on its queues; without MPS (0)
#                  no such line and "mps": false; with a driver that cannot say (unset),
#                  "mps": null.
#   priority_map   under MPS, streams created without a priority get the stream priority of the
#                  process's gpuprio priority, one function of it in every process (-p/10,
#                  clamped into the fake's range 0..-5): idle, low and normal keep the default 0.
#   gate_fallback  an MPS client on a GPU before Volta (compute capability 6) stays on Level 1:
#                  its clients share the hardware's work queues, so a closed gate could hold
#                  another client's stream; on Hopper (9) it gets Level 2.
#   gate_bound     what one Level-2 gate may hold back: 300 us of predicted GPU time in an MPS
#                  client, 100 without MPS, GPUPRIO_GATE_US's value in either; a bad value leaves
#                  the variable unset, with one warning.
#   reserve        GPUPRIO_CU_RESERVE=25% leaves a low-priority client 75% of the SMs (through
#                  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, set before the driver starts) and a high
#                  one all of them; a tighter share the user set already is kept; a count of
#                  compute units cannot be turned into a share then, and is refused with a hint.
#
#   long_wait      a low-priority client running 5-ms kernels next to an idle high-priority one:
#                  `gpuprio doctor` lists its queue as over the gate bound and, only where it is
#                  not an MPS client (FAKE_CUDA_MPS=0), says that as MPS clients a higher priority
#                  would wait for SMs, not for such a kernel's end (text, and
#                  "waits_less_under_mps" in JSON); under MPS (1) it says no such thing.
#
#   mps.sh CASE LIB CLIENT TOOL
#
# LIB is libgpuprio-cuda.so, preloaded into CLIENT (mps_client.c); TOOL is the gpuprio command.
# Every client runs with the fake driver's directory (FAKE_CUDA_DIR, else fakecuda/ next to
# CLIENT) first on LD_LIBRARY_PATH, a device identity (FAKE_CUDA_BUS_ID, so that it joins a
# board), GPUPRIO_LOG=info, and a private board directory (GPUPRIO_BOARD_DIR, which top reads
# too). Every failed check prints what was expected and what came; the status is then 1.
set -u
if [ $# != 4 ]; then
    echo "usage: mps.sh CASE LIB CLIENT TOOL" >&2
    exit 2
fi
what=$1 lib=$2 client=$3 tool=$4
. "$(dirname "$0")/../tools/expect.sh"
fakedir=${FAKE_CUDA_DIR:-$(dirname "$client")/fakecuda}
if [ ! -e "$fakedir/libcuda.so.1" ]; then
    echo "FAIL: no fake driver (libcuda.so.1) in $fakedir"
    exit 1
fi

# Nothing inherited may decide an outcome: every gpuprio setting, the fake's switches and MPS's
# own share are what each run sets, or unset.
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
unset FAKE_CUDA_MPS FAKE_CUDA_CC_MAJOR FAKE_CUDA_SMS CUDA_MPS_ACTIVE_THREAD_PERCENTAGE

tmp=$(mktemp -d) || exit 1
pid= writer= load=
cleanup() {
    [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null
    [ -z "$load" ] || kill -9 "$load" 2>/dev/null
    [ -z "$writer" ] || kill -9 "$writer" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
export GPUPRIO_BOARD_DIR="$tmp/boards" FAKE_CUDA_BUS_ID="fake$$"
mkdir -m 700 "$GPUPRIO_BOARD_DIR"

# The client runs under gpuprio and the fake driver, with the VAR=VALUE settings of each run.
ld_path=$fakedir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
preload=$lib${LD_PRELOAD:+:$LD_PRELOAD}
# The client to its end, stdout and stderr into $tmp/NAME.out and NAME.err; its status must be 0.
run_client() { # NAME VAR=VALUE...
    _rc_name=$1
    shift
    env LD_LIBRARY_PATH="$ld_path" LD_PRELOAD="$preload" GPUPRIO_LOG=info "$@" "$client" \
        >"$tmp/$_rc_name.out" 2>"$tmp/$_rc_name.err"
    expect "$_rc_name: exit status" 0 $?
}
# In the background, waiting on $tmp/NAME.fifo once it printed "ready" (sets pid): 0 once ready.
# env is started directly, not through a function, so that $! is the client's own pid (env execs
# it), which top shows and the cleanup kills.
start_client() { # NAME VAR=VALUE...
    _sc_name=$1
    shift
    mkfifo "$tmp/$_sc_name.fifo" || exit 1
    env LD_LIBRARY_PATH="$ld_path" LD_PRELOAD="$preload" GPUPRIO_LOG=info "$@" "$client" \
        "$tmp/$_sc_name.fifo" >"$tmp/$_sc_name.out" 2>"$tmp/$_sc_name.err" &
    pid=$!
    wait_for 20 ready_or_gone "$tmp/$_sc_name.out"
    if ! grep -qx ready "$tmp/$_sc_name.out"; then
        echo "FAIL: $_sc_name: the client never got ready"
        fails=$((fails + 1))
        return 1
    fi
}
ready_or_gone() { # OUT
    grep -qx ready "$1" || ! running "$pid"
}
# Whether PID still runs: kill -0 also succeeds on a zombie, until the shell waits for it.
running() { # PID
    _r_state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ -n "$_r_state" ] && [ "$_r_state" != Z ]
}
# Lets the client started by start_client go, and waits for it (20 s at most: a client stuck
# in gpuprio must fail the check, not hang the test). Its exit status must be 0.
finish_client() { # NAME
    finish "$1" "$pid"
    pid=
}
finish() { # NAME PID: the same for the client PID waiting on $tmp/NAME.fifo
    echo go >"$tmp/$1.fifo" &
    writer=$! # blocks forever in open() if the client died before opening its FIFO
    wait_for 20 gone "$2" || kill -9 "$2" 2>/dev/null
    wait "$2"
    expect "$1: exit status" 0 $?
    kill -9 "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null
    writer=
}
gone() { # PID
    ! running "$1"
}

# Lines of FILE that contain TEXT (literally).
count() { # FILE TEXT
    grep -cF -- "$2" "$1"
}
# The "mps" value of each of PID's queue objects in top's JSON (one object a line), space
# separated; "missing" for an object without one.
mps_of_queues() { # FILE PID
    grep "\"pid\": $2," "$1" | grep '"kind": "queue"' |
        sed 's/.*"mps": \([a-z]*\).*/\1/; t; s/.*/missing/' | tr '\n' ' ' | sed 's/ $//'
}
sms_of() { # NAME
    sed -n 's/^sms //p' "$tmp/$1.out"
}

# detect: one client per FAKE_CUDA_MPS setting (1, 0, unset), looked at by top while it waits.
detect() { # NAME WANT-LINES WANT-MPS [VAR=VALUE]
    _d_name=$1 _d_lines=$2 _d_mps=$3
    shift 3
    start_client "$_d_name" "$@" || {
        finish_client "$_d_name"
        return
    }
    "$tool" top --json --all >"$tmp/$_d_name.top" 2>"$tmp/$_d_name.top.err"
    expect "$_d_name: gpuprio top --json --all: exit status" 0 $?
    expect "$_d_name: \"mps\" of its 2 queues in top --json --all" "$_d_mps $_d_mps" \
        "$(mps_of_queues "$tmp/$_d_name.top" "$pid")"
    finish_client "$_d_name"
    expect "$_d_name: lines with 'is an MPS client'" "$_d_lines" \
        "$(count "$tmp/$_d_name.err" "is an MPS client")"
    expect "$_d_name: of them, lines naming device 0" "$_d_lines" \
        "$(grep -F "is an MPS client" "$tmp/$_d_name.err" | grep -cw "device 0")"
}

case $what in
detect)
    detect mps 1 true FAKE_CUDA_MPS=1
    detect no_mps 0 false FAKE_CUDA_MPS=0
    detect unknown 0 null
    ;;
priority_map)
    for p in idle:0 low:0 normal:0 high:-1 critical:-2 50:-5; do
        prio=${p%%:*} want=${p#*:}
        run_client "priority_$prio" FAKE_CUDA_MPS=1 GPUPRIO_PRIORITY="$prio"
        expect "GPUPRIO_PRIORITY=$prio: stream priority" "$want" \
            "$(sed -n 's/^stream priority //p' "$tmp/priority_$prio.out")"
    done
    ;;
gate_fallback)
    run_client pascal FAKE_CUDA_MPS=1 FAKE_CUDA_CC_MAJOR=6
    expect "compute capability 6: lines saying Level 1 (before Volta)" 1 \
        "$(count "$tmp/pascal.err" "device 0: Level 1 only: an MPS client on a GPU before Volta")"
    expect "compute capability 6: lines saying Level 2" 0 \
        "$(count "$tmp/pascal.err" "device 0: Level 2")"
    run_client hopper FAKE_CUDA_MPS=1 FAKE_CUDA_CC_MAJOR=9
    expect "compute capability 9: lines saying Level 2" 1 \
        "$(count "$tmp/hopper.err" "device 0: Level 2")"
    expect "compute capability 9: lines saying Level 1" 0 \
        "$(count "$tmp/hopper.err" "device 0: Level 1")"
    ;;
gate_bound)
    # What one gate may hold back: 300 us in an MPS client, 100 without MPS, what
    # GPUPRIO_GATE_US says in either; a bad value leaves it unset (the default) with a warning.
    level2="device 0: Level 2 (lower priorities are held by gates on the device, one per"
    run_client mps FAKE_CUDA_MPS=1 FAKE_CUDA_CC_MAJOR=9
    expect "MPS: lines saying 300 us, an MPS client's default" 1 \
        "$(count "$tmp/mps.err" "$level2 300 us of predicted GPU time, an MPS client's default)")"
    run_client nomps FAKE_CUDA_MPS=0 FAKE_CUDA_CC_MAJOR=9
    expect "without MPS: lines saying 100 us" 1 \
        "$(count "$tmp/nomps.err" "$level2 100 us of predicted GPU time)")"
    run_client mps_set FAKE_CUDA_MPS=1 FAKE_CUDA_CC_MAJOR=9 GPUPRIO_GATE_US=50
    expect "MPS, GPUPRIO_GATE_US=50: lines saying 50 us" 1 \
        "$(count "$tmp/mps_set.err" "$level2 50 us of predicted GPU time)")"
    run_client nomps_set FAKE_CUDA_MPS=0 FAKE_CUDA_CC_MAJOR=9 GPUPRIO_GATE_US=400
    expect "without MPS, GPUPRIO_GATE_US=400: lines saying 400 us" 1 \
        "$(count "$tmp/nomps_set.err" "$level2 400 us of predicted GPU time)")"
    run_client mps_bad FAKE_CUDA_MPS=1 FAKE_CUDA_CC_MAJOR=9 GPUPRIO_GATE_US=0
    expect "MPS, GPUPRIO_GATE_US=0: warnings leaving it unset" 1 \
        "$(count "$tmp/mps_bad.err" "GPUPRIO_GATE_US='0' is not a whole number of microseconds from 1 to 10000000; leaving it unset")"
    expect "MPS, GPUPRIO_GATE_US=0: lines saying 300 us" 1 \
        "$(count "$tmp/mps_bad.err" "$level2 300 us of predicted GPU time, an MPS client's default)")"
    ;;
reserve)
    run_client low FAKE_CUDA_MPS=1 GPUPRIO_CU_RESERVE=25% GPUPRIO_PRIORITY=low
    expect "GPUPRIO_CU_RESERVE=25%, low: sms (75% of 132, in pairs)" 98 "$(sms_of low)"
    expect "GPUPRIO_CU_RESERVE=25%, low: lines 'MPS limits this process to 75% of the device: 98 SMs'" 1 \
        "$(count "$tmp/low.err" "MPS limits this process to 75% of the device: 98 SMs")"
    run_client high FAKE_CUDA_MPS=1 GPUPRIO_CU_RESERVE=25% GPUPRIO_PRIORITY=high
    expect "GPUPRIO_CU_RESERVE=25%, high: sms" 132 "$(sms_of high)"
    expect "GPUPRIO_CU_RESERVE=25%, high: lines 'MPS limits this process'" 0 \
        "$(count "$tmp/high.err" "MPS limits this process")"
    run_client own_share FAKE_CUDA_MPS=1 GPUPRIO_CU_RESERVE=25% GPUPRIO_PRIORITY=low \
        CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
    expect "GPUPRIO_CU_RESERVE=25% and CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50, low: sms" 66 \
        "$(sms_of own_share)"
    run_client count FAKE_CUDA_MPS=1 GPUPRIO_CU_RESERVE=8 GPUPRIO_PRIORITY=low
    expect "GPUPRIO_CU_RESERVE=8, low: sms" 132 "$(sms_of count)"
    expect "GPUPRIO_CU_RESERVE=8, low: lines 'give it as a percentage'" 1 \
        "$(count "$tmp/count.err" "give it as a percentage")"
    ;;
long_wait)
    hint="as MPS clients (on NVIDIA) a higher priority would wait for SMs, not for such a command's end"
    # The load's queue in doctor's JSON: "LONGEST_NS WAITS_LESS", or nothing while not listed.
    load_in_doctor() { # JSON
        "$tool" doctor --json >"$1" 2>"$1.err"
        /usr/bin/python3 -c '
import json, sys
for q in json.load(open(sys.argv[1]))["boards"]["long_commands"]:
    if q["pid"] == int(sys.argv[2]):
        print(q["longest_command_ns"], str(q["waits_less_under_mps"]).lower())
' "$1" "$load" 2>/dev/null
    }
    # Listed with its kernels learned (the first commands a queue runs are learned as less).
    listed() {
        set -- $(load_in_doctor "$tmp/doctor.json")
        [ -n "${1:-}" ] && [ "$1" -ge 2500000 ]
    }
    for mode in 0 1; do
        start_client "high$mode" FAKE_CUDA_MPS=$mode GPUPRIO_PRIORITY=high || continue
        mkfifo "$tmp/load$mode.fifo" || exit 1
        env LD_LIBRARY_PATH="$ld_path" LD_PRELOAD="$preload" GPUPRIO_LOG=info FAKE_CUDA_MPS=$mode \
            GPUPRIO_PRIORITY=low "$client" "$tmp/load$mode.fifo" 5 >"$tmp/load$mode.out" \
            2>"$tmp/load$mode.err" &
        load=$!
        if wait_for 30 listed; then
            set -- $(load_in_doctor "$tmp/doctor.json")
            if [ "$1" -ge 2500000 ] && [ "$1" -le 50000000 ]; then
                echo "ok: FAKE_CUDA_MPS=$mode: doctor lists the load's 5-ms kernels ($1 ns)"
            else
                echo "FAIL: FAKE_CUDA_MPS=$mode: doctor gives the load's longest command as $1 ns, not about 5 ms"
                fails=$((fails + 1))
            fi
            want=$([ $mode = 0 ] && echo true || echo false)
            expect "FAKE_CUDA_MPS=$mode: doctor --json: waits_less_under_mps" "$want" "$2"
            "$tool" doctor >"$tmp/doctor$mode.txt" 2>&1
            expect "FAKE_CUDA_MPS=$mode: doctor: lines saying MPS would shorten the wait" \
                "$([ $mode = 0 ] && echo 1 || echo 0)" "$(count "$tmp/doctor$mode.txt" "$hint")"
        else
            echo "FAIL: FAKE_CUDA_MPS=$mode: doctor never listed the load's queue"
            cat "$tmp/doctor.json" "$tmp/doctor.json.err" "$tmp/load$mode.err"
            fails=$((fails + 1))
        fi
        finish "load$mode" "$load"
        load=
        finish_client "high$mode"
    done
    ;;
*)
    echo "mps.sh: unknown case '$what' (detect, priority_map, gate_fallback, gate_bound, reserve, long_wait)" >&2
    exit 2
    ;;
esac

if [ "$fails" != 0 ]; then
    for f in "$tmp"/*.out "$tmp"/*.err "$tmp"/*.top "$tmp"/*.top.err; do
        [ -s "$f" ] || continue
        echo "---- $(basename "$f")"
        cat "$f"
    done
    echo "FAIL: $fails check(s) of mps.sh $what"
    exit 1
fi
echo "mps.sh $what: all checks passed"
