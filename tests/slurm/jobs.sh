#!/bin/sh
# jobs.sh - slurm.jobs: two users' jobs at two priorities on one simulated device, started by a
# real one-node Slurm cluster (cluster.sh) with the gpuprio SPANK plugin, scheduling together
# through the shared board directory of the administrator's configuration file, nothing set by
# the users but --gpu-priority:
#   1. user B's batch job (#SBATCH --gpu-priority=low) runs alone, saturating the device;
#   2. scontrol suspend stops it (SIGSTOP, its kernels queued); user A's srun --gpu-priority=high
#      job then runs its kernels at once and keeps running, not waiting for the stopped job;
#   3. scontrol resume: both run, and the low job is held behind the high one (it starts fewer
#      than a quarter of the kernels the high one starts meanwhile; without scheduling across
#      users the two take turns on the device);
#   4. scancel of the low job: its queue leaves the board (gpuprio top, as root, on the shared
#      directory), and the high job ends normally, having run at priority 10.
#
#   jobs.sh PLUGIN LIBRARY TOOLS_WORKER GPUPRIO HIPSIM_LIBRARY
set -u
. "$(dirname "$0")/../tools/expect.sh"
. "$(dirname "$0")/cluster.sh"
[ "$1" = - ] && { echo "skipped: the Slurm plugin was not built (slurm/spank.h not found at configure: Debian's libslurm-dev)"; exit 77; }
cluster_enter "$0" "$@"
plugin_src=$1 library_src=$2 worker_src=$3 gpuprio=$4 sim_src=$5
sandbox slurm-jobs
srun_pid=
trap 'cluster_stop; [ -n "$srun_pid" ] && kill -9 $srun_pid 2>/dev/null; rm -rf "$tmp"; rm -f /dev/shm/hipsim-all-$name-0' EXIT

# What the users' jobs run, where they can reach it (the build tree may be under a private home).
mkdir -m 755 "$tmp/bin"
cp "$plugin_src" "$library_src" "$worker_src" "$tmp/bin/" &&
    cp "$sim_src" "$tmp/bin/libamdhip64.so.6" && chmod 755 "$tmp/bin"/* || exit 1
plugin=$tmp/bin/$(basename "$plugin_src") library=$tmp/bin/$(basename "$library_src")
worker=$tmp/bin/$(basename "$worker_src")
if ! cluster_start "$plugin" "$library"; then
    cluster_logs
    exit 1
fi

# The administrator's configuration file: both users on the shared directory (root's, sticky).
mkdir -m 1777 "$tmp/shared" && chmod 1777 "$tmp/shared"
printf 'board_dir = %s\n' "$tmp/shared" >"$tmp/gpuprio.conf"
chmod 644 "$tmp/gpuprio.conf"
trace=$tmp/out/trace
: >"$trace" && chmod 666 "$trace"
# The jobs' environment (srun and sbatch pass the submitter's on): the simulated device, shared
# by every user as a GPU is; the configuration file where /etc/gpuprio.conf would be. Hardware
# stream priorities off: the simulator would let the high job's kernels past the low job's by
# them alone, and this test is about the board.
export GPUPRIO_CONFIG=$tmp/gpuprio.conf HIPSIM_SHARED=$name HIPSIM_SHARED_USERS=1 \
    HIPSIM_TRACE=$trace LD_LIBRARY_PATH=$tmp/bin GPUPRIO_HW_PRIORITY=off

# gpuprio top as root on the shared directory: "pid uid priority gate" per queue.
queues() {
    "$gpuprio" top --once --json 2>"$tmp/top.err" | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r.get("kind") == "queue":
        print(r["pid"], r["uid"], r["priority"], r["gate"])'
}
queue_of() { # UID PRIORITY: the pid of a queue of UID at PRIORITY, if there is one
    queues | awk -v u="$1" -v p="$2" '$2 == u && $3 == p { print $1; exit }'
}
has_queue() { [ -n "$(queue_of "$1" "$2")" ]; }
no_queue_of() { [ -z "$(queues | awk -v u="$1" '$2 == u')" ]; }
kernels_of() { awk -v p="$1" '$1 == p' "$trace" | wc -l; }

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
finish() {
    if [ $fails != 0 ]; then
        echo "gpuprio top:"
        queues
        cat "$tmp/top.err"
        squeue
        for f in "$tmp/out"/*.out "$tmp/out"/*.err; do [ -s "$f" ] && { echo "---- $f"; cat "$f"; }; done
        cluster_logs
    fi
    [ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
    [ $fails = 0 ]
    exit
}

# 1. The low job, alone.
cat >"$tmp/out/low.sh" <<EOF
#!/bin/sh
#SBATCH --gpu-priority=low
#SBATCH -p batch
#SBATCH -t 5
#SBATCH -o $tmp/out/low.out
#SBATCH -e $tmp/out/low.err
exec $worker $tmp/out/stop-low 150
EOF
chmod 755 "$tmp/out/low.sh"
low_job=$(as_user $USER_B sbatch --parsable "$tmp/out/low.sh")
if ! wait_for 60 has_queue $USER_B -10; then
    fail "user $USER_B's batch job $low_job (#SBATCH --gpu-priority=low) never showed a queue at -10 on the shared directory"
    finish
fi
low=$(queue_of $USER_B -10)
echo "ok: job $low_job of user $USER_B runs at -10 (pid $low) on the shared directory"

# 2. Suspended, it holds nothing up: the high job starts and runs.
scontrol suspend "$low_job"
stopped() { [ "$(sed 's/.*) \([A-Za-z]\).*/\1/' /proc/"$low"/stat 2>/dev/null)" = T ]; }
wait_for 10 stopped && echo "ok: scontrol suspend stopped the low job's process" ||
    fail "the low job's process $low is not stopped after scontrol suspend"
before=$(kernels_of "$low")
as_user $USER_A timeout 150 srun -p inference -t 5 --gpu-priority=high "$worker" "$tmp/out/stop-high" 140 \
    >"$tmp/out/high.out" 2>"$tmp/out/high.err" &
srun_pid=$!
high_ready() { grep -q '^ready$' "$tmp/out/high.out"; }
if ! wait_for 60 has_queue $USER_A 10 || ! wait_for 30 high_ready; then
    fail "user $USER_A's srun --gpu-priority=high never ran its first kernel next to the suspended job"
    finish
fi
high=$(queue_of $USER_A 10)
echo "ok: srun --gpu-priority=high of user $USER_A runs at 10 (pid $high) next to the suspended job"
# Unhindered: its kernels go on while the low job stays stopped (1-ms kernels: 200 take 0.2 s).
ran_200() { [ "$(kernels_of "$high")" -ge 200 ]; }
wait_for 30 ran_200 && echo "ok: the high job ran 200 kernels while the low job was suspended" ||
    fail "the high job ran only $(kernels_of "$high") kernels in 30 s while the low job was suspended"
expect "the suspended job ran no kernel meanwhile" "$before" "$(kernels_of "$low")"

# 3. Resumed, the low job is held behind the high one.
scontrol resume "$low_job"
running() { ! stopped; }
wait_for 10 running || fail "the low job did not resume"
sleep 1
l0=$(kernels_of "$low") h0=$(kernels_of "$high")
sleep 3
l1=$(kernels_of "$low") h1=$(kernels_of "$high")
echo "in 3 s after the resumption: high job $((h1 - h0)) kernels, low job $((l1 - l0))"
[ $((h1 - h0)) -ge 100 ] || fail "the high job ran fewer than 100 kernels in 3 s"
[ $(((l1 - l0) * 4)) -lt $((h1 - h0)) ] && echo "ok: the low job is held behind the high one" ||
    fail "the low job ran $((l1 - l0)) kernels next to the high job's $((h1 - h0)): not held"
gates=$(queues | awk -v u=$USER_B '$2 == u { print $4 }' | sort -u | tr '\n' ' ')
case $gates in
*suspended* | *throttled*) echo "ok: gpuprio top shows the low job's queue $gates" ;;
*) fail "gpuprio top shows the low job's queue as '$gates', not suspended or throttled" ;;
esac

# 4. scancel frees the low job's place; the high job ends as it would alone.
scancel "$low_job"
wait_for 20 no_queue_of $USER_B && echo "ok: after scancel the low job's queue left the board" ||
    fail "after scancel user $USER_B still has a queue: $(queues)"
gone() { ! kill -0 "$low" 2>/dev/null || grep -q ') Z' /proc/"$low"/stat 2>/dev/null; }
wait_for 20 gone || fail "the low job's process $low outlived scancel by 20 s"
h2=$(kernels_of "$high")
more_200() { [ "$(kernels_of "$high")" -ge $((h2 + 200)) ]; }
wait_for 30 more_200 && echo "ok: the high job runs on after the cancellation" ||
    fail "the high job ran only $(($(kernels_of "$high") - h2)) kernels in 30 s after the cancellation"
touch "$tmp/out/stop-high"
srun_done() { ! kill -0 "$srun_pid" 2>/dev/null; }
wait_for 30 srun_done || fail "srun did not end 30 s after its program was told to"
wait "$srun_pid"
expect "the high job's exit status" 0 $?
srun_pid=
expect "the high job's stream ran at priority 10" "priority 10" "$(grep '^priority' "$tmp/out/high.out")"
finish
