#!/bin/sh
# soak.sh: the chaos and fuzz workloads for a given time (docs/testing-stages.md, "Soak"); not in CI.
#
#   scripts/soak.sh MINUTES
#
# Builds the gcc test tree if it is not there (BUILD_DIR=DIR uses another, a sanitizer one).
# Starts one long-lived process (a chaos worker under the shim that works until the end, on a
# simulated device and board of its own), then runs in turn, with new seeds each time, until
# the time is up: `chaos chaos 100` (four processes killed, stopped and started around each
# other), `chaos brief 500` (short-lived processes that end in every way) and 20 fuzz seeds.
# Prints a line per run, then the totals: fuzz programs and mismatches, processes started,
# killed and stopped, failed chaos runs, and the long-lived process's resident memory at the start
# and at the end. Exit status 0 when nothing failed; the logs of failed runs are kept.
set -eu
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
    echo "usage: $0 MINUTES" >&2
    exit 2
fi
minutes=$1
case $minutes in '' | *[!0-9]*) echo "$0: MINUTES is a whole number" >&2; exit 2 ;; esac
. scripts/test-tree.sh
chaos="$dir/tests/chaos/chaos" worker="$dir/tests/chaos/chaos_worker"
shim="$dir/src/libgpuprio-hip.so" tool="$dir/tools/gpuprio"
tmp=$(mktemp -d /tmp/gpuprio-soak-XXXXXX)
keep=0
cleanup() {
    [ -n "${lasting:-}" ] && kill "$lasting" 2>/dev/null
    rm -f "/dev/shm/hipsim-$(id -u)-soak$$-0"
    [ $keep = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo "?"; }

mkdir "$tmp/board"
HIPSIM_SHARED=soak$$ GPUPRIO_BOARD_DIR="$tmp/board" CHAOS_STOPFILE="$tmp/stop" \
    LD_PRELOAD="$shim" GPUPRIO_PRIORITY=high "$worker" run 0 >"$tmp/lasting.log" 2>&1 &
lasting=$!
until grep -q ready "$tmp/lasting.log" 2>/dev/null; do
    kill -0 "$lasting" 2>/dev/null || { echo "soak: the long-lived process failed:"; cat "$tmp/lasting.log"; exit 1; }
    sleep 0.1
done
rss_start=$(rss "$lasting")
echo "soak: $minutes minutes; the long-lived process $lasting: resident $rss_start KiB"

end=$(($(date +%s) + minutes * 60))
seed=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
fuzz_seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
runs=0 failed=0 programs=0 mismatches=0 processes=0 kills=0 stops=0
while [ "$(date +%s)" -lt "$end" ]; do
    for what in chaos brief fuzz; do
        [ "$(date +%s)" -lt "$end" ] || break
        runs=$((runs + 1))
        log="$tmp/run-$runs-$what.log"
        seed=$((seed + 1)) status=0
        case $what in
        chaos) CHAOS_SEED=$seed "$chaos" chaos 100 "$worker" "$shim" "$tool" >"$log" 2>&1 || status=$? ;;
        brief) CHAOS_SEED=$seed "$chaos" brief 500 "$worker" "$shim" "$tool" >"$log" 2>&1 || status=$? ;;
        fuzz)
            sh tests/fuzz/fuzz.sh "$dir/tests/fuzz/fuzz_prog" "$shim" "$fuzz_seed" 20 >"$log" 2>&1 ||
                status=$?
            fuzz_seed=$((fuzz_seed + 20))
            ;;
        esac
        summary=$(grep -E '^(chaos|brief|fuzz):' "$log" | tail -n 1)
        echo "$what: ${summary:-no summary} (status $status)"
        case $what in
        chaos)
            set -- $(echo "$summary" | sed 's/[^0-9 ]//g')
            processes=$((processes + ${2:-0})) kills=$((kills + ${3:-0})) stops=$((stops + ${4:-0}))
            ;;
        brief)
            set -- $(echo "$summary" | sed 's/[^0-9 ]//g')
            processes=$((processes + ${1:-0})) kills=$((kills + ${2:-0}))
            ;;
        fuzz)
            programs=$((programs + 20))
            mismatches=$((mismatches + $(grep -c '^FAIL: seed' "$log" || true)))
            ;;
        esac
        if [ $status != 0 ]; then
            failed=$((failed + 1)) keep=1
            echo "  failed: $log"
        fi
    done
done

touch "$tmp/stop"
rss_end=$(rss "$lasting")
lasting_ok=yes
wait "$lasting" || lasting_ok=no
lasting=
grep -q '^done' "$tmp/lasting.log" || lasting_ok=no
[ $lasting_ok = yes ] || { failed=$((failed + 1)) keep=1; echo "  the long-lived process failed: $tmp/lasting.log"; }
echo "soak: $minutes minutes, $runs runs, $failed failed; fuzz: $programs programs, $mismatches" \
    "mismatches; chaos: $processes processes started, $kills killed, $stops stopped and resumed;" \
    "the long-lived process: resident $rss_start KiB at the start, $rss_end KiB at the end," \
    "finished right: $lasting_ok ($(grep '^done' "$tmp/lasting.log" || true))"
[ $keep = 1 ] && echo "logs: $tmp"
[ $failed = 0 ]
