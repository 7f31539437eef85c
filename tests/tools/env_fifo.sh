#!/bin/sh
# env_fifo.sh GPUPRIO WORKER SHIM: a FIFO named by a variable that names a file to read or a
# library to load (GPUPRIO_CONFIG, GPUPRIO_HIP_LIBRARY, GPUPRIO_CUDA_LIBRARY) is refused by its
# type, never opened for reading (which waits for a writer for ever):
#   - the application under SHIM finishes with its own output and exit status, and gpuprio says
#     exactly one thing, naming the variable: WORKER (board_worker, on a shared simulated device)
#     scheduled without the file; OVERRIDE (tests/preload/binding/override.c) unscheduled, its
#     HIP calls reaching its own runtime;
#   - gpuprio top --once, metrics --once, doctor and set return, with that one message.
# Each run is bounded by `timeout`: a hang is a failure (status 124), not a blocked test.
#
#   env_fifo.sh GPUPRIO WORKER OVERRIDE SHIM
set -u
gpuprio=$1 worker=$2 override=$3 shim=$4
. "$(dirname "$0")/expect.sh"
sandbox_boards envfifo
trap 'sandbox_cleanup' EXIT
trap 'exit 1' HUP INT TERM
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Z_]*\)=.*/\1/p'); do
    [ "$v" = GPUPRIO_BOARD_DIR ] || unset "$v"
done
export HIPSIM_SHARED=$name GPUPRIO_CONFIG=$tmp/absent.conf
fifo=$tmp/fifo
mkfifo "$fifo"
# Generous: a run takes well under a second; only a hang reaches it.
bound=10

# The lines gpuprio wrote in FILE, and of those, the ones naming VARIABLE.
said() { grep -c '^gpuprio:' "$1"; }
names() { grep '^gpuprio:' "$1" | grep -c -- "$2"; }

# NAME STATUS MESSAGE VARIABLE COMMAND...: COMMAND under the shim with VARIABLE=fifo (set by the
# one env, so that no program but COMMAND is preloaded: a sanitizer build's shim needs its
# runtime, which only the test's own programs have); gpuprio says MESSAGE only.
app() {
    _app=$1 _status=$2 _msg=$3 _var=$4
    shift 4
    echo go | timeout $bound env "$_var=$fifo" LD_PRELOAD="$shim" "$@" >"$tmp/app.out" \
        2>"$tmp/app.err"
    expect "$_app: exit status (124: it hung)" "$_status" $?
    expect "$_app: gpuprio said one thing" 1 "$(said "$tmp/app.err")"
    expect "$_app: it names the variable and why" 1 "$(names "$tmp/app.err" "$_msg")"
    show_stderr "$tmp" app
}
app "app, GPUPRIO_CONFIG a FIFO" 0 "$fifo is not a regular file .*GPUPRIO_CONFIG must name a regular file" \
    GPUPRIO_CONFIG "$worker" 1 saturate 5 100
expect "app, GPUPRIO_CONFIG a FIFO: its output (ready, done)" "1 1" \
    "$(grep -c '^ready$' "$tmp/app.out") $(grep -c '^done ' "$tmp/app.out")"
# passthrough 3: gpuprio bound to nothing, the program's HIP calls right, its status 3.
app "app, GPUPRIO_HIP_LIBRARY a FIFO" 3 "GPUPRIO_HIP_LIBRARY=$fifo is not a regular file" \
    GPUPRIO_HIP_LIBRARY "$override" passthrough 3

cli() { # VARIABLE STATUS MESSAGE COMMAND...: gpuprio COMMAND with VARIABLE=fifo
    _var=$1 _status=$2 _msg=$3
    shift 3
    timeout $bound env "$_var=$fifo" "$gpuprio" "$@" >"$tmp/cli.out" 2>"$tmp/cli.err"
    expect "gpuprio $*, $_var a FIFO: exit status (124: it hung)" "$_status" $?
    expect "gpuprio $*, $_var a FIFO: said once, naming the variable" 1 \
        "$(names "$tmp/cli.err" "$_msg")"
    show_stderr "$tmp" cli
}
conf="$fifo is not a regular file .*GPUPRIO_CONFIG must name a regular file"
cli GPUPRIO_CONFIG 0 "$conf" top --once
cli GPUPRIO_CONFIG 0 "$conf" metrics --once
# doctor: the refused file is one of its problems (status 1).
cli GPUPRIO_CONFIG 1 "$conf" doctor
# set: no such process on any board (status 1), after reading the file.
cli GPUPRIO_CONFIG 1 "$conf" set 999999999 high
# doctor binds the runtimes as the shims do, CUDA's driver too.
for v in GPUPRIO_HIP_LIBRARY GPUPRIO_CUDA_LIBRARY; do
    timeout $bound env "$v=$fifo" "$gpuprio" doctor >"$tmp/cli.out" 2>"$tmp/cli.err"
    status=$?
    expect "gpuprio doctor, $v a FIFO: it returned (124: it hung)" yes \
        "$([ $status != 124 ] && [ $status != 137 ] && echo yes || echo "no ($status)")"
    expect "gpuprio doctor, $v a FIFO: said once, naming the variable" 1 \
        "$(names "$tmp/cli.err" "$v=$fifo is not a regular file")"
    show_stderr "$tmp" cli
done
[ $fails = 0 ]
