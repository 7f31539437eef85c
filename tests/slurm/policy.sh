#!/bin/sh
# policy.sh - slurm.policy: the SPANK plugin's option and the site's policy, on a real one-node
# Slurm cluster (cluster.sh) with jobs of an unprivileged user:
#   - srun --gpu-priority=P and #SBATCH --gpu-priority=P (the batch script and the srun steps in
#     it) give the task LD_PRELOAD of the library and GPUPRIO_PRIORITY; a user's own LD_PRELOAD
#     is kept behind it, and the library is not put there twice;
#   - a job that asks nothing gets its partition's default (default.partition.inference=high), or
#     the site's (default=low); --gpu-priority=off runs it without gpuprio, also where its
#     environment came with gpuprio (the library and GPUPRIO_PRIORITY taken out); a user's
#     LD_PRELOAD longer than 4 KiB is kept whole; a library= the node does not have runs the
#     task without gpuprio, with a message;
#   - a priority above the partition's cap (cap.partition.batch=normal) is refused with a message
#     in the job's stderr, whether asked by the option or by GPUPRIO_PRIORITY, and, with
#     over_cap=clamp, runs at the cap with a warning; a partition's forged SLURM_JOB_PARTITION in
#     the user's environment changes nothing;
#   - a value that is not a priority is refused by srun and sbatch before anything is submitted;
#   - a plugstack.conf word the plugin does not understand stops every step, with one message.
#
#   policy.sh PLUGIN LIBRARY
set -u
. "$(dirname "$0")/../tools/expect.sh"
. "$(dirname "$0")/cluster.sh"
[ "$1" = - ] && { echo "skipped: the Slurm plugin was not built (slurm/spank.h not found at configure: Debian's libslurm-dev)"; exit 77; }
cluster_enter "$0" "$@"
plugin_src=$1 library_src=$2
sandbox slurm-policy
trap 'cluster_stop; rm -rf "$tmp"' EXIT
mkdir -m 755 "$tmp/bin"
cp "$plugin_src" "$library_src" "$tmp/bin/" && chmod 755 "$tmp/bin"/*
plugin=$tmp/bin/$(basename "$plugin_src") library=$tmp/bin/$(basename "$library_src")
policy="default=low default.partition.inference=high cap.partition.batch=normal"
if ! cluster_start "$plugin" "$library" $policy; then
    cluster_logs
    exit 1
fi

# A step's output: what printenv prints of each name (unset: "-"), one line.
envs='for v in GPUPRIO_PRIORITY LD_PRELOAD; do printf "%s " "$(printenv $v || echo -)"; done'
step() { # UID SRUN-ARGS... (then the step prints its environment)
    _u=$1
    shift
    as_user "$_u" timeout 60 srun -t 1 "$@" sh -c "$envs" 2>"$tmp/step.err"
}
expect "srun -p inference --gpu-priority=low" "-10 $library " \
    "$(step $USER_A -p inference --gpu-priority=low)"
expect "inference partition, nothing asked: its default (high)" "10 $library " \
    "$(step $USER_A -p inference)"
expect "batch partition, nothing asked: the site's default (low)" "-10 $library " \
    "$(step $USER_B -p batch)"
expect "--gpu-priority=off: without gpuprio" "- - " "$(step $USER_A -p inference --gpu-priority=off)"
expect "an integer priority" "5 $library " "$(step $USER_A -p inference --gpu-priority=5)"
expect "the user's LD_PRELOAD kept behind the library" "10 $library:/usr/lib/x86_64-linux-gnu/libm.so.6 " \
    "$(LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libm.so.6 step $USER_A -p inference --gpu-priority=high)"
expect "the library not preloaded twice" "10 $library " \
    "$(LD_PRELOAD=$library step $USER_A -p inference --gpu-priority=high)"
# A user's LD_PRELOAD longer than Slurm's usual 4 KiB buffer: kept whole behind the library.
libm=/usr/lib/x86_64-linux-gnu/libm.so.6
long=$libm
for i in $(seq 150); do long="$long:$libm"; done
expect "a long LD_PRELOAD (${#long} bytes) kept behind the library" "10 $library:$long " \
    "$(LD_PRELOAD=$long step $USER_A -p inference --gpu-priority=high)"
# --gpu-priority=off where the environment came with gpuprio (a step of a batch script that runs
# under it): the library and GPUPRIO_PRIORITY taken out, the user's own preloads kept.
expect "--gpu-priority=off in an environment under gpuprio" "- - " \
    "$(LD_PRELOAD=$library GPUPRIO_PRIORITY=-10 step $USER_A -p inference --gpu-priority=off)"
expect "--gpu-priority=off keeps the user's own preloads" "- $libm " \
    "$(LD_PRELOAD="$library $libm" GPUPRIO_PRIORITY=-10 step $USER_A -p inference --gpu-priority=off)"

# Above the cap: refused, with the reason on the job's stderr.
ran_or_refused() { "$@" >/dev/null && echo ran || echo refused; }
expect "--gpu-priority=high in batch (cap normal)" refused \
    "$(ran_or_refused step $USER_B -p batch --gpu-priority=high)"
grep -q "gpuprio: job [0-9]* refused: --gpu-priority=high is above the highest priority this site allows for its partition batch and QOS .* (0); ask for 0 or less" "$tmp/step.err" &&
    echo "ok: the refusal says why" || { echo "FAIL: no refusal message:"; cat "$tmp/step.err"; fails=$((fails + 1)); }
expect "GPUPRIO_PRIORITY=critical in batch" refused \
    "$(GPUPRIO_PRIORITY=critical ran_or_refused step $USER_B -p batch)"
grep -q "refused: GPUPRIO_PRIORITY=critical is above" "$tmp/step.err" &&
    echo "ok: the refusal names GPUPRIO_PRIORITY" || { echo "FAIL:"; cat "$tmp/step.err"; fails=$((fails + 1)); }
expect "--gpu-priority=high in batch, SLURM_JOB_PARTITION=inference forged" refused \
    "$(SLURM_JOB_PARTITION=inference ran_or_refused step $USER_B -p batch --gpu-priority=high)"
expect "GPUPRIO_PRIORITY=urgent (no priority) asks nothing: the partition's default" "10 $library " \
    "$(GPUPRIO_PRIORITY=urgent step $USER_A -p inference)"
expect "at the cap: runs" "0 $library " "$(step $USER_B -p batch --gpu-priority=normal)"

# over_cap=clamp: at the cap, with a warning (plugstack.conf is read again for each step).
cluster_plugstack "$plugin" "$library" $policy over_cap=clamp
expect "over_cap=clamp: --gpu-priority=high in batch runs at normal" "0 $library " \
    "$(step $USER_B -p batch --gpu-priority=high)"
grep -q "gpuprio: job [0-9]*: --gpu-priority=high is above .* (0); running at 0" "$tmp/step.err" &&
    echo "ok: the clamp says so" || { echo "FAIL: no clamp message:"; cat "$tmp/step.err"; fails=$((fails + 1)); }

# A library= this node does not have: the task runs without gpuprio (no preload that ld.so
# would complain of in every process), with one message on the job's stderr.
cluster_plugstack "$plugin" "$tmp/bin/missing-libgpuprio-hip.so" $policy over_cap=clamp
expect "library= missing on the node: without gpuprio" "- - " \
    "$(step $USER_A -p inference --gpu-priority=high)"
expect "library= missing on the node: said once" 1 \
    "$(grep -c "gpuprio: job [0-9]* runs without gpuprio: its library $tmp/bin/missing-libgpuprio-hip.so cannot be read on this node" "$tmp/step.err")"
cluster_plugstack "$plugin" "$library" $policy over_cap=clamp

# Not a priority: refused before submission, by srun and by sbatch. Nothing submitted means no
# job id newer than the last one before them (squeue would also list that job while slurmctld
# completes it, after its srun returned: seen once in CI).
newest_job() {
    scontrol -o show jobs 2>/dev/null | sed -n 's/^JobId=\([0-9]*\) .*/\1/p' | sort -n | tail -n 1
}
before=$(newest_job)
expect "srun --gpu-priority=urgent" refused \
    "$(ran_or_refused as_user $USER_A timeout 60 srun -t 1 --gpu-priority=urgent true 2>"$tmp/bad.err")"
grep -q "gpu-priority=urgent is not a priority (accepted: idle, low, normal, high, critical" "$tmp/bad.err" &&
    echo "ok: srun says what is accepted" || { echo "FAIL:"; cat "$tmp/bad.err"; fails=$((fails + 1)); }
expect "sbatch --gpu-priority=urgent" refused \
    "$(ran_or_refused as_user $USER_A timeout 60 sbatch -t 1 --gpu-priority=urgent --wrap true 2>"$tmp/bad.err")"
grep -q "gpu-priority=urgent is not a priority" "$tmp/bad.err" &&
    echo "ok: sbatch says why" || { echo "FAIL:"; cat "$tmp/bad.err"; fails=$((fails + 1)); }
after=$(newest_job)
expect "nothing was submitted" "newest job ${before:-none}" "newest job ${after:-none}"

# #SBATCH --gpu-priority: the batch script and an srun step in it.
cat >"$tmp/out/job.sh" <<EOF
#!/bin/sh
#SBATCH --gpu-priority=normal
#SBATCH -p batch
#SBATCH -t 1
#SBATCH -o $tmp/out/job.out
#SBATCH -e $tmp/out/job.err
$envs
echo
srun sh -c '$envs'
EOF
chmod 755 "$tmp/out/job.sh"
job=$(as_user $USER_B sbatch --parsable "$tmp/out/job.sh")
done_job() { [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; }
wait_for 60 done_job || echo "FAIL: batch job $job did not end in 60 s"
expect "#SBATCH --gpu-priority=normal: the script, then its srun step" \
    "0 $library |0 $library " "$(tr '\n' '|' <"$tmp/out/job.out" | sed 's/|$//')"
show_stderr "$tmp/out" job

# A word the plugin does not understand: one message naming it, and (required) no step runs.
cluster_plugstack "$plugin" "$library" $policy cap.user.bob=low
expect "plugstack.conf with cap.user.bob=low: srun" refused \
    "$(ran_or_refused as_user $USER_A timeout 60 srun -t 1 -p inference true 2>"$tmp/bad.err")"
grep -q "gpuprio: plugstack.conf: 'cap.user.bob=low': unknown key (accepted: library=PATH" "$tmp/bad.err" &&
    echo "ok: ... naming the word and what is accepted" || { echo "FAIL:"; cat "$tmp/bad.err"; fails=$((fails + 1)); }

[ $fails = 0 ] || cluster_logs
[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
