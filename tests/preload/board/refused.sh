#!/bin/sh
# refused.sh WORKER SHIM: a board that is not right (another version, the wrong size, garbage,
# open to others, a FIFO, a symbolic link planted at its path) is refused with exactly one
# warning naming it, and the program runs on as without a board: same output, exit 0. A file of
# another owner at its path is one warning too, saying whose it is: the process uses a board under
# an alternate name instead, which it removes as the last to leave. A good board is removed by
# the last process to leave it (and a refused one is left alone).
set -u
worker=$1 shim=$2
dir=$(mktemp -d /dev/shm/gpuprio-refused-XXXXXX)
name=refused$$
trap 'rm -rf "$dir"; rm -f /dev/shm/hipsim-$(id -u)-$name-0' EXIT
export HIPSIM_SHARED=$name GPUPRIO_BOARD_DIR=$dir
failures=0
run() { # NAME: runs the worker under the shim; checks output, status and the one warning
    echo go | LD_PRELOAD=$shim GPUPRIO_PRIORITY=high "$worker" 1 saturate 20 100 \
        >"$dir/out" 2>"$dir/err"
    status=$?
    warnings=$(grep -c 'gpuprio: .*board' "$dir/err")
    if [ $status != 0 ] || [ "$(grep -v '^held ' "$dir/out")" != "$(printf 'ready\ndone 10')" ] ||
        [ "$warnings" != "$2" ]; then
        echo "FAIL $1: status $status, $warnings board warnings (expected $2); output:"
        cat "$dir/out" "$dir/err"
        failures=$((failures + 1))
    else
        echo "ok $1: $(head -n 1 "$dir/err")"
    fi
}
run "a new board" 0
board=$(echo "$dir"/gpuprio-"$(id -u)"-v*-sim_"${name}"_00) # the version is in its name
[ -e "$board" ] && { echo "FAIL: the last process to use $board left it behind"; exit 1; }
# A good board to spoil: copied while a process holds it (hold: it waits for a second line).
mkfifo "$dir/in"
LD_PRELOAD=$shim GPUPRIO_PRIORITY=high "$worker" 1 hold 100 <"$dir/in" >"$dir/held" 2>&1 &
holder=$!
exec 3>"$dir/in"
echo go >&3
tries=0
until grep -q ready "$dir/held" || [ $tries = 200 ]; do sleep 0.05; tries=$((tries + 1)); done
board=$(echo "$dir"/gpuprio-"$(id -u)"-v*-sim_"${name}"_00)
[ -f "$board" ] || { echo "FAIL: no board was created at $board"; kill $holder; exit 1; }
cp "$board" "$dir/good"
echo go >&3
exec 3>&-
wait $holder || { echo "FAIL: the process holding the board failed:"; cat "$dir/held"; exit 1; }
[ -e "$board" ] && { echo "FAIL: the last process to use $board left it behind"; exit 1; }
echo "ok the last process to leave the board removed it"
fresh() { rm -f "$board"; cp "$dir/good" "$board"; chmod 600 "$board"; }

fresh; printf '\377' | dd of="$board" bs=1 seek=8 conv=notrunc 2>/dev/null
run "another version" 1
fresh; truncate -s 4096 "$board"
run "the wrong size" 1
fresh; head -c "$(stat -c %s "$dir/good")" /dev/urandom >"$board"
run "garbage" 1
fresh; chmod 644 "$board"
run "open to other users" 1
if [ "$(id -u)" = 0 ]; then
    fresh; chown 65534:65534 "$board"
    run "another owner" 1
    grep -q "is a file of user 65534, who made it first" "$dir/err" ||
        { echo "FAIL: the warning does not say whose the file is"; failures=$((failures + 1)); }
    for left in "$board"+*; do
        [ -e "$left" ] && { echo "FAIL: $left left behind"; failures=$((failures + 1)); }
    done
fi
rm -f "$board"; mkfifo "$board"
run "a FIFO" 1
rm -f "$board"; cp "$dir/good" "$dir/elsewhere"; ln -s "$dir/elsewhere" "$board"
run "a symbolic link" 1
[ -L "$board" ] || { echo "FAIL: the symbolic link was replaced"; failures=$((failures + 1)); }
exit $failures
