#!/bin/sh
# disk_board.sh - with the board directory on a disk filesystem, the board's gate lines cannot be
# registered (the runtimes refuse long-term pinning of a shared file mapping outside tmpfs and
# hugetlbfs, and so does the simulator), and each process mirrors its gates instead (a private,
# registered copy of its lines that it keeps up with the board: docs/design.md, "Mirrored
# gates"): a low-priority worker held for a high-priority one is held at Level 2 (gpuprio top's
# "level"), its gates "mirrored", with no "Level 1 only" warning, and says at info that its gates
# are mirrored and why. With the same workers and the board on /dev/shm (tmpfs) it is held at
# Level 2 with its gates "direct"; with GPUPRIO_LEVEL=1 on the disk directory, Level 1. No
# warning in any of them.
#
#   disk_board.sh GPUPRIO TOOLS_WORKER HIP_SHIM DISK_DIR
# DISK_DIR: a directory on a disk filesystem (the build tree); the test is skipped (77) where it
# is on tmpfs or hugetlbfs.
set -u
gpuprio=$1 worker=$2 shim=$3 disk=$4
. "$(dirname "$0")/expect.sh"
need_disk_fs "$disk"
sandbox diskboard
lowpid= highpid=
diskboards=
cleanup() {
    sandbox_cleanup $lowpid $highpid
    [ -z "$diskboards" ] || rm -rf "$diskboards"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
diskboards=$(mktemp -d "$disk/gpuprio-disk-boards.XXXXXX") || exit 1
chmod 700 "$diskboards"
mkdir -m 700 "$tmp/boards"
unset GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_STREAM_PRIORITIES GPUPRIO_LOG GPUPRIO_LEVEL
export HIPSIM_SHARED=$name
ready() { grep -q '^ready' "$1"; }
warnings() { grep -c 'Level 1 only' "$1"; }

# The level and gates gpuprio top shows for the low worker's queue once it is held (suspended or
# throttled), as "LEVEL GATES" (2 mirrored, 2 direct, 1 null), or "never".
held_level() { # RUN
    i=0
    while [ $i -lt 300 ]; do
        "$gpuprio" top --once --json >"$tmp/$1.json" 2>"$tmp/$1.json.err"
        row=$(grep "\"pid\": $lowpid," "$tmp/$1.json" | grep -E '"gate": "(suspended|throttled)"')
        if [ -n "$row" ]; then
            printf '%s\n' "$row" | sed -n 's/.*"level": \([0-9]*\), "gates": "*\([a-z]*\).*/\1 \2/p' |
                head -1
            return
        fi
        i=$((i + 1))
        sleep 0.1
    done
    echo never
}

run() { # RUN BOARD_DIR [VAR=VALUE...]: low then high worker; prints the low queue's held level
    r=$1 dir=$2
    shift 2
    env "$@" GPUPRIO_BOARD_DIR="$dir" GPUPRIO_PRIORITY=low LD_PRELOAD="$shim" "$worker" \
        "$tmp/$r.stop" 60 >"$tmp/$r.low.out" 2>"$tmp/$r.low.err" &
    lowpid=$!
    wait_for 30 ready "$tmp/$r.low.out" || { echo "FAIL: $r: the low worker never ran"; cat "$tmp/$r.low.err"; }
    env "$@" GPUPRIO_BOARD_DIR="$dir" GPUPRIO_PRIORITY=high LD_PRELOAD="$shim" "$worker" \
        "$tmp/$r.stop" 60 >"$tmp/$r.high.out" 2>"$tmp/$r.high.err" &
    highpid=$!
    GPUPRIO_BOARD_DIR=$dir held_level "$r" >"$tmp/$r.level"
    touch "$tmp/$r.stop"
    wait "$lowpid" "$highpid"
    lowpid= highpid=
}

run disk "$diskboards" GPUPRIO_LOG=info
expect "disk board: the held low queue's level and gates" "2 mirrored" "$(cat "$tmp/disk.level")"
expect "disk board: no warning (low)" 0 "$(warnings "$tmp/disk.low.err")"
expect "disk board: no warning (high)" 0 "$(warnings "$tmp/disk.high.err")"
expect "disk board: said at info, with the filesystem" 1 \
    "$(grep -c "device 0: Level 2 (.*), mirrored: the runtime refused to register the board's gate lines ($diskboards is on [a-z0-9]*)" "$tmp/disk.low.err")"

run tmpfs "$tmp/boards" GPUPRIO_LOG=info
expect "tmpfs board: the held low queue's level and gates" "2 direct" "$(cat "$tmp/tmpfs.level")"
expect "tmpfs board: no warning (low)" 0 "$(warnings "$tmp/tmpfs.low.err")"
expect "tmpfs board: no warning (high)" 0 "$(warnings "$tmp/tmpfs.high.err")"
expect "tmpfs board: not mirrored" 0 "$(grep -c 'mirrored' "$tmp/tmpfs.low.err")"

run level1 "$diskboards" GPUPRIO_LEVEL=1
expect "GPUPRIO_LEVEL=1 on the disk board: level" "1 null" "$(cat "$tmp/level1.level")"
expect "GPUPRIO_LEVEL=1: no warning (low)" 0 "$(warnings "$tmp/level1.low.err")"
expect "GPUPRIO_LEVEL=1: no warning (high)" 0 "$(warnings "$tmp/level1.high.err")"

if [ "$fails" -gt 0 ]; then
    for f in "$tmp"/*.err; do
        [ -s "$f" ] && { echo "--- $f"; cat "$f"; }
    done
fi
[ "$fails" -eq 0 ]
