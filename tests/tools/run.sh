#!/bin/sh
# run.sh - `gpuprio run`: the command's exit status and death by signal are its own (it is exec'd),
# the settings and the preload library reach it, what LD_PRELOAD held is kept, and the tool's own
# failures are 125 (bad priority, policy, window, missing library), 126 (cannot execute) and 127
# (not found).
#
#   run.sh GPUPRIO TOOLS_CHILD WAITSTATUS HIP_SHIM EMPTY_LIB [CUDA_SHIM]
#
# TOOLS_CHILD is the command run (a C program, so that sanitizer builds can preload their
# instrumented library into it); WAITSTATUS prints "exit N" or "signal N" for a command.
set -u
gpuprio=$1 child=$2 waitstatus=$3 shim=$4 empty=$5 cuda=${6:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset GPUPRIO_PRIORITY GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_LIBRARY_DIR LD_PRELOAD

. "$(dirname "$0")/expect.sh"

# Exit statuses pass through unchanged.
for code in 0 3 255; do
    expect "exit $code" "exit $code" "$("$waitstatus" "$gpuprio" run -- "$child" exit $code)"
done
# Death by signal: gpuprio run exec'd the command, so the process it started as dies of it...
expect "SIGTERM" "signal 15" "$("$waitstatus" "$gpuprio" run -p low -- "$child" signal 15)"
expect "SIGKILL" "signal 9" "$("$waitstatus" "$gpuprio" run -- "$child" signal 9)"
# ... and a shell running it sees what it would see of the command itself.
status=$(sh -c '"$1" run -p high -- "$2" signal 15; echo $?' sh "$gpuprio" "$child" 2>/dev/null)
expect "SIGTERM seen by a shell" 143 "$status"

# The settings and the library reach the command; what LD_PRELOAD held is kept, after ours.
out=$(LD_PRELOAD=$empty "$gpuprio" run -p high --policy passthrough --window 3 --window-us 250 \
    -- "$child" env "$shim")
expect "priority" "priority=high" "$(echo "$out" | grep '^priority=')"
expect "policy" "policy=passthrough" "$(echo "$out" | grep '^policy=')"
expect "window" "window=3" "$(echo "$out" | grep '^window=')"
expect "budget" "window_us=250" "$(echo "$out" | grep '^window_us=')"
expect "shim preloaded by absolute path" "shim_preloaded=yes" "$(echo "$out" | grep '^shim_preloaded=')"
# By default one library: CUDA's where an NVIDIA driver is loaded (and it was built), else HIP's.
want="LD_PRELOAD=$shim:$empty"
if [ -n "$cuda" ] && { [ -e /proc/driver/nvidia/version ] || [ -e /dev/nvidiactl ]; }; then
    want="LD_PRELOAD=$cuda:$empty"
fi
expect "LD_PRELOAD: the library, then what was there" "$want" "$(echo "$out" | grep '^LD_PRELOAD=')"
if [ -n "$cuda" ]; then
    out=$(LD_PRELOAD=$empty "$gpuprio" run --shim all -- "$child" env "$shim")
    expect "--shim all" "LD_PRELOAD=$shim:$cuda:$empty" "$(echo "$out" | grep '^LD_PRELOAD=')"
fi
out=$("$gpuprio" run --shim hip -p -10 -- "$child" env "$shim")
expect "a negative priority" "priority=-10" "$(echo "$out" | grep '^priority=')"
expect "--shim hip" "LD_PRELOAD=$shim" "$(echo "$out" | grep '^LD_PRELOAD=')"
out=$(GPUPRIO_PRIORITY=low GPUPRIO_WINDOW=7 "$gpuprio" run --shim hip "$child" env "$shim")
expect "inherited priority" "priority=low" "$(echo "$out" | grep '^priority=')"
expect "inherited window" "window=7" "$(echo "$out" | grep '^window=')"
# GPUPRIO_LIBRARY_DIR names where the libraries are.
mkdir "$tmp/lib"
cp "$shim" "$tmp/lib/libgpuprio-hip.so"
out=$(GPUPRIO_LIBRARY_DIR=$tmp/lib "$gpuprio" run --shim hip -- "$child" env "$tmp/lib/libgpuprio-hip.so")
expect "GPUPRIO_LIBRARY_DIR" "shim_preloaded=yes" "$(echo "$out" | grep '^shim_preloaded=')"

# The tool's own failures: 125 with a message that names what is accepted.
fail_case() { # WHAT STATUS PATTERN ARGS...
    what=$1 want=$2 pattern=$3
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    expect "$what: status" "$want" "$?"
    if ! grep -q -- "$pattern" "$tmp/err"; then
        echo "FAIL: $what: no '$pattern' in: $(cat "$tmp/err")"
        fails=$((fails + 1))
    fi
    if [ -s "$tmp/out" ]; then
        echo "FAIL: $what: the command ran: $(cat "$tmp/out")"
        fails=$((fails + 1))
    fi
}
fail_case "bad priority" 125 "accepted: idle, low, normal, high, critical" \
    "$gpuprio" run -p urgent -- "$child" env "$shim"
fail_case "priority out of range" 125 "from -1000 to 1000" \
    "$gpuprio" run --priority=1001 -- "$child" env "$shim"
fail_case "bad policy" 125 "accepted: hpf, passthrough" \
    "$gpuprio" run --policy fifo -- "$child" env "$shim"
fail_case "bad window" 125 "from 1 to 1024" "$gpuprio" run --window 0 -- "$child" env "$shim"
fail_case "bad budget" 125 "from 0 to 10000000" "$gpuprio" run --window-us 1ms -- "$child" env "$shim"
fail_case "unknown option" 125 "unknown option" "$gpuprio" run --bogus -- "$child" env "$shim"
fail_case "missing value" 125 "needs a value" "$gpuprio" run -p
fail_case "no command" 125 "no command" "$gpuprio" run -p high
fail_case "missing library" 125 "cannot find libgpuprio-hip.so in $tmp/none" \
    env GPUPRIO_LIBRARY_DIR="$tmp/none" "$gpuprio" run -- "$child" env "$shim"
fail_case "command not found" 127 "no-such-command" "$gpuprio" run -- "$tmp/no-such-command"
printf 'not a program\n' >"$tmp/data"
chmod 644 "$tmp/data"
fail_case "not executable" 126 "Permission denied" "$gpuprio" run -- "$tmp/data"

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
