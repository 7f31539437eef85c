# cluster.sh - sourced by the slurm.* tests: a real one-node Slurm cluster (munged, slurmctld,
# slurmd of Debian's packages) that a test starts for itself, with its configuration, state, logs
# and munge key in the test's directory, and the gpuprio SPANK plugin in its plugstack.conf.
# POSIX sh; tests/tools/expect.sh must be sourced first.
#
#   cluster_enter SCRIPT ARGS...   as the test's first step: exits 77 (skipped), saying why, where
#                                  the cluster cannot run (not root, a Slurm or munge program
#                                  missing, no namespaces); else runs SCRIPT again in a pid and
#                                  mount namespace of its own (CLUSTER_INNER=1), so that every
#                                  daemon and job dies with it whatever happens, and the users'
#                                  accounts can be added to a private /etc/passwd; returns in the
#                                  namespace only
#   cluster_start PLUGIN LIBRARY WORDS...
#                                  sets up $tmp (sandbox) for two users (USER_A 4241 gpuprio-a,
#                                  USER_B 4242 gpuprio-b), writes plugstack.conf (PLUGIN with
#                                  library=LIBRARY and WORDS; PLUGIN "-" leaves it empty), starts
#                                  the daemons and waits (at most 60 s) until the node is idle;
#                                  two partitions: batch (the default) and inference
#   cluster_plugstack PLUGIN LIBRARY WORDS...  rewrites plugstack.conf (read at each job step)
#   as_user UID COMMAND...         runs COMMAND as user UID (in $tmp, with SLURM_CONF)
#   cluster_stop                   kills the daemons and every other process of the namespace
#                                  (the EXIT trap does)
#   cluster_logs                   prints the daemons' logs (on failure)
USER_A=4241
USER_B=4242

cluster_enter() { # SCRIPT ARGS...
    [ "${CLUSTER_INNER:-}" = 1 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "skipped: the Slurm tests start munged, slurmctld and slurmd, and run jobs as two" \
            "users: they run as root"
        exit 77
    fi
    _ce_missing=
    for _ce_p in munged slurmctld slurmd srun sbatch scontrol squeue sinfo scancel setpriv \
        unshare python3; do
        command -v "$_ce_p" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$_ce_p" \
            >/dev/null 2>&1 || _ce_missing="$_ce_missing $_ce_p"
    done
    if [ -n "$_ce_missing" ]; then
        echo "skipped: Slurm is not installed here (missing:$_ce_missing); Debian 12's" \
            "slurm-wlm and munge provide it (scripts/install-deps.sh installs them)"
        exit 77
    fi
    if ! _ce_why=$(unshare --pid --fork --mount --propagation private --mount-proc true 2>&1); then
        echo "skipped: cannot make a pid and mount namespace for the cluster (unshare: $_ce_why)"
        exit 77
    fi
    # --kill-child: if this test is killed (ctest's timeout), the namespace's first process is
    # too, and the kernel then kills every process in the namespace: no daemon outlives the test.
    CLUSTER_INNER=1 exec unshare --pid --fork --kill-child --mount --propagation private \
        --mount-proc sh "$@"
}

cluster_pids=
cluster_stop() {
    for _cs_pid in $cluster_pids; do kill -9 "$_cs_pid" 2>/dev/null; done
    cluster_pids=
    # The namespace's first process (this script, in it): every other process of the namespace
    # too (slurmstepd, the jobs), so that none writes in $tmp while it is removed.
    if [ "$$" = 1 ]; then
        kill -9 -1 2>/dev/null
        sleep 0.2
    fi
}

cluster_logs() {
    for _cl_f in "$tmp/slurmctld.log" "$tmp/slurmd.log" "$tmp/munge/munged.log"; do
        [ -f "$_cl_f" ] || continue
        echo "---- $_cl_f (last 40 lines)"
        tail -n 40 "$_cl_f"
    done
}

cluster_plugstack() { # PLUGIN LIBRARY WORDS...
    if [ "$1" = - ]; then
        : >"$tmp/plugstack.conf"
    else
        _cp_plugin=$1 _cp_library=$2
        shift 2
        echo "required $_cp_plugin library=$_cp_library $*" >"$tmp/plugstack.conf"
    fi
    chmod 644 "$tmp/plugstack.conf"
}

# Two TCP ports nobody listens on now (the cluster shares the machine's network).
free_ports() {
    python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}

as_user() { # UID COMMAND...
    _au_uid=$1
    shift
    (cd "$tmp/out" && SLURM_CONF=$tmp/slurm.conf exec setpriv --reuid="$_au_uid" \
        --regid="$_au_uid" --clear-groups "$@")
}

cluster_start() { # PLUGIN LIBRARY WORDS...
    PATH=$PATH:/usr/sbin:/sbin
    chmod 755 "$tmp"
    # The two users, in this mount namespace only.
    cp /etc/passwd "$tmp/passwd" && cp /etc/group "$tmp/group" || return 1
    printf 'gpuprio-a:x:%s:%s::/nonexistent:/bin/sh\ngpuprio-b:x:%s:%s::/nonexistent:/bin/sh\n' \
        $USER_A $USER_A $USER_B $USER_B >>"$tmp/passwd"
    printf 'gpuprio-a:x:%s:\ngpuprio-b:x:%s:\n' $USER_A $USER_B >>"$tmp/group"
    chmod 644 "$tmp/passwd" "$tmp/group"
    mount --bind "$tmp/passwd" /etc/passwd && mount --bind "$tmp/group" /etc/group || return 1
    # Where the jobs write (their output, the kernel trace): every user's.
    mkdir -m 1777 "$tmp/out" && chmod 1777 "$tmp/out"

    mkdir -m 700 "$tmp/munge" && mkdir -m 755 "$tmp/msock" || return 1
    dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$tmp/munge/munge.key"
    munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/msock/munge.sock" \
        --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
        --seed-file="$tmp/munge/seed" || { echo "munged did not start"; return 1; }
    cluster_pids="$cluster_pids $(cat "$tmp/munge/munged.pid")"

    mkdir -p "$tmp/state" "$tmp/spool"
    cluster_plugstack "$@"
    set -- $(free_ports)
    cat >"$tmp/slurm.conf" <<EOF
ClusterName=gpuprio-test
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmctldPort=$1
SlurmdPort=$2
AuthType=auth/munge
AuthInfo=socket=$tmp/msock/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=2
SlurmctldDebug=info
SlurmdDebug=info
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=batch Nodes=node1 Default=YES
PartitionName=inference Nodes=node1
EOF
    chmod 644 "$tmp/slurm.conf"
    export SLURM_CONF="$tmp/slurm.conf"
    slurmctld -f "$tmp/slurm.conf" -i || { echo "slurmctld did not start"; return 1; }
    wait_for 10 test -s "$tmp/slurmctld.pid"
    cluster_pids="$cluster_pids $(cat "$tmp/slurmctld.pid" 2>/dev/null)"
    slurmd -f "$tmp/slurm.conf" -N node1 || { echo "slurmd did not start"; return 1; }
    wait_for 10 test -s "$tmp/slurmd.pid"
    cluster_pids="$cluster_pids $(cat "$tmp/slurmd.pid" 2>/dev/null)"
    node_idle() { [ "$(sinfo -h -n node1 -o %t 2>/dev/null | head -n 1)" = idle ]; }
    if ! wait_for 60 node_idle; then
        echo "the node never came up: $(sinfo -h -n node1 -o '%t %E' 2>&1)"
        return 1
    fi
    echo "ok: one-node cluster up (slurmctld port $1, slurmd port $2)"
}
