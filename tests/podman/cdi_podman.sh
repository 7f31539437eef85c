#!/bin/sh
# cdi_podman.sh - podman.cdi: `gpuprio cdi` and real podman (Debian 12's, rootful). Two
# containers, each with its own pid, mount and IPC namespaces and its own root filesystem (made
# here, offline, from the test programs and the libraries they need: no gpuprio in it), share
# only the board directory and the simulated GPU (its one shared-memory file, as a real GPU's
# device nodes are shared):
#   - one started with `--device gpuprio.dev/priority=high` (the spec `gpuprio cdi --output
#     /var/run/cdi` wrote, the administrator's configuration file in use), the other in the
#     LD_PRELOAD form (`-v` of the library, the board directory and the file, `-e LD_PRELOAD`,
#     `-e GPUPRIO_PRIORITY=low`);
#   - gpuprio top on the host lists a queue of each, at 10 and -10, both of pid 1 (each its
#     container's first process); the low one is held behind the high one (it completes fewer than
#     a quarter of the kernels the high one completes; without scheduling across the containers
#     they take turns), and both end with status 0 once told to, having run at 10 and -10.
# Without the --device, the first container runs without gpuprio, and the test fails.
#
# This sandbox needs two things a normal host does not (each done in a mount namespace of the
# test's own, so nothing outside changes): crun 1.8 refuses a hybrid cgroup layout whose cgroup2
# mount has controllers, so that mount is unmounted there; and the limits podman asks for by
# default cannot be raised without CAP_SYS_RESOURCE, so the containers get the current ones.
#
#   cdi_podman.sh GPUPRIO LIBRARY TOOLS_WORKER HIPSIM_LIBRARY
set -u
. "$(dirname "$0")/../tools/expect.sh"
if [ "$(id -u)" != 0 ]; then
    echo "skipped: podman.cdi runs rootful podman: it runs as root"
    exit 77
fi
if ! command -v podman >/dev/null 2>&1; then
    echo "skipped: podman is not installed (Debian 12's podman; scripts/install-deps.sh installs it)"
    exit 77
fi
if [ "${PODMAN_TEST_INNER:-}" != 1 ]; then
    if ! why=$(unshare --pid --fork --mount --propagation private --mount-proc true 2>&1); then
        echo "skipped: cannot make a pid and mount namespace for the test (unshare: $why)"
        exit 77
    fi
    # Every container, conmon and podman process dies with the namespace, whatever happens.
    PODMAN_TEST_INNER=1 exec unshare --pid --fork --kill-child --mount --propagation private \
        --mount-proc sh "$0" "$@"
fi
gpuprio=$1 library_src=$2 worker_src=$3 sim_src=$4
sandbox podman-cdi
seg=/dev/shm/hipsim-0-$name-0
pod() {
    podman --root "$tmp/storage" --runroot /run/podman --tmpdir "$tmp/ptmp" --storage-driver vfs \
        --cgroup-manager cgroupfs --events-backend file "$@"
}
# Whatever happened: the containers removed (which unmounts what podman mounted in $tmp), and
# anything still mounted there unmounted, so that $tmp can be removed.
cleanup() {
    pod rm -a -f -t 0 >/dev/null 2>&1
    if [ "$$" = 1 ]; then # the namespace's first process: end every other one (conmon...)
        kill -9 -1 2>/dev/null
        sleep 0.2
    fi
    awk -v t="$tmp/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r m; do umount -l "$m"; done
    rm -rf "$tmp"
    rm -f "$seg"
}
trap cleanup EXIT

# crun 1.8 refuses "hybrid" cgroups (a cgroup2 mount with controllers beside the v1 ones).
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null &&
    grep -q . /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
    umount /sys/fs/cgroup/unified || { echo "FAIL: cannot unmount the hybrid cgroup2 mount"; exit 1; }
fi
# A /run of the test's own: podman's runtime state, and /var/run/cdi for the spec.
mount -t tmpfs -o mode=755 tmpfs /run && mkdir /run/cdi || exit 1

# The administrator's configuration file and its shared directory (root's, sticky).
mkdir -m 1777 "$tmp/shared" && chmod 1777 "$tmp/shared" && chmod 755 "$tmp"
printf 'board_dir = %s\n' "$tmp/shared" >"$tmp/gpuprio.conf" && chmod 644 "$tmp/gpuprio.conf"
export GPUPRIO_CONFIG=$tmp/gpuprio.conf
# The library where a package installs it: the spec names the path the command finds.
mkdir -p "$tmp/inst/bin" "$tmp/inst/lib"
cp "$gpuprio" "$tmp/inst/bin/gpuprio" && cp "$library_src" "$tmp/inst/lib/" || exit 1
library=$tmp/inst/lib/$(basename "$library_src")
if ! GPUPRIO_LIBRARY_DIR=$tmp/inst/lib "$tmp/inst/bin/gpuprio" cdi --shim hip --output /run/cdi \
    >"$tmp/cdi.out" 2>&1; then
    echo "FAIL: gpuprio cdi: $(cat "$tmp/cdi.out")"
    exit 1
fi
expect "gpuprio cdi --output /run/cdi prints the spec's path" /run/cdi/gpuprio.yaml "$(cat "$tmp/cdi.out")"

# The simulated GPU: its shared-memory file, made by a first process on the host.
touch "$tmp/stop-first"
if ! GPUPRIO_BOARD_DIR=$tmp HIPSIM_SHARED=$name LD_PRELOAD=$library \
    LD_LIBRARY_PATH=$(dirname "$sim_src") "$worker_src" "$tmp/stop-first" 10 >/dev/null 2>&1 ||
    [ ! -f "$seg" ]; then
    echo "FAIL: the simulated device's file $seg was not made"
    exit 1
fi

# A root filesystem per container: the worker, the simulator as the HIP runtime, and the C
# libraries they and the preload library need, nothing of gpuprio.
make_root() { # DIR
    mkdir -p "$1/opt/bin" "$1/opt/sim" "$1/dev" "$1/proc" "$1/sys" "$1/etc" "$1/tmp"
    cp "$worker_src" "$1/opt/bin/worker" && cp "$sim_src" "$1/opt/sim/libamdhip64.so.6" || return 1
    for l in $(for f in "$worker_src" "$library" "$sim_src"; do ldd "$f"; done |
        grep -o '/[^ ]*' | sort -u); do
        case $l in
        */libamdhip64.so*) continue ;;
        esac
        mkdir -p "$1$(dirname "$l")" && cp -L "$l" "$1$l" || return 1
    done
}
make_root "$tmp/root-high" && make_root "$tmp/root-low" || { echo "FAIL: making the roots"; exit 1; }

# The hard limits of now (podman itself lowers the processes' to 32768).
nproc=$(awk '/^Max processes/ { print $4 }' /proc/self/limits)
nofile=$(awk '/^Max open files/ { print $5 }' /proc/self/limits)
{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
[ "$nofile" = unlimited ] && nofile=1048576
common="--network none --ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc
        -v $seg:$seg -e HIPSIM_SHARED=$name -e LD_LIBRARY_PATH=/opt/sim -e GPUPRIO_HW_PRIORITY=off"
# shellcheck disable=SC2086
pod run -d --name high $common --device gpuprio.dev/priority=high --rootfs "$tmp/root-high" \
    /opt/bin/worker /stop 120 >"$tmp/high.id" 2>"$tmp/high.err" ||
    { echo "FAIL: podman run --device gpuprio.dev/priority=high:"; cat "$tmp/high.err"; exit 1; }
in=/opt/gpuprio/lib/$(basename "$library")
# shellcheck disable=SC2086
pod run -d --name low $common -v "$library:$in:ro" -v "$tmp/shared:$tmp/shared" \
    -v "$tmp/gpuprio.conf:/etc/gpuprio.conf:ro" -e "LD_PRELOAD=$in" -e "GPUPRIO_BOARD_DIR=$tmp/shared" \
    -e GPUPRIO_PRIORITY=low --rootfs "$tmp/root-low" /opt/bin/worker /stop 120 \
    >"$tmp/low.id" 2>"$tmp/low.err" ||
    { echo "FAIL: podman run (the LD_PRELOAD form):"; cat "$tmp/low.err"; exit 1; }

# gpuprio top on the host: "pid priority gate completed" per queue.
queues() {
    "$gpuprio" top --once --json 2>"$tmp/top.err" | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r.get("kind") == "queue":
        print(r["pid"], r["priority"], r["gate"], r["completed"])'
}
both() { [ "$(queues | awk '$2 == 10 || $2 == -10 { print $2 }' | sort | tr '\n' ' ')" = "-10 10 " ]; }
if ! wait_for 60 both; then
    echo "FAIL: gpuprio top never listed a queue at 10 and one at -10:"
    queues
    cat "$tmp/top.err"
    pod logs high
    pod logs low
    exit 1
fi
echo "ok: both containers' queues are on the shared directory, at 10 and -10"
expect "each is its container's pid 1 (pid namespaces of their own)" "1 1" \
    "$(queues | awk '$2 == 10 || $2 == -10 { print $1 }' | tr '\n' ' ' | sed 's/ $//')"
completed() { queues | awk -v p="$1" '$2 == p { print $4; exit }'; }
sleep 1
h0=$(completed 10) l0=$(completed -10)
sleep 3
h1=$(completed 10) l1=$(completed -10)
gate=$(queues | awk '$2 == -10 { print $3; exit }')
echo "in 3 s: the high container completed $((h1 - h0)) kernels, the low one $((l1 - l0))"
[ $((h1 - h0)) -ge 100 ] || { echo "FAIL: the high container completed fewer than 100 kernels in 3 s"; fails=$((fails + 1)); }
[ $(((l1 - l0) * 4)) -lt $((h1 - h0)) ] && echo "ok: the low container is held behind the high one" ||
    { echo "FAIL: the low container completed $((l1 - l0)) kernels next to $((h1 - h0)): not held"; fails=$((fails + 1)); }
case $gate in
suspended | throttled) echo "ok: gpuprio top shows the low container's queue $gate" ;;
*) echo "FAIL: the low container's queue is '$gate'"; fails=$((fails + 1)) ;;
esac

touch "$tmp/root-high/stop" "$tmp/root-low/stop"
for c in high low; do
    status=$(timeout 60 podman --root "$tmp/storage" --runroot /run/podman --tmpdir "$tmp/ptmp" \
        --storage-driver vfs --cgroup-manager cgroupfs --events-backend file wait "$c" 2>&1)
    expect "the $c container's exit status" 0 "$status"
done
expect "the high container (--device) ran at 10" "priority 10" "$(pod logs high 2>&1 | grep '^priority')"
expect "the low container (LD_PRELOAD) ran at -10" "priority -10" "$(pod logs low 2>&1 | grep '^priority')"
[ $fails = 0 ] || { pod logs high; pod logs low; }
[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
