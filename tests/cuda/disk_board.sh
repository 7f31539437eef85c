#!/bin/sh
# disk_board.sh - the CUDA path with the board directory on a disk filesystem:
#   - the fake driver refuses to register a shared mapping of a file there, as the real one does
#     (Linux does not allow long-term pinning of such pages): CUDA_ERROR_OUT_OF_MEMORY; a file on
#     /dev/shm (tmpfs) and anonymous memory it registers (host_register.c);
#   - gpuprio then mirrors its gates (docs/design.md, "Mirrored gates") and the device still runs
#     Level 2: reset.sh's scenario (a low-priority program tearing its context down between phases
#     next to a bursting high-priority one) with its board there says Level 2, mirrored, at info,
#     no "Level 1 only", no gate refused (the fake refuses a wait on memory not registered), and
#     gates put after the first teardown, so the private copy was registered again too.
#
#   disk_board.sh LIB CTX_RESET HOST_REGISTER DISK_DIR
# DISK_DIR: a directory on a disk filesystem (the build tree); skipped (77) where it is not.
set -u
if [ $# != 4 ]; then
    echo "usage: disk_board.sh LIB CTX_RESET HOST_REGISTER DISK_DIR" >&2
    exit 2
fi
lib=$1 ctx_reset=$2 host_register=$3 disk=$4
. "$(dirname "$0")/../tools/expect.sh"
need_disk_fs "$disk"
tmp=$(mktemp -d "$disk/gpuprio-cuda-disk.XXXXXX") || exit 1
shm=$(mktemp -d /dev/shm/gpuprio-cuda-disk.XXXXXX) || exit 1
trap 'rm -rf "$tmp" "$shm"' EXIT
trap 'exit 1' HUP INT TERM

"$host_register" "$tmp/lines" >"$tmp/disk.out" 2>&1
expect "host_register on $(stat -f -c %T "$disk"): exit status" 0 $?
expect "a shared file mapping on disk: CUDA_ERROR_OUT_OF_MEMORY (2)" "file: 2" "$(grep '^file:' "$tmp/disk.out")"
expect "anonymous memory: registered" "anonymous: 0" "$(grep '^anonymous:' "$tmp/disk.out")"
"$host_register" "$shm/lines" >"$tmp/shm.out" 2>&1
expect "host_register on /dev/shm: exit status" 0 $?
expect "a shared file mapping on tmpfs: registered" "file: 0" "$(grep '^file:' "$tmp/shm.out")"

RESET_BOARDS_IN=$tmp sh "$(dirname "$0")/reset.sh" reset "$lib" "$ctx_reset" >"$tmp/reset.out" 2>&1
expect "reset.sh with the board on disk: exit status" 0 $?
expect "Level 2, mirrored, said at info" 1 \
    "$(grep -c "device 0: Level 2 (.*), mirrored: the runtime refused to register the board's gate lines ($tmp/gpuprio-reset-boards\.[A-Za-z0-9]* is on [a-z0-9]*)" "$tmp/reset.out")"
expect "no 'Level 1 only'" 0 "$(grep -c 'Level 1 only' "$tmp/reset.out")"
if [ "$fails" -gt 0 ]; then
    for f in "$tmp"/*.out; do
        echo "--- $f"
        cat "$f"
    done
fi
[ "$fails" -eq 0 ]
