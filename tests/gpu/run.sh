#!/bin/sh
# tests/gpu/run.sh OUTDIR - the CUDA shim on a real NVIDIA GPU (CUDA 13, nvcc, PyTorch), about
# two to three minutes on an H100. Everything is written under OUTDIR; summary.txt has one line
# per check, and the exit status is the number of failed checks (0: all passed).
#
#   1. builds libgpuprio-cuda.so (cmake, Release) into OUTDIR/build;
#   2. procaddress_probe: which exported function cuGetProcAddress_v2's pointers are (the shim's
#      wrapper swap relies on them being exports), and the completion markers' assumptions;
#   3. CUDA ports of three conformance programs (in_order, cross_stream_events, null_stream),
#      run without and with LD_PRELOAD=libgpuprio-cuda.so: stdout and exit status identical;
#      in_order also with scheduling at work (streams of different priorities);
#   4. torch_identical.py (BERT-base, a CUDA-graph MLP, two streams with events, ResNet-50,
#      GPT-2 small, a torch.compile model with Triton kernels): output bytes
#      identical without the shim, with it, with scheduling at work and with hardware priorities,
#      exit status 0; under the shim the gpuprio API must report work it saw (queue statistics
#      in OUTDIR/torch/*.stats).
#
# Environment: PYTHON (default python3), NVCC (default /usr/local/cuda/bin/nvcc or nvcc on
# PATH), NVCC_ARCH (default -arch=native), CC (default cc).
set -u
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/gpu
python=${PYTHON:-python3}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${NVCC_ARCH:--arch=native}
cc=${CC:-cc}
cuda_inc=/usr/local/cuda/include
failed=0
: > "$out/summary.txt"

note() { echo "$*" | tee -a "$out/summary.txt"; }
pass() { note "PASS $*"; }
fail() { note "FAIL $*"; failed=$((failed + 1)); }
start=$(date +%s)

# ---- 1. build ----
# Only the CUDA library is built (a machine with CUDA only configures without the HIP parts).
if cmake -S "$root" -B "$out/build" -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 &&
    cmake --build "$out/build" -j"$(nproc)" --target gpuprio-cuda >> "$out/build.log" 2>&1; then
    shim=$(find "$out/build" -name libgpuprio-cuda.so -type f | head -n 1)
fi
if [ -z "${shim:-}" ]; then
    fail "build (see build.log)"
    exit 1
fi
pass "build: $shim"

# ---- 2. the probe (never under the shim: it compares raw dlsym answers) ----
mkdir -p "$out/bin"
if $cc -O2 -std=c11 -D_GNU_SOURCE -I"$cuda_inc" -o "$out/bin/procaddress_probe" \
    "$here/procaddress_probe.c" -ldl -lpthread > "$out/probe-build.log" 2>&1; then
    "$out/bin/procaddress_probe" > "$out/procaddress_probe.txt" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^ok: 0 lookups match no export' "$out/procaddress_probe.txt"; then
        pass "procaddress_probe: every pointer is an export"
    else
        fail "procaddress_probe (exit $rc): see procaddress_probe.txt"
    fi
else
    fail "procaddress_probe does not build (see probe-build.log)"
fi

# ---- 3. conformance ports ----
progs="in_order cross_stream_events null_stream"
for p in $progs; do
    "$nvcc" -O2 $arch -o "$out/bin/$p" "$here/$p.cu" > "$out/bin/$p.build.log" 2>&1 &
done
wait
mkdir -p "$out/conformance"
# compare NAME LABEL [ENV...]: runs the program without the shim and under it (with ENV).
compare() {
    name=$1 label=$2
    shift 2
    bin=$out/bin/$name base=$out/conformance/$name
    [ -x "$bin" ] || { fail "$name does not build (see bin/$name.build.log)"; return; }
    [ -e "$base.native.out" ] || { "$bin" > "$base.native.out" 2> "$base.native.err"; echo $? > "$base.native.rc"; }
    env "$@" LD_PRELOAD="$shim" "$bin" > "$base.$label.out" 2> "$base.$label.err"
    echo $? > "$base.$label.rc"
    if cmp -s "$base.native.out" "$base.$label.out" && cmp -s "$base.native.rc" "$base.$label.rc" &&
        [ "$(cat "$base.native.rc")" = 0 ]; then
        pass "$name ($label): identical, exit 0"
    else
        diff -u "$base.native.out" "$base.$label.out" > "$base.$label.diff"
        fail "$name ($label): differs (exit $(cat "$base.native.rc") vs $(cat "$base.$label.rc"); see conformance/$name.$label.diff)"
    fi
}
for p in $progs; do
    compare "$p" shim GPUPRIO_LOG=info
done
# Scheduled: its streams get different priorities, so gpuprio throttles and follows them. The
# other two programs look at streams "after N ms", which holding a low-priority thread may
# legitimately change (as in the HIP suite's hpf variant).
compare in_order scheduled GPUPRIO_LOG=info GPUPRIO_STREAM_PRIORITIES=low,high,normal GPUPRIO_WINDOW=2

# ---- 4. PyTorch ----
mkdir -p "$out/torch"
export CUBLAS_WORKSPACE_CONFIG=:4096:8
t=$out/torch
"$python" "$here/torch_identical.py" "$t/native.bin" > "$t/native.log" 2>&1
echo $? > "$t/native.rc"
if [ "$(cat "$t/native.rc")" != 0 ]; then
    fail "torch_identical.py without the shim exits $(cat "$t/native.rc") (see torch/native.log)"
else
    # torch_variant LABEL [ENV...]
    torch_variant() {
        label=$1
        shift
        env "$@" LD_PRELOAD="$shim" "$python" "$here/torch_identical.py" "$t/$label.bin" \
            --expect-gpuprio "$t/$label.stats" > "$t/$label.log" 2>&1
        rc=$?
        seen=$(sed -n 's/^total submitted //p' "$t/$label.stats" 2>/dev/null)
        if [ $rc = 0 ] && cmp -s "$t/native.bin" "$t/$label.bin"; then
            pass "torch ($label): outputs bit-identical, exit 0, gpuprio saw ${seen:-0} commands"
        else
            fail "torch ($label): exit $rc, outputs $(cmp -s "$t/native.bin" "$t/$label.bin" && echo identical || echo DIFFER) (see torch/$label.log)"
        fi
    }
    torch_variant shim GPUPRIO_LOG=info
    torch_variant scheduled GPUPRIO_LOG=info GPUPRIO_STREAM_PRIORITIES=high,low,normal,low GPUPRIO_WINDOW=2
    torch_variant hw_priority GPUPRIO_LOG=info GPUPRIO_PRIORITY=high
fi

note "$failed failed, $(($(date +%s) - start)) s"
exit $failed
