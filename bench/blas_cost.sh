#!/bin/sh
# blas_cost.sh [BUILD_DIR] [CALLS]: what gpuprio's BLAS entry points add to a GEMM call that is not
# sliced, on the fake driver, cuBLAS and cuBLASLt (bench/blas_cost.c; no GPU), side by side in one
# run. For each path (gemmex: cublasSetStream_v2 + cublasSetWorkspace_v2 + cublasGemmEx per
# matmul; lt: cublasLtMatmul with a bias) and setting, it prints the ns per call the shim adds over
# the fakes' own functions in the same process:
#   native   no shim (both sides the fakes': the noise floor)
#   default  under the shim, GEMM slicing at its default (every call is looked at)
#   off      GPUPRIO_GEMM_SLICE_US=0
#   gated    the default, at low priority next to an idle high-priority process on the device
#            (the calls' queues are held by gates), 64x64x64: too short to slice
#   long     gated, 64x64x256: longer than the slice bound but too narrow to cut (left whole as
#            "small": the case that translates a cublasGemmEx before it plans)
# With BASE=PATH/libgpuprio-cuda.so set, a second column gives the same for that shim (an older
# build), so that a change's before and after come from one run. Each figure is the best of 5
# rounds of CALLS (default 20000) calls; the fakes do no arithmetic (FAKE_CUBLASLT_NO_MATH=1).
set -eu
build=${1:-build}
calls=${2:-20000}
cd "$(dirname "$0")/.."
prog=$build/bench/blas_cost
client=$build/tests/cuda/mps_client
shim=$(pwd)/$build/src/shim/cuda/libgpuprio-cuda.so
for f in "$prog" "$client" "$shim"; do
    [ -e "$f" ] || { echo "blas_cost.sh: $f not built (cmake --build $build --target blas_cost)" >&2; exit 2; }
done
tmp=$(mktemp -d)
neighbour=
cleanup() {
    [ -z "$neighbour" ] || kill -9 "$neighbour" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
mkdir -m 700 "$tmp/boards"
export LD_LIBRARY_PATH="$(pwd)/$build/tests/cuda/fakecuda" FAKE_CUBLASLT_NO_MATH=1 \
    GPUPRIO_BOARD_DIR="$tmp/boards" FAKE_CUDA_BUS_ID="blascost$$" FAKE_CUDA_SMS=4

# A high-priority process on the device, joined and idle until its FIFO is written.
neighbour_start() { # SHIM
    rm -f "$tmp/fifo" "$tmp/client.out"
    mkfifo "$tmp/fifo"
    LD_PRELOAD=$1 GPUPRIO_PRIORITY=high "$client" "$tmp/fifo" >"$tmp/client.out" 2>/dev/null &
    neighbour=$!
    i=0
    until grep -qx ready "$tmp/client.out" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 200 ] && kill -0 "$neighbour" 2>/dev/null || { echo "blas_cost.sh: no neighbour" >&2; exit 1; }
        sleep 0.1
    done
}
neighbour_stop() {
    echo go >"$tmp/fifo"
    wait "$neighbour" || true
    neighbour=
}

added() { # PATH SETTING SHIM: the ns the shim adds per call, the fakes' own, heuristics per call
    size=64 k=
    [ "$2" = long ] && k=256
    case $2 in
    native) out=$("$prog" "$1" "$calls" $size) ;;
    off) out=$(LD_PRELOAD=$3 GPUPRIO_GEMM_SLICE_US=0 "$prog" "$1" "$calls" $size) ;;
    default) out=$(LD_PRELOAD=$3 "$prog" "$1" "$calls" $size) ;;
    gated | long)
        neighbour_start "$3"
        out=$(LD_PRELOAD=$3 GPUPRIO_PRIORITY=low "$prog" "$1" "$calls" $size $k)
        neighbour_stop ;;
    esac
    echo "$out" |
        sed -n 's/.*straight \([0-9-]*\) ns, added \([0-9-]*\) ns.*; \([0-9.]*\) heur.*/\2 \1 \3/p'
}

base=${BASE:-}
printf '%-7s %-8s %9s %9s %10s' path setting straight added heuristics
[ -z "$base" ] || printf ' %11s %10s' "base added" heuristics
printf '\n'
for path in gemmex lt; do
    for setting in native default off gated long; do
        set -- $(added $path $setting "$shim")
        printf '%-7s %-8s %9s %9s %10s' $path $setting "$2" "$1" "$3"
        if [ -n "$base" ]; then
            set -- $(added $path $setting "$base")
            printf ' %11s %10s' "$1" "$3"
        fi
        printf '\n'
    done
done
echo "ns per call (per matmul: gemmex is 3 calls); added: through the shim minus straight to the"
echo "fakes, in the same process; heuristics: queries the fake cuBLASLt answered per call"
