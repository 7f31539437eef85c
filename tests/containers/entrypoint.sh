#!/bin/sh
# entrypoint.sh - the container forms of docs/containers.md, without Docker: each "container" is
# a process started with an empty environment (what an image's ENV and `docker run -e` give),
# with the board directory a shared directory (the host path both containers mount), started
# the way the image's exec-form ENTRYPOINT starts it.
#
#   entrypoint.sh GPUPRIO TOOLS_WORKER HIP_SHIM
#
# Checked: `gpuprio run -p high -- CMD` and `GPUPRIO_PRIORITY=low gpuprio run -- CMD` (the two
# documented ways to give a container its priority) schedule together through the shared
# directory, each on the same board file there, with the priority given; the entrypoint's pid
# is the program's (gpuprio run execs it: `docker stop`'s SIGTERM reaches the program, which
# dies of it as it would without gpuprio); the program's own exit status is the container's; and
# the LD_PRELOAD form (`ENV LD_PRELOAD=...` and the program as the entrypoint) joins too.
# The workers run on one simulated device shared through HIPSIM_SHARED.
set -u
gpuprio=$1 worker=$2 shim=$3
. "$(dirname "$0")/../tools/expect.sh"
sandbox containers
high= low= plain=
cleanup() { sandbox_cleanup $high $low $plain; }
trap cleanup EXIT

shared=$tmp/run-gpuprio # the host directory both containers mount
mkdir -m 700 "$shared"
# A container's environment: nothing from the host but what `docker run -e` passes, and the
# sanitizers' settings of the build under test.
container() { # ENV=VALUE... -- COMMAND...
    vars="PATH=/usr/local/bin:/usr/bin:/bin HOME=/ GPUPRIO_BOARD_DIR=$shared HIPSIM_SHARED=$name"
    for v in ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
        eval "val=\${$v-}"
        [ -n "$val" ] && vars="$vars $v=$val"
    done
    while [ "$1" != -- ]; do
        vars="$vars $1"
        shift
    done
    shift
    # shellcheck disable=SC2086
    exec env -i $vars "$@"
}

# ENTRYPOINT ["gpuprio", "run", "-p", "high", "--"]  CMD ["tools_worker", ...]
(container -- "$gpuprio" run -p high -- "$worker" "$tmp/stop-high" 60) >"$tmp/high.out" 2>"$tmp/high.err" &
high=$!
# ENTRYPOINT ["gpuprio", "run", "--"], docker run -e GPUPRIO_PRIORITY=low
(container GPUPRIO_PRIORITY=low -- "$gpuprio" run -- "$worker" "$tmp/stop-low" 60) >"$tmp/low.out" 2>"$tmp/low.err" &
low=$!
# ENV LD_PRELOAD=/usr/lib/.../libgpuprio-hip.so GPUPRIO_PRIORITY=normal, the program as entrypoint
(container LD_PRELOAD="$shim" GPUPRIO_PRIORITY=normal -- "$worker" "$tmp/stop-plain" 60) \
    >"$tmp/plain.out" 2>"$tmp/plain.err" &
plain=$!

# Until gpuprio top, looking at the shared directory, lists all three by the entrypoints' pids.
listed() {
    GPUPRIO_BOARD_DIR=$shared "$gpuprio" top --once --json >"$tmp/top.json" 2>"$tmp/top.err" || return 1
    for p in $high $low $plain; do grep -q "\"pid\": $p," "$tmp/top.json" || return 1; done
}
if ! wait_for 15 listed; then
    echo "FAIL: gpuprio top never listed the three entrypoint pids ($high $low $plain):"
    cat "$tmp/top.json" "$tmp/top.err" "$tmp"/*.out "$tmp"/*.err
    exit 1
fi
echo "ok: the three containers' entrypoint pids are on the shared directory's board"
field() { # PID NAME
    grep "\"pid\": $1," "$tmp/top.json" | sed -n "s/.*\"$2\": \\(\"[^\"]*\"\\|[^,}]*\\).*/\\1/p" | tr -d '"'
}
expect "gpuprio run -p high" 10 "$(field "$high" priority)"
expect "GPUPRIO_PRIORITY=low through gpuprio run" -10 "$(field "$low" priority)"
expect "LD_PRELOAD form" 0 "$(field "$plain" priority)"
board=$(field "$high" board)
case $board in
"$shared"/gpuprio-*) echo "ok: board in the shared directory: $board" ;;
*) echo "FAIL: board '$board' is not in $shared"; fails=$((fails + 1)) ;;
esac
expect "one board for all" "$board $board" "$(field "$low" board) $(field "$plain" board)"

# docker stop: SIGTERM to the entrypoint process, which is the program itself.
kill -TERM "$high"
wait "$high"
expect "SIGTERM to the entrypoint ends the program by that signal (128+15)" 143 $?
high=
# The program's exit status is the container's.
touch "$tmp/stop-low" "$tmp/stop-plain"
wait "$low"
expect "exit status of a program that finished (gpuprio run)" 0 $?
low=
wait "$plain"
expect "exit status of a program that finished (LD_PRELOAD)" 0 $?
plain=
grep -q '^priority -10$' "$tmp/low.out" && echo "ok: the low container's stream reported -10" ||
    { echo "FAIL: low.out: $(cat "$tmp/low.out")"; fails=$((fails + 1)); }
(container -- "$gpuprio" run -p high -- "$worker" "$tmp/never" 1) >"$tmp/gaveup.out" 2>&1
expect "a program's own failure status passes through (3)" 3 $?
show_stderr "$tmp" high low plain
[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
