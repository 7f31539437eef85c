#!/bin/sh
# with-mps.sh COMMAND [ARG...]: runs COMMAND with an NVIDIA MPS control daemon of its own
# (docs/mps.md), then stops the daemon, whatever COMMAND did. The daemon's pipe and log
# directories are temporary (CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY are exported to
# COMMAND, so its CUDA processes are the daemon's clients), removed at the end unless
# MPS_KEEP_LOG=DIR names where to copy the log. No GPU setting is changed: the compute mode stays
# what it is (MPS runs in the default mode; exclusive-process mode is the administrator's
# choice). Exits with COMMAND's status, or 125 when the daemon cannot start or stop.
set -u
if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARG...]" >&2
    exit 2
fi
if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    echo "$0: nvidia-cuda-mps-control is not installed (it comes with the NVIDIA driver)" >&2
    exit 125
fi
dir=$(mktemp -d /tmp/gpuprio-mps-XXXXXX) || exit 125
export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log"
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
stop() {
    echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
    # The daemon and its server exit on their own after quit; wait for them, briefly.
    i=0
    while [ $i -lt 50 ] && pgrep -f "^nvidia-cuda-mps-(control|server)" >/dev/null 2>&1; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -n "${MPS_KEEP_LOG:-}" ] && cp "$CUDA_MPS_LOG_DIRECTORY"/*.log "$MPS_KEEP_LOG"/ 2>/dev/null
    rm -rf "$dir"
}
if ! nvidia-cuda-mps-control -d; then
    echo "$0: the MPS control daemon did not start" >&2
    rm -rf "$dir"
    exit 125
fi
trap 'stop; exit 130' INT TERM
"$@"
status=$?
stop
exit $status
