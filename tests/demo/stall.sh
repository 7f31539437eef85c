#!/bin/sh
# stall.sh - gpuprio-demo tells a request the host held up from one the device slowed down
# (bench/demo/hoststall.c). One row ("LC alone", 2 s) runs by hand (--scenario); in the middle of
# its window the test stops the process for 60 ms (SIGSTOP, SIGCONT), as a host that gives it no
# CPU would. The row's result line must count at least one stalled request, with a latency of at
# least 50 ms (a request due during the stop waits for what is left of it: the stop less at most
# one 10 ms period) among the stalled ones, and none of 20 ms among the requests it kept (LC
# alone's take about 1 ms). Other requests may count as stalled too on a busy machine: the test
# does not say how many (on a saturated one all of them, and then none is kept).
#
#   stall.sh GPUPRIO_DEMO
set -u
demo=$1
. "$(dirname "$0")/../tools/expect.sh"
sandbox demo-stall
trap 'sandbox_cleanup $pid' EXIT
trap 'exit 1' HUP INT TERM
out=$tmp/out.txt
pid=

"$demo" --scenario lc-alone --seconds 2 --rounds 1 >"$out" 2>&1 &
pid=$!
# The client thread starts about 55 ms before the window opens: the stop comes inside it.
client_started() { grep -qs '^demo-lc$' /proc/"$pid"/task/*/comm; }
expect "the row's client thread started" 0 "$(wait_for 30 client_started; echo $?)"
sleep 0.5
kill -STOP "$pid"
sleep 0.06
kill -CONT "$pid"
wait "$pid"
expect "the row's exit status" 0 $?
pid=
cat "$out"

# The result line's words: counts, and the latency lists (ns) of the kept and stalled requests.
word() { tr ' ' '\n' <"$out" | sed -n "s/^$1=//p"; }
longest() { word "$1" | tr ',' '\n' | grep -v '^-$' | sort -n | tail -n 1; }
reqs=$(word lc_reqs)
stalled=$(word lc_stalled)
expect "200 requests in the window" 200 "$reqs"
expect "at least one request counted as stalled ($stalled)" yes \
    "$([ "${stalled:-0}" -ge 1 ] && echo yes || echo no)"
worst_stalled=$(longest lc_stalled_ns)
worst_kept=$(longest lc_lat_ns)
expect "a stalled request waited out the stop: 50 ms or more ($worst_stalled ns)" yes \
    "$([ "${worst_stalled:-0}" -ge 50000000 ] && echo yes || echo no)"
expect "no kept request took 20 ms (${worst_kept:-none kept} ns)" yes \
    "$([ "${worst_kept:-0}" -lt 20000000 ] && echo yes || echo no)"
[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
