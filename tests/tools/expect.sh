# expect.sh - sourced by the shell tests of the command, the package and the containers:
# one check that counts failures in $fails, and what the scripts that run a program without and
# under gpuprio next to a high-priority neighbour share (tests/graphs, the reset scripts). POSIX sh.
#
#   expect WHAT EXPECTED ACTUAL    prints "ok: WHAT", or a FAIL line naming both values
#   show_stderr DIR NAME...        prints DIR/NAME.err of each NAME whose file is not empty
#   wait_for SECONDS COMMAND...    until COMMAND succeeds (0), or SECONDS passed (1)
#   sandbox PREFIX                 sets tmp (a new directory) and name (PREFIX, unique), for a
#                                  simulated device shared as HIPSIM_SHARED=$name; tmp is on
#                                  /dev/shm (tmpfs, as the default board directory), where a
#                                  board's gates can be registered (Level 2)
#   sandbox_boards PREFIX          sandbox, and exports GPUPRIO_BOARD_DIR=$tmp/boards, a new
#                                  directory of mode 700
#   sandbox_cleanup PID...         kills the PIDs still there, removes $tmp and the device's
#                                  shared memory (call it from the script's EXIT trap)
#   need_disk_fs DIR               exits 77 (skipped), saying why, unless DIR is on a disk
#                                  filesystem (not tmpfs or hugetlbfs: mirrored gates' case)
#   prom_checks CHECKER PROM OUT   CHECKER (tests/tools/prom_check.py) on PROM, a `gpuprio
#                                  metrics` sample: "ok", or FAIL with its complaints (in OUT)
#   start_high ARGS...             the high-priority neighbour, `env ARGS...` in the background,
#                                  its stdout the FIFO $tmp/ready (made here), its stderr
#                                  $tmp/high.err: once it said "ready", its pid in high; else a
#                                  FAIL line, its stderr, and exit 1
#   same_as_native DIR NATIVE SHIMMED
#                                  the program's run under gpuprio against its run without:
#                                  DIR/shim.out against DIR/native.out (diff -u), the exit
#                                  statuses SHIMMED and NATIVE against 0; a FAIL line for each
#                                  that differs, and 1; else 0
fails=0

expect() { # WHAT EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then
        echo "ok: $1"
    else
        echo "FAIL: $1: expected '$2', got '$3'"
        fails=$((fails + 1))
    fi
}

# sh has no local variables: the functions' own are prefixed, so that none overwrites a
# script's (name, tmp, dir...).
show_stderr() { # DIR NAME...
    _ss_dir=$1
    shift
    for _ss_name in "$@"; do
        if [ -s "$_ss_dir/$_ss_name.err" ]; then
            echo "$_ss_name's stderr:"
            cat "$_ss_dir/$_ss_name.err"
        fi
    done
}

sandbox() { # PREFIX
    tmp=$(mktemp -d /dev/shm/gpuprio-test.XXXXXX) || exit 1
    name=$1-$$-$(date +%s%N)
}

sandbox_boards() { # PREFIX
    sandbox "$1"
    export GPUPRIO_BOARD_DIR="$tmp/boards"
    mkdir -m 700 "$GPUPRIO_BOARD_DIR"
}

sandbox_cleanup() { # PID...
    for _sc_pid in "$@"; do kill -9 "$_sc_pid" 2>/dev/null; done
    rm -rf "$tmp"
    rm -f "/dev/shm/hipsim-$(id -u)-$name-0"
}

wait_for() { # SECONDS COMMAND...
    _wf_until=$(($(date +%s) + $1))
    shift
    while ! "$@"; do
        [ "$(date +%s)" -lt $_wf_until ] || return 1
        sleep 0.05
    done
}

start_high() { # ARGS...
    mkfifo "$tmp/ready" || exit 1
    env "$@" >"$tmp/ready" 2>"$tmp/high.err" &
    high=$!
    read -r _sh_ready <"$tmp/ready"
    if [ "$_sh_ready" != ready ]; then
        echo "FAIL: the high-priority neighbour did not start"
        cat "$tmp/high.err"
        exit 1
    fi
}

same_as_native() { # DIR NATIVE SHIMMED
    _sn_status=0
    if ! diff -u "$1/native.out" "$1/shim.out"; then
        echo "FAIL: stdout differs under gpuprio"
        _sn_status=1
    fi
    if [ "$2" != 0 ] || [ "$3" != 0 ]; then
        echo "FAIL: exit status $2 without gpuprio, $3 with it (expected 0 and 0)"
        _sn_status=1
    fi
    return $_sn_status
}

need_disk_fs() { # DIR
    case $(stat -f -c %T "$1") in
    tmpfs | hugetlbfs)
        echo "skipped: $1 is on $(stat -f -c %T "$1"), not a disk filesystem"
        exit 77
        ;;
    esac
}

prom_checks() { # CHECKER PROM OUT
    if /usr/bin/python3 "$1" "$2" >"$3"; then
        echo "ok: metrics --once parses and checks"
    else
        echo "FAIL: metrics --once does not check:"
        grep -v '^ok' "$3"
        fails=$((fails + 1))
    fi
}
