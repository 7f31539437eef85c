#!/bin/sh
# board_dir_unsafe.sh GPUPRIO WORKER SHIM HIP_SIM_LIBRARY: a board directory (GPUPRIO_BOARD_DIR)
# where another user could rename or remove the user's boards, and so split its processes: one
# warning per process, naming the variable, the directory, what is wrong and what is safe; the
# process schedules there all the same (the user's choice). Cases:
#   - mode 0777 and 2775 (writable by others, by group; not sticky), and as root a directory of
#     another user (0700, uid 65534): one warning each, and the worker (WORKER = board_worker)
#     runs as ever, exit 0;
#   - mode 1777 (sticky, as /dev/shm) and 0700: no warning;
#   - a relative path: one warning;
#   - gpuprio doctor: the same in its board directory line and as a problem (exit 1), and in its
#     JSON ("unsafe"); nothing for 0700 (exit 0).
#
#   board_dir_unsafe.sh GPUPRIO WORKER SHIM HIP_SIM_LIBRARY
set -u
gpuprio=$1 worker=$2 shim=$3 sim=$4
. "$(dirname "$0")/expect.sh"
sandbox boarddir
trap 'sandbox_cleanup' EXIT
trap 'exit 1' HUP INT TERM
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export HIPSIM_SHARED=$name GPUPRIO_CONFIG=$tmp/absent.conf
bound=30

unsafe() { grep -c '^gpuprio: warn: GPUPRIO_BOARD_DIR=.* is unsafe: ' "$1"; }

dir_case() { # NAME MODE WARNINGS TEXT: the worker with its board directory of MODE
    mkdir "$tmp/$1"
    chmod "$2" "$tmp/$1"
    [ "$1" != foreign ] || chown 65534 "$tmp/$1"
    echo go | (cd "$tmp" && timeout $bound env GPUPRIO_BOARD_DIR="$5" LD_PRELOAD="$shim" \
        "$worker" 1 saturate 5 100) >"$tmp/app.out" 2>"$tmp/app.err"
    expect "$1 ($2): exit status" 0 $?
    expect "$1 ($2): it ran (ready, done)" "1 1" \
        "$(grep -c '^ready$' "$tmp/app.out") $(grep -c '^done ' "$tmp/app.out")"
    expect "$1 ($2): unsafe warnings" "$3" "$(unsafe "$tmp/app.err")"
    expect "$1 ($2): nothing else said" "$3" "$(grep -c '^gpuprio:' "$tmp/app.err")"
    if [ "$3" = 1 ]; then
        expect "$1 ($2): it says what is wrong and what is safe" 1 \
            "$(grep -c "GPUPRIO_BOARD_DIR=$5 is unsafe: $4.* Safe is an absolute path to a directory owned by this user or root, not writable by group or others unless sticky" "$tmp/app.err")"
    fi
    show_stderr "$tmp" app
}
abs() { dir_case "$1" "$2" "$3" "${4:-}" "$tmp/$1"; }
others="writable by group and others without the sticky bit (mode 0777): another user can rename or remove this user's boards in it"
abs open 0777 1 "$others"
abs group 2775 1 "writable by group without the sticky bit (mode 2775): another user"
abs sticky 1777 0
abs own 0700 0
dir_case relative 0700 1 "a relative path" relative
if [ "$(id -u)" = 0 ]; then
    abs foreign 0700 1 "owned by uid 65534, another user: another user can rename"
fi

export GPUPRIO_HIP_LIBRARY=$sim
doctor() { # DIR STATUS [JSON]
    timeout $bound env GPUPRIO_BOARD_DIR="$1" "$gpuprio" doctor ${3:-} >"$tmp/doctor.out" \
        2>"$tmp/doctor.err"
    expect "doctor, $1: exit status" "$2" $?
}
doctor "$tmp/open" 1
expect "doctor, 0777: the board directory line" 1 \
    "$(grep -c "^board directory: $tmp/open (from environment; unsafe: $others), on tmpfs" "$tmp/doctor.out")"
expect "doctor, 0777: a problem" 1 \
    "$(grep -c "^  the board directory $tmp/open is unsafe: $others, and this user's processes would then stop scheduling together" "$tmp/doctor.out")"
doctor "$tmp/open" 1 --json
expect "doctor --json, 0777: unsafe" "$others" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["board"]["unsafe"])' "$tmp/doctor.out" 2>&1)"
doctor "$tmp/own" 0
expect "doctor, 0700: not unsafe" 0 "$(grep -c unsafe "$tmp/doctor.out")"
doctor "$tmp/own" 0 --json
expect "doctor --json, 0700: unsafe is null" None \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["board"]["unsafe"])' "$tmp/doctor.out" 2>&1)"
show_stderr "$tmp" doctor
[ $fails = 0 ]
