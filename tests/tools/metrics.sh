#!/bin/sh
# metrics.sh - `gpuprio metrics` (issue 18): its exposition is accepted by prometheus_client's
# parser and by a strict one (prom_check.py, which also checks the names, types, labels, escaping
# and values that docs/cli.md promises), for two live workers on a shared simulated device: one
# at priority low with 3 unused streams, and one at priority high run through a symbolic link
# named w"q\x<0xff>z, so that its command name (the kernel takes it from the name executed) holds
# a quote, a backslash and a byte that is not UTF-8, which must come out as "w\"q\\x<U+FFFD>z".
# A made-up sample (tools_metrics_sample: a newline in a label, every kind of bad UTF-8, 2^64-1,
# a duplicate row) must print exactly metrics_sample.prom and parse. A process with two queues
# alike but for command names that differ only in a byte that is not UTF-8 (tools_forged_comm:
# x\xff and x\xfe, both x<U+FFFD>) has one series per family (top --json shows both queues, so).
#
# Then --textfile: once (a parseable DIR/gpuprio.prom of mode 0644 whatever the umask, no
# temporary file left), and every 0.2 s in the background while prom_check.py reads the file over
# and over for 2 s (each read whole and parseable, the file replaced, no counter going down),
# ended by SIGTERM and by SIGINT (status 0, no temporary file); DIR removed for a while (one
# message, then one when the file is written again). Bad inputs: one line each on standard error
# naming the problem, status 2 for a bad option or DIR, 1 when the output cannot be written or
# the board directory cannot be read.
#
#   metrics.sh GPUPRIO TOOLS_WORKER HIP_SHIM TOOLS_METRICS_SAMPLE TOOLS_FORGED_COMM
#
# Needs Debian's /usr/bin/python3 with python3-prometheus-client (scripts/install-deps.sh).
set -u
gpuprio=$1 worker=$2 shim=$3 sample=$4 forged=$5
here=$(dirname "$0")
py=/usr/bin/python3
check="$py $here/prom_check.py"
. "$here/expect.sh"
sandbox_boards metrics
pid= pid2= mpid= fpid=
cleanup() { sandbox_cleanup $pid $pid2 $mpid $fpid; }
trap cleanup EXIT
unset GPUPRIO_POLICY GPUPRIO_WINDOW GPUPRIO_STREAM_PRIORITIES

if ! $py -c 'import prometheus_client.parser' 2>/dev/null; then
    echo "FAIL: $py cannot import prometheus_client: install python3-prometheus-client" \
        "(scripts/install-deps.sh does)"
    exit 1
fi
# Runs prom_check.py on FILE with the rest as its options; counts a failure.
prom_check() { # WHAT FILE [OPTIONS...]
    what=$1
    shift
    if $check "$@"; then
        echo "ok: $what parses and checks"
    else
        echo "FAIL: $what (prom_check.py $*); the file:"
        cat "$1"
        fails=$((fails + 1))
    fi
}
# Files in DIR other than gpuprio.prom (temporary files left behind), one line.
others() { # DIR
    ls -A "$1" | grep -vx gpuprio.prom | tr '\n' ' '
}
# Whether `gpuprio metrics --once` lists a queue of each pid given.
listed() { # PID...
    "$gpuprio" metrics --once >"$tmp/listed.prom" 2>/dev/null || return 1
    for p in "$@"; do
        grep -q "^gpuprio_queue_priority{.*,pid=\"$p\"," "$tmp/listed.prom" || return 1
    done
}

# The made-up sample: exactly the golden file, and parseable.
"$sample" >"$tmp/sample.prom"
expect "tools_metrics_sample: status" 0 $?
if cmp -s "$tmp/sample.prom" "$here/metrics_sample.prom"; then
    echo "ok: the made-up sample prints metrics_sample.prom"
else
    echo "FAIL: the made-up sample differs from metrics_sample.prom:"
    diff "$here/metrics_sample.prom" "$tmp/sample.prom"
    fails=$((fails + 1))
fi
fffd=$(printf '\357\277\275')
prom_check "the made-up sample" "$tmp/sample.prom" --queue 4242:20 --queue 4250:-10 \
    --command "4250:$(printf 'a"b\\c\nd')" --unused 4242:142 --unused 4250:0 --min-queues 4 \
    --command "7:${fffd}x$(printf '\303\251')$fffd$fffd$fffd$fffd$fffd$(printf '\346\227\245')"

# Two workers on one simulated device, so on one board.
export HIPSIM_SHARED=$name
GPUPRIO_PRIORITY=low LD_PRELOAD=$shim "$worker" "$tmp/stop" 60 3 \
    >"$tmp/worker.out" 2>"$tmp/worker.err" &
pid=$!
odd=$tmp/'w"q\x'$(printf '\377')z
ln -s "$worker" "$odd"
GPUPRIO_PRIORITY=high LD_PRELOAD=$shim "$odd" "$tmp/stop" 60 >"$tmp/worker2.out" \
    2>"$tmp/worker2.err" &
pid2=$!
if ! wait_for 20 listed "$pid" "$pid2"; then
    echo "FAIL: gpuprio metrics never listed both workers; last output:"
    cat "$tmp/listed.prom" "$tmp/worker.out" "$tmp/worker.err" "$tmp/worker2.out" \
        "$tmp/worker2.err"
    exit 1
fi
user=$(id -un 2>/dev/null || id -u)

# --once: standard output, nothing on standard error.
"$gpuprio" metrics --once >"$tmp/once.prom" 2>"$tmp/once.err"
expect "--once: status" 0 $?
expect "--once: standard error" "" "$(cat "$tmp/once.err")"
prom_check "--once" "$tmp/once.prom" --queue "$pid:-10" --queue "$pid2:10" \
    --command "$pid:tools_worker" --command "$pid2:w\"q\\x${fffd}z" --user "$user" \
    --unused "$pid:3" --unused "$pid2:0" --min-queues 2
echo "gpuprio metrics --once (the queue series of the workers):"
grep '^gpuprio_queue_priority' "$tmp/once.prom"

# --textfile DIR --once: the file, 0644 even under umask 077, nothing else left.
mkdir "$tmp/tf"
(umask 077 && exec "$gpuprio" metrics --textfile "$tmp/tf" --once) 2>"$tmp/tf.err"
expect "--textfile --once: status" 0 $?
expect "--textfile --once: standard error" "" "$(cat "$tmp/tf.err")"
expect "--textfile --once: mode" 644 "$(stat -c %a "$tmp/tf/gpuprio.prom" 2>&1)"
expect "--textfile --once: no temporary file" "" "$(others "$tmp/tf")"
prom_check "--textfile --once" "$tmp/tf/gpuprio.prom" --queue "$pid:-10" --queue "$pid2:10" \
    --command "$pid2:w\"q\\x${fffd}z"

# --textfile DIR --interval 0.2 in the background: read over and over while it is replaced.
# (A background job of a script starts with SIGINT ignored; gpuprio takes it anyway, since it
# waits for it blocked.)
mkdir "$tmp/tf2"
run_interval() {
    "$gpuprio" metrics --textfile "$tmp/tf2" --interval 0.2 2>"$tmp/tf2.err" &
    mpid=$!
    wait_for 10 test -e "$tmp/tf2/gpuprio.prom" ||
        {
            echo "FAIL: --interval: no file after 10 s: $(cat "$tmp/tf2.err")"
            fails=$((fails + 1))
        }
}
stop_interval() { # SIGNAL
    kill -"$1" "$mpid"
    wait "$mpid"
    expect "--interval: status after SIG$1" 0 $?
    mpid=
    expect "--interval: standard error" "" "$(cat "$tmp/tf2.err")"
    expect "--interval: no temporary file after SIG$1" "" "$(others "$tmp/tf2")"
}
run_interval
prom_check "--interval 0.2, read over and over for 2 s" --watch "$tmp/tf2/gpuprio.prom" 2 \
    --queue "$pid:-10" --queue "$pid2:10"
expect "--interval: mode" 644 "$(stat -c %a "$tmp/tf2/gpuprio.prom" 2>&1)"
stop_interval TERM
run_interval
sleep 0.3
stop_interval INT
# A failure after the first write (DIR gone for a while) is reported once and the loop goes on.
mkdir "$tmp/tf3"
"$gpuprio" metrics --textfile "$tmp/tf3" --interval 0.2 2>"$tmp/tf3.err" &
mpid=$!
wait_for 10 test -e "$tmp/tf3/gpuprio.prom" ||
    { echo "FAIL: --interval: no file in tf3"; fails=$((fails + 1)); }
rm -r "$tmp/tf3"
sleep 0.7
mkdir "$tmp/tf3"
wait_for 10 test -e "$tmp/tf3/gpuprio.prom" ||
    { echo "FAIL: --interval: no file after DIR came back"; fails=$((fails + 1)); }
kill -TERM "$mpid"
wait "$mpid"
expect "--interval, DIR gone for a while: status" 0 $?
mpid=
gone="gpuprio metrics: cannot write $tmp/tf3/gpuprio.prom (--textfile $tmp/tf3)"
expect "--interval, DIR gone for a while: what it says" "$gone: No such file or directory
gpuprio metrics: $tmp/tf3/gpuprio.prom written again" "$(cat "$tmp/tf3.err")"
expect "--interval, DIR gone for a while: no temporary file" "" "$(others "$tmp/tf3")"

# Two queues of one process, alike but for names that print the same: one series, one row.
"$forged" "$tmp/stop_forged" >"$tmp/forged.out" 2>"$tmp/forged.err" &
fpid=$!
if wait_for 10 grep -q ready "$tmp/forged.out"; then
    "$gpuprio" metrics --once >"$tmp/forged.prom" 2>/dev/null
    expect "names that differ only in bytes that are not UTF-8: series" 1 \
        "$(grep -c "^gpuprio_queue_priority{.*,pid=\"$fpid\",command=\"x$fffd\"," "$tmp/forged.prom")"
    prom_check "names that differ only in bytes that are not UTF-8" "$tmp/forged.prom" \
        --command "$fpid:x$fffd"
    "$gpuprio" top --once --json >"$tmp/forged.json" 2>/dev/null
    expect "names that differ only in bytes that are not UTF-8: top --json" 2 \
        "$(grep "\"pid\": $fpid," "$tmp/forged.json" | grep -c "\"command\": \"x$fffd\"")"
else
    echo "FAIL: tools_forged_comm never got ready: $(cat "$tmp/forged.err")"
    fails=$((fails + 1))
fi
touch "$tmp/stop_forged"
wait "$fpid"
expect "tools_forged_comm status" 0 $?
fpid=

# Bad inputs: one line on standard error naming the problem, nothing on standard output, and
# the status.
touch "$tmp/afile"
bad() { # STATUS PATTERN ARGS...
    status=$1 pattern=$2
    shift 2
    "$gpuprio" metrics "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
    rc=$?
    if [ $rc = "$status" ] && [ "$(wc -l <"$tmp/bad.err")" = 1 ] &&
        grep -q -- "$pattern" "$tmp/bad.err" && [ ! -s "$tmp/bad.out" ]; then
        echo "ok: metrics $*: $status, $(cat "$tmp/bad.err")"
    else
        echo "FAIL: metrics $*: status $rc (expected $status), standard error:" \
            "$(cat "$tmp/bad.err") (expected one line with '$pattern'), standard output:" \
            "$(head -c 200 "$tmp/bad.out")"
        fails=$((fails + 1))
    fi
}
bad 2 "accepted: --once, or --textfile DIR"
bad 2 "unknown argument '--bogus'; accepted: --once" --bogus
bad 2 "unknown argument 'x'" --once x
bad 2 "'0' is not an interval; accepted: seconds from 0.1 to 86400" \
    --textfile "$tmp/tf" --interval 0
bad 2 "'abc' is not an interval" --textfile "$tmp/tf" --interval abc
bad 2 "'-1' is not an interval" --textfile "$tmp/tf" --interval=-1
bad 2 "'nan' is not an interval" --textfile "$tmp/tf" --interval nan
bad 2 "'1e9' is not an interval" --textfile "$tmp/tf" --interval 1e9
bad 2 "--interval needs a number of seconds" --textfile "$tmp/tf" --interval
bad 2 "--interval goes with --textfile DIR and without --once" --once --interval 1
bad 2 "--interval goes with --textfile DIR and without --once" --interval 1
bad 2 "--interval goes with --textfile DIR and without --once" \
    --textfile "$tmp/tf" --once --interval 1
bad 2 "--textfile needs a directory" --textfile
bad 2 "--textfile '$tmp/missing': no such directory; accepted: an existing directory" \
    --textfile "$tmp/missing" --once
bad 2 "--textfile '$tmp/afile' is not a directory" --textfile "$tmp/afile"
# A directory nobody can create a file in, root included.
bad 1 "cannot write /proc/gpuprio.prom (--textfile /proc): " --textfile /proc --once
bad 1 "cannot write /proc/gpuprio.prom" --textfile /proc --interval 0.2
if [ -w /dev/full ]; then
    "$gpuprio" metrics --once >/dev/full 2>"$tmp/bad.err"
    expect "--once >/dev/full: status" 1 $?
    expect "--once >/dev/full: message" \
        "gpuprio metrics: cannot write to standard output: No space left on device" \
        "$(cat "$tmp/bad.err")"
fi
boards=$GPUPRIO_BOARD_DIR
GPUPRIO_BOARD_DIR=$tmp/afile
bad 1 "cannot read the board directory $tmp/afile" --once
bad 1 "cannot read the board directory $tmp/afile" --textfile "$tmp/tf" --once
GPUPRIO_BOARD_DIR=$boards

touch "$tmp/stop"
wait "$pid"
expect "worker status" 0 $?
wait "$pid2"
expect "second worker status" 0 $?
pid= pid2=
show_stderr "$tmp" worker worker2

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
