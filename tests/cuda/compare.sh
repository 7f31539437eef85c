#!/bin/sh
# compare.sh PROG SHIM [ARGS...]: runs PROG without the shim, then with SHIM preloaded and
# "--shim ARGS" (PROG then also checks what the shim saw, on stderr); fails unless both runs
# print the same stdout and exit with the same status, 0. The environment (GPUPRIO_* settings)
# is the same for both runs; without the shim nothing reads it. With COMPARE_PLAIN=1 the second
# run gets no --shim either (for setups where the shim must stand aside), and with
# COMPARE_STDERR=TEXT its stderr must contain TEXT.
set -u
prog=$1 shim=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$prog" > "$dir/native.out" 2> "$dir/native.err"
native=$?
if [ "${COMPARE_PLAIN:-0}" = 1 ]; then
    LD_PRELOAD="$shim${LD_PRELOAD:+:$LD_PRELOAD}" "$prog" "$@" > "$dir/shim.out" 2> "$dir/shim.err"
else
    LD_PRELOAD="$shim${LD_PRELOAD:+:$LD_PRELOAD}" "$prog" --shim "$@" > "$dir/shim.out" 2> "$dir/shim.err"
fi
shimmed=$?
cat "$dir/shim.err" >&2
status=0
if ! diff -u "$dir/native.out" "$dir/shim.out"; then
    echo "stdout differs with the shim"
    status=1
fi
if [ "$native" != "$shimmed" ] || [ "$native" != 0 ]; then
    echo "exit status: $native without the shim, $shimmed with it (expected 0 and 0)"
    cat "$dir/native.err" >&2
    status=1
fi
if [ -n "${COMPARE_STDERR:-}" ] && ! grep -qF "$COMPARE_STDERR" "$dir/shim.err"; then
    echo "stderr with the shim lacks: $COMPARE_STDERR"
    status=1
fi
[ $status = 0 ] && echo "identical: $(wc -l < "$dir/native.out") lines, exit status $native"
exit $status
