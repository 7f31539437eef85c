#!/bin/sh
# fuzz.sh - differential fuzzing of the shim: each seed's program (fuzz_prog.c) runs without
# gpuprio, under gpuprio with scheduling off (GPUPRIO_POLICY=passthrough), and under gpuprio
# with scheduling at work (settings drawn from the seed: a priority per stream, the process's
# priority, a small in-flight budget and window, Level 1 or 2 on a board of its own), and the
# three outputs (with the exit status) must be identical, with every model check "ok".
#
#   fuzz.sh FUZZ_PROG SHIM FIRST_SEED COUNT
#
# SHIM is what LD_PRELOAD gets in the gpuprio modes (a list, to put something in front of it).
# FUZZ_TIMEOUT: seconds a run may take (default 60: a hang is a failure); FUZZ_REDUCE_TRIES:
# runs of three the reduction may take (default 150); FUZZ_STOP_AFTER: stop after this many
# failing seeds (default 0: never).
#
# A failing seed is reduced: operations are left out (fuzz_prog --skip) in ever smaller groups
# while the failure stays, and the seed, the command that shows it and the reduced program are
# printed. Exit status: 0 when every seed passed, 1 otherwise.
set -u
prog=$1 shim=$2 first=$3 count=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprio-fuzz.XXXXXX") || exit 2
shared=fuzz-$$
cleanup() {
    rm -rf "$tmp"
    rm -f /dev/shm/hipsim-"$(id -u)"-"$shared"-* 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
mkdir -m 700 "$tmp/boards"
limit=${FUZZ_TIMEOUT:-60}

# A shim the loader cannot preload would make every mode the native one, and pass.
if LD_PRELOAD="$shim" "$prog" 1 --list 2>&1 >/dev/null | grep -q 'cannot be preloaded'; then
    echo "fuzz.sh: the loader cannot preload $shim" >&2
    exit 2
fi

# The scheduling settings of a seed, one per line (VAR=VALUE).
settings() { # SEED
    st_seed=$1
    st_prios="critical high normal low idle"
    st_list=
    st_i=0
    while [ $st_i -lt 6 ]; do
        st_p=$(echo $st_prios | cut -d' ' -f$(((st_seed / (st_i + 1) + st_i * 7) % 5 + 1)))
        st_list=${st_list:+$st_list,}$st_p
        st_i=$((st_i + 1))
    done
    echo "GPUPRIO_STREAM_PRIORITIES=$st_list"
    echo "GPUPRIO_PRIORITY=$(echo $st_prios | cut -d' ' -f$((st_seed / 7 % 5 + 1)))"
    echo "GPUPRIO_WINDOW_US=$((20 + st_seed % 5 * 40))"
    echo "GPUPRIO_WINDOW=$((1 + st_seed / 3 % 4))"
    echo "GPUPRIO_LEVEL=$((1 + st_seed / 11 % 2))"
    echo "GPUPRIO_GRACE_US=$((st_seed / 13 % 3 * 50))"
}

# Runs mode MODE (native, off, on) of SEED with SKIP into FILE; its exit status is appended.
run_mode() { # MODE SEED SKIP FILE
    rm_mode=$1 rm_seed=$2 rm_skip=$3 rm_file=$4
    set -- "$prog" "$rm_seed"
    [ -n "$rm_skip" ] && set -- "$@" --skip "$rm_skip"
    case $rm_mode in
    native) timeout "$limit" env -u LD_PRELOAD "$@" >"$rm_file" 2>"$rm_file.err" ;;
    off) timeout "$limit" env LD_PRELOAD="$shim" GPUPRIO_POLICY=passthrough "$@" \
        >"$rm_file" 2>"$rm_file.err" ;;
    on) timeout "$limit" env $(settings "$rm_seed") LD_PRELOAD="$shim" GPUPRIO_POLICY=hpf \
        HIPSIM_SHARED="$shared" GPUPRIO_BOARD_DIR="$tmp/boards" "$@" \
        >"$rm_file" 2>"$rm_file.err" ;;
    esac
    echo "exit=$?" >>"$rm_file"
}

# 0 when SEED with SKIP fails: the modes differ, or a model check or a call failed.
fails() { # SEED SKIP
    for fl_mode in native off on; do
        run_mode $fl_mode "$1" "$2" "$tmp/$fl_mode"
    done
    if ! cmp -s "$tmp/native" "$tmp/off" || ! cmp -s "$tmp/native" "$tmp/on"; then
        return 0
    fi
    grep -q 'MODEL MISMATCH\|FATAL' "$tmp/native" && return 0
    grep -qx 'exit=0' "$tmp/native" || return 0
    return 1
}

# Reduces a failing seed: leaves out groups of operations, halving the group size, while it
# still fails; at most FUZZ_REDUCE_TRIES tries (default 150).
reduce() { # SEED
    rd_seed=$1
    rd_n=$("$prog" "$rd_seed" --list | grep -c '^[0-9]*:')
    rd_skip=
    rd_size=$(((rd_n + 1) / 2))
    rd_tries=0
    rd_max=${FUZZ_REDUCE_TRIES:-150}
    while [ "$rd_size" -ge 1 ] && [ $rd_tries -lt "$rd_max" ]; do
        rd_start=0
        while [ $rd_start -lt "$rd_n" ] && [ $rd_tries -lt "$rd_max" ]; do
            rd_group=
            rd_i=$rd_start
            while [ $rd_i -lt $((rd_start + rd_size)) ] && [ $rd_i -lt "$rd_n" ]; do
                case ",$rd_skip," in *",$rd_i,"*) ;; *) rd_group=${rd_group:+$rd_group,}$rd_i ;; esac
                rd_i=$((rd_i + 1))
            done
            if [ -n "$rd_group" ]; then
                rd_tries=$((rd_tries + 1))
                if fails "$rd_seed" "${rd_skip:+$rd_skip,}$rd_group"; then
                    rd_skip=${rd_skip:+$rd_skip,}$rd_group
                fi
            fi
            rd_start=$((rd_start + rd_size))
        done
        rd_size=$((rd_size / 2))
    done
    echo "$rd_skip" | tr , '\n' | sort -n | paste -sd, -
}

failed=0
seed=$first
end=$((first + count))
while [ "$seed" -lt "$end" ]; do
    if fails "$seed" ""; then
        failed=$((failed + 1))
        echo "FAIL: seed $seed"
        for mode in off on; do
            if ! cmp -s "$tmp/native" "$tmp/$mode"; then
                echo "--- without gpuprio vs $mode:"
                diff "$tmp/native" "$tmp/$mode" | head -40
                [ -s "$tmp/$mode.err" ] && { echo "$mode's stderr:"; head -20 "$tmp/$mode.err"; }
            fi
        done
        grep 'MODEL MISMATCH\|FATAL' "$tmp/native" | head -5
        skip=$(reduce "$seed")
        echo "reduced: $prog $seed${skip:+ --skip $skip}"
        echo "scheduling settings of the seed:" $(settings "$seed")
        fails "$seed" "$skip"
        for mode in off on; do
            cmp -s "$tmp/native" "$tmp/$mode" || { echo "--- reduced, without gpuprio vs $mode:"; diff "$tmp/native" "$tmp/$mode" | head -40; }
        done
        "$prog" "$seed" ${skip:+--skip "$skip"} --list
        [ "${FUZZ_STOP_AFTER:-0}" -gt 0 ] && [ $failed -ge "$FUZZ_STOP_AFTER" ] && break
    fi
    seed=$((seed + 1))
done
echo "fuzz: seeds $first..$((seed < end ? seed : end - 1)): $failed failed"
[ $failed = 0 ]
