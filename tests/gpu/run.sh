#!/bin/sh
# tests/gpu/run.sh [OUTDIR [CHECK...]] - the CUDA shim on a real NVIDIA GPU (CUDA 13, nvcc,
# PyTorch), about four to five minutes on an H100. Everything is written under OUTDIR; summary.txt has one line
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
#      in OUTDIR/torch/*.stats);
#   5. the Python package (python/) installed with pip into a virtual environment (offline),
#      on PyTorch's streams under the library (torch_package.py api) and without it
#      (not-loaded), and `gpuprio metrics --once` next to a PyTorch process whose two streams
#      got high and low through the package: both queues with their priorities and pid;
#   6. stop_check.py: a high-priority PyTorch process stopped (SIGSTOP) for 2 s holds a low one
#      back for about GPUPRIO_WATCHDOG_MS, not 2 s; and no board is left in /dev/shm at the end
#      (the last process to leave removes it);
#   7. under MPS (mps_pass.sh, with an MPS control daemon of its own): the conformance ports and
#      torch_identical.py at high priority identical to their runs without the shim, the shim
#      says it is an MPS client, GPUPRIO_CU_RESERVE=25% limits a low process to 75% of the SMs;
#      the daemon is gone afterwards;
#   8. gated: in_order and torch_identical.py at low priority next to a high-priority process
#      that runs bursts of matmuls 20 ms apart, so that their queues are held by gates on the
#      device (Level 2, closed in every burst): outputs identical to the native runs, and
#      PyTorch's queues were at Level 2 and suspended (their statistics).
#
#   9. reset: ctx_reset.c, a driver-API program that tears its context down between phases of
#      100 kernels (cuDevicePrimaryCtxReset and retained again; cuCtxCreate/cuCtxDestroy and
#      created again; the last cuDevicePrimaryCtxRelease), without the shim, under it, and under
#      it at low priority next to the bursting process of 8 (Level 2 gates closed in every
#      burst): stdout identical, exit 0 (issue 37: it died with SIGSEGV there), no gate refused;
#  10. torch_threads: torch_threads.py, a small model trained 200 steps, each step's forward in a
#      thread of its own that then ends (autograd's backward runs on PyTorch's persistent device
#      thread), without the shim and under it at low priority next to the bursting process of 8:
#      bursting throughout, killed (SIGKILL) at step 50, or stopped (SIGSTOP) there until the end:
#      losses and weights bit-identical, exit 0, at Level 2 with suspensions seen, and killed or
#      stopped within the native run's time plus 15 s (issue 37: retired queues' gates hung).
#  11. gemm: gemm_identical.py (large linear layers with a bias, which PyTorch issues to
#      cublasLtMatmul) without the shim and under it at low priority next to the bursting process
#      of 8 with GPUPRIO_GEMM_SLICE_US=1: output bytes identical, exit 0, and the library says it
#      cut calls into slices (issue 45).
#  12. gemmex: gemmex_identical.py (the LM head's three products and others, at PyTorch's default
#      backend, which sends them to cublasGemmEx, and batched products, which bmm and baddbmm
#      send to cublasGemmStridedBatchedEx) the same way: output bytes identical, exit 0, and the
#      library says it cut cublasGemmEx calls into cuBLASLt slices (issue 45); what it says of
#      cublasGemmStridedBatchedEx is reported beside it.
#  13. lm: lm_identical.py (20 training steps of a language model with GPT-2 medium's width and
#      its 50,257-token head, bf16) the same way: losses and weights bit-identical to the native
#      run's (run twice natively, the two must agree), and cublasGemmEx calls were sliced.
#  14. graphgate: graph_gates.py (PyTorch's CUDA graphs: a chain of 200 small matmuls, an LM
#      head's product, two graphs sharing a memory pool, make_graphed_callables training 10 steps)
#      the same way, with GPUPRIO_GRAPH_GATE_US=50 as well: output bytes identical, exit 0, and
#      the library says it gated graph launches (issue 45); what it says of cublasGemmEx (the
#      head's product, sliced inside the capture) is reported beside it.
#
# Environment: PYTHON (default python3), NVCC (default /usr/local/cuda/bin/nvcc or nvcc on
# PATH), NVCC_ARCH (default -arch=native), CC (default cc). OUTDIR defaults to $OUT. GPU_ONLY
# (or the arguments after OUTDIR) names the checks to run, the build always: probe,
# conformance, torch, python, stop, mps, gated, reset, torch_threads, gemm, gemmex, lm, graphgate (GPU_ONLY="reset
# torch_threads" runs only the cases of issue 37); unset, all of them.
set -u
dir=${1:-${OUT:-}}
[ -n "$dir" ] || { echo "usage: $0 OUTDIR [CHECK...] (or OUT=DIR)" >&2; exit 2; }
[ $# -gt 0 ] && shift
only=${*:-${GPU_ONLY:-}}
mkdir -p "$dir" || exit 2
out=$(cd "$dir" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/gpu
python=${PYTHON:-python3}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${NVCC_ARCH:--arch=native}
cc=${CC:-cc}
cuda_inc=/usr/local/cuda/include
failed=0
: > "$out/summary.txt"

# Whether check $1 runs (GPU_ONLY, or the arguments after OUTDIR; all when none is named).
want() {
    [ -z "$only" ] && return 0
    case " $only " in *" $1 "*) return 0 ;; esac
    return 1
}
wait_file() { n=0; until [ -e "$1" ] || [ $n = 600 ]; do sleep 0.1; n=$((n + 1)); done; }
note() { echo "$*" | tee -a "$out/summary.txt"; }
pass() { note "PASS $*"; }
fail() { note "FAIL $*"; failed=$((failed + 1)); }
start=$(date +%s)

# ---- 1. build ----
# Only the CUDA library is built (a machine with CUDA only configures without the HIP parts).
if cmake -S "$root" -B "$out/build" -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 &&
    cmake --build "$out/build" -j"$(nproc)" --target gpuprio-cuda gpuprio >> "$out/build.log" 2>&1; then
    shim=$(find "$out/build" -name libgpuprio-cuda.so -type f | head -n 1)
fi
if [ -z "${shim:-}" ]; then
    fail "build (see build.log)"
    exit 1
fi
pass "build: $shim"

# ---- 2. the probe (never under the shim: it compares raw dlsym answers) ----
mkdir -p "$out/bin"
if ! want probe; then
    :
elif $cc -O2 -std=c11 -D_GNU_SOURCE -I"$cuda_inc" -o "$out/bin/procaddress_probe" \
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
want conformance || progs=in_order # the gated check runs it
want conformance || want gated || progs=
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
if want conformance; then
    for p in $progs; do
        compare "$p" shim GPUPRIO_LOG=info
    done
    # Scheduled: its streams get different priorities, so gpuprio throttles and follows them. The
    # other two programs look at streams "after N ms", which holding a low-priority thread may
    # legitimately change (as in the HIP suite's hpf variant).
    compare in_order scheduled GPUPRIO_LOG=info GPUPRIO_STREAM_PRIORITIES=low,high,normal GPUPRIO_WINDOW=2
fi

# ---- 4. PyTorch ----
mkdir -p "$out/torch"
export CUBLAS_WORKSPACE_CONFIG=:4096:8
t=$out/torch
if want torch || want gated; then
    "$python" "$here/torch_identical.py" "$t/native.bin" > "$t/native.log" 2>&1
    echo $? > "$t/native.rc"
fi
if ! want torch && ! want gated; then
    :
elif [ "$(cat "$t/native.rc")" != 0 ]; then
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
    if want torch; then
        torch_variant shim GPUPRIO_LOG=info
        torch_variant scheduled GPUPRIO_LOG=info GPUPRIO_STREAM_PRIORITIES=high,low,normal,low GPUPRIO_WINDOW=2
        torch_variant hw_priority GPUPRIO_LOG=info GPUPRIO_PRIORITY=high
    fi
fi

# ---- 5. the Python package ----
if want python; then
p=$out/python
mkdir -p "$p"
py=$python
rm -rf "$p/venv"
if "$python" -m venv --system-site-packages "$p/venv" > "$p/venv.log" 2>&1 &&
    "$p/venv/bin/pip" install --no-index --no-cache-dir "$root/python" >> "$p/venv.log" 2>&1; then
    # PyTorch may live where a virtual environment does not look (a user site), so the checks
    # run the interpreter that has it, on the copy pip installed.
    site=$("$p/venv/bin/python" -c 'import gpuprio, os; print(os.path.dirname(os.path.dirname(gpuprio.__file__)))')
    export PYTHONPATH=$site
    pass "python: pip install --no-index ./python into a fresh virtual environment ($site)"
else
    fail "python: venv or pip install failed (see python/venv.log); going on from the source tree"
    export PYTHONPATH=$root/python
fi
# py_check MODE [ENV...]: torch_package.py MODE, in the environment ENV, passes.
py_check() {
    label=$1
    shift
    env "$@" "$py" "$here/torch_package.py" "$label" > "$p/$label.log" 2>&1
    rc=$?
    if [ $rc = 0 ]; then
        pass "python ($label): $(grep -c '^ok:' "$p/$label.log") checks"
    else
        fail "python ($label): exit $rc: $(grep '^FAIL' "$p/$label.log" | head -n 3 | tr '\n' ' ') (see python/$label.log)"
    fi
}
py_check api LD_PRELOAD="$shim"
py_check not-loaded
gp=$(find "$out/build" -name gpuprio -type f -perm -u+x | head -n 1)
if [ -z "$gp" ]; then
    fail "metrics: the gpuprio command was not built"
else
    rm -f "$p/stop" "$p/ready"
    LD_PRELOAD="$shim" "$py" "$here/torch_package.py" serve "$p/stop" "$p/ready" > "$p/serve.log" 2>&1 &
    sp=$!
    i=0
    while [ ! -e "$p/ready" ] && kill -0 $sp 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    "$gp" metrics --once > "$p/metrics.prom" 2> "$p/metrics.err"
    mrc=$?
    touch "$p/stop"
    wait $sp
    src=$?
    read -r spid _ < "$p/ready" 2>/dev/null || spid=none
    hi=$(grep -c "^gpuprio_queue_priority{.*pid=\"$spid\".*} 10$" "$p/metrics.prom")
    lo=$(grep -c "^gpuprio_queue_priority{.*pid=\"$spid\".*} -10$" "$p/metrics.prom")
    if [ $mrc = 0 ] && [ $src = 0 ] && [ "$hi" -ge 1 ] && [ "$lo" -ge 1 ]; then
        pass "metrics: PyTorch's high and low streams (pid $spid) with their priorities"
    else
        fail "metrics: status $mrc, serve $src, high rows $hi, low rows $lo (see python/metrics.prom, serve.log)"
    fi
fi

fi # python

# ---- 6. a stopped high-priority process ----
# The high one runs bursts back to back, so the low one is held all the time; stopped (SIGSTOP)
# for 2 s, it must hold the low one only until GPUPRIO_WATCHDOG_MS (300 ms) and its listener's
# look: the low one's matmuls run again within 300 + 400 ms of the stop. Both end normally (the
# low one last, so it removes the board): nothing is left in /dev/shm.
if want stop; then
s6=$out/stop
mkdir -p "$s6"
rm -f "$s6/low.ready" "$s6/low.stop" "$s6/high.ready" "$s6/high.stop" "$s6/low.ends" # a rerun's
# exec: $! is then the Python process itself, which SIGSTOP must reach.
run6() { LD_PRELOAD="$shim" GPUPRIO_WATCHDOG_MS=300 GPUPRIO_LOG=info exec "$python" "$here/stop_check.py" "$@"; }
GPUPRIO_PRIORITY=low run6 low "$s6/low.ready" "$s6/low.stop" "$s6/low.ends" > "$s6/low.log" 2>&1 &
lpid=$!
wait_file "$s6/low.ready"
GPUPRIO_PRIORITY=high run6 high "$s6/high.ready" "$s6/high.stop" > "$s6/high.log" 2>&1 &
hpid=$!
wait_file "$s6/high.ready"
sleep 1
stopped=$(date +%s.%N)
kill -STOP $hpid
sleep 2
continued=$(date +%s.%N)
kill -CONT $hpid
sleep 0.5
touch "$s6/high.stop"
wait $hpid
hrc=$?
touch "$s6/low.stop"
wait $lpid
lrc=$?
verdict=$("$python" "$here/stop_check.py" judge "$s6/low.ends" "$stopped" "$continued" 300 2>&1)
jrc=$?
if [ $lrc = 0 ] && [ $hrc = 0 ] && [ $jrc = 0 ] &&
    grep -q 'holds nobody back until it moves again' "$s6/low.log"; then
    pass "stopped: high stopped 2 s, watchdog 300 ms: $verdict"
else
    fail "stopped: low status $lrc, high status $hrc: $verdict (see stop/*.log)"
fi
left=$(ls /dev/shm | grep '^gpuprio-')
[ -z "$left" ] || fail "boards left in /dev/shm after the last process: $left"
fi # stop

# ---- 7. under MPS ----
# tests/gpu/mps_pass.sh under an MPS control daemon of its own (scripts/with-mps.sh), which must
# be gone afterwards. No GPU setting is changed.
m=$out/mps
mkdir -p "$m"
if ! want mps; then
    :
elif ! command -v nvidia-cuda-mps-control > /dev/null 2>&1; then
    fail "mps: nvidia-cuda-mps-control is not installed"
else
    MPS_KEEP_LOG=$m "$root/scripts/with-mps.sh" sh "$here/mps_pass.sh" "$m" "$shim" "$out/bin" \
        "$python" > "$m/pass.log" 2>&1
    mrc=$?
    cat "$m/summary.txt" >> "$out/summary.txt" 2> /dev/null
    # grep -c prints 0 (and fails) when there is none, nothing when the file is missing.
    nfail=$(grep -c '^FAIL' "$m/summary.txt" 2> /dev/null)
    failed=$((failed + ${nfail:-1}))
    [ $mrc = 0 ] || fail "mps: with-mps.sh exits $mrc (see mps/pass.log)"
    if pgrep -f '^nvidia-cuda-mps-(control|server)' > /dev/null 2>&1; then
        fail "mps: an MPS daemon is left: $(pgrep -af '^nvidia-cuda-mps' | tr '\n' ' ')"
    else
        pass "mps: the daemon stopped afterwards"
    fi
fi

# ---- 8. gated next to a bursting process ----
# The in_order port only: the other two look at streams "after N ms", which holding a queue may
# legitimately change (as in the HIP suite's gate.conformance).
g=$out/gated
mkdir -p "$g"
# start_high DIR / stop_high: the bursting high-priority neighbour (stop_check.py high, bursts of
# matmuls 20 ms apart) in DIR; stop_high's status is its exit status.
start_high() {
    hdir=$1
    rm -f "$hdir/high.ready" "$hdir/high.stop"
    GPUPRIO_PRIORITY=high LD_PRELOAD="$shim" "$python" "$here/stop_check.py" high "$hdir/high.ready" \
        "$hdir/high.stop" 20 > "$hdir/high.log" 2>&1 &
    hpid=$!
    wait_file "$hdir/high.ready"
}
stop_high() {
    touch "$hdir/high.stop"
    wait $hpid
}
if want gated; then
start_high "$g"
compare in_order gated GPUPRIO_LOG=info GPUPRIO_PRIORITY=low
suspended=none
if [ "$(cat "$t/native.rc" 2> /dev/null)" = 0 ]; then
    torch_variant gated GPUPRIO_LOG=info GPUPRIO_PRIORITY=low
    suspended=$(sed -n 's/^total suspensions //p' "$t/gated.stats" 2> /dev/null)
fi
stop_high
hrc=$?
if [ $hrc = 0 ] && grep -q 'Level 2' "$t/gated.log" && [ "${suspended:-0}" -gt 0 ] 2> /dev/null; then
    pass "gated: PyTorch's queues at Level 2, suspended $suspended times by the bursting process"
else
    fail "gated: high status $hrc, PyTorch's queues suspended ${suspended:-?} times (see gated/high.log, torch/gated.log)"
fi
fi # gated

# ---- 9. device resets and context destruction (issue 37) ----
# ctx_reset.c's three modes, each without the shim, under it, and under it at low priority next
# to the bursting neighbour (Level 2 gates closed in every burst): stdout identical, exit 0
# (139 was a SIGSEGV), no gate refused; at Level 2 in the gated runs. 300 s at most a run.
r=$out/reset
if want reset; then
    mkdir -p "$r"
    ptx=$out/bin/ctx_kernels.ptx rbin=$out/bin/ctx_reset
    if ! "$nvcc" -ptx -o "$ptx" "$here/ctx_kernels.cu" > "$r/build.log" 2>&1 ||
        ! $cc -O2 -std=c11 -I"$cuda_inc" -o "$rbin" "$here/ctx_reset.c" \
            -L/usr/local/cuda/lib64/stubs -lcuda >> "$r/build.log" 2>&1; then
        fail "reset: ctx_reset does not build (see reset/build.log)"
    else
        # reset_case MODE LABEL [ENV...]: ctx_reset MODE under the shim (with ENV) against its
        # run without it.
        reset_case() {
            mode=$1 label=$2
            shift 2
            base=$r/$mode
            if [ ! -e "$base.native.rc" ]; then
                timeout 300 "$rbin" "$mode" "$ptx" > "$base.native.out" 2> "$base.native.err"
                echo $? > "$base.native.rc"
            fi
            env "$@" LD_PRELOAD="$shim" timeout 300 "$rbin" "$mode" "$ptx" \
                > "$base.$label.out" 2> "$base.$label.err"
            echo $? > "$base.$label.rc"
            why=
            cmp -s "$base.native.out" "$base.$label.out" || why="$why stdout differs;"
            cmp -s "$base.native.rc" "$base.$label.rc" || why="$why exit $(cat "$base.native.rc") vs $(cat "$base.$label.rc");"
            [ "$(cat "$base.native.rc")" = 0 ] || why="$why native exit $(cat "$base.native.rc");"
            ! grep -q 'refused a gate' "$base.$label.err" || why="$why a gate was refused;"
            [ "$label" != gated ] || grep -q 'Level 2' "$base.$label.err" || why="$why not at Level 2;"
            if [ -z "$why" ]; then
                pass "reset ($mode, $label): identical, exit 0"
            else
                diff -u "$base.native.out" "$base.$label.out" > "$base.$label.diff"
                fail "reset ($mode, $label):$why see reset/$mode.$label.*"
            fi
        }
        for mode in reset destroy release; do
            reset_case $mode shim GPUPRIO_LOG=info
        done
        start_high "$r"
        for mode in reset destroy release; do
            reset_case $mode gated GPUPRIO_LOG=info GPUPRIO_PRIORITY=low
        done
        stop_high || fail "reset: the bursting neighbour exits $? (see reset/high.log)"
    fi
fi

# ---- 10. PyTorch threads that come and go, at low priority next to the bursting process ----
# torch_threads.py trains 200 steps, each step's forward in a thread of its own that then ends
# (its queue of the null stream retired, often with work queued behind a closed gate; autograd's
# backward runs on PyTorch's persistent device thread). Under the shim alone, then at low priority
# next to the bursting neighbour of 8: bursting throughout; killed (SIGKILL) once the low one
# passed step 50, which left the retired queues' gates closed by a process that is gone (issue
# 37's hang); stopped (SIGSTOP) there and kept stopped until the low one ends, then continued.
# Each: losses and weights bit-identical to the native run, exit 0; the neighbour's cases at
# Level 2 with a suspension seen (the stats of the queues still there, or the log's suspension
# lines, as the step threads' queues are gone by the end); killed and stopped within the native
# run's time plus 15 s (before the kill or stop the bursts slow it; afterwards nothing may).
tt=$out/torch_threads
if want torch_threads; then
    mkdir -p "$tt"
    steps=200 mark=50
    now() { date +%s.%N; }
    t0=$(now)
    timeout 600 "$python" "$here/torch_threads.py" "$tt/native.bin" --steps $steps > "$tt/native.log" 2>&1
    nrc=$?
    native_s=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
    bound_s=$(awk -v n="$native_s" 'BEGIN { printf "%.1f", n + 15 }')
    # threads_case LABEL HOW [ENV...]: HOW is none (no neighbour), burst (the neighbour bursts
    # throughout), kill or stop (the neighbour, once the low one touched its mark).
    threads_case() {
        label=$1 how=$2
        shift 2
        rm -f "$tt/$label.mark"
        [ "$how" = none ] || start_high "$tt"
        begin=$(now)
        env "$@" LD_PRELOAD="$shim" timeout 600 "$python" "$here/torch_threads.py" "$tt/$label.bin" \
            --steps $steps --mark $mark "$tt/$label.mark" --expect-gpuprio "$tt/$label.stats" \
            > "$tt/$label.log" 2>&1 &
        lpid=$!
        if [ "$how" = kill ] || [ "$how" = stop ]; then
            while [ ! -e "$tt/$label.mark" ] && kill -0 $lpid 2> /dev/null; do sleep 0.05; done
            sig=KILL
            [ "$how" = kill ] || sig=STOP
            [ ! -e "$tt/$label.mark" ] || kill -$sig $hpid
        fi
        wait $lpid
        rc=$?
        took=$(awk -v a="$begin" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
        why=
        if [ "$how" != none ]; then
            [ "$how" != stop ] || kill -CONT $hpid
            stop_high
            hrc=$?
            # Killed, its status is 137; otherwise it ends normally once told to.
            [ "$how" = kill ] && [ $hrc = 137 ] && hrc=0
            [ $hrc = 0 ] || why="$why the neighbour exits $hrc;"
            [ "$how" = burst ] || [ -e "$tt/$label.mark" ] || why="$why never reached step $mark;"
            grep -q 'Level 2' "$tt/$label.log" || why="$why not at Level 2;"
            susp=$(sed -n 's/^total suspensions //p' "$tt/$label.stats" 2> /dev/null)
            lines=$(grep -c 'suspended queue' "$tt/$label.log")
            [ "${susp:-0}" -gt 0 ] 2> /dev/null || [ "$lines" -gt 0 ] ||
                why="$why no suspension seen (stats ${susp:-none}, log lines $lines);"
        fi
        [ $nrc = 0 ] || why="$why native exit $nrc;"
        [ $rc = 0 ] || why="$why exit $rc$([ $rc = 124 ] && echo ' (timed out: a hang)');"
        cmp -s "$tt/native.bin" "$tt/$label.bin" || why="$why outputs DIFFER;"
        if [ "$how" = kill ] || [ "$how" = stop ]; then
            awk -v t="$took" -v b="$bound_s" 'BEGIN { exit !(t <= b) }' ||
                why="$why took $took s, over the native $native_s s + 15 s;"
        fi
        if [ -z "$why" ]; then
            pass "torch_threads ($label): losses and weights bit-identical, exit 0, $took s (native $native_s s)$([ "$how" = none ] || echo ", Level 2, suspended (stats ${susp:-0}, log $lines)")"
        else
            fail "torch_threads ($label):$why see torch_threads/$label.*"
        fi
    }
    threads_case shim none GPUPRIO_LOG=info
    threads_case gated burst GPUPRIO_LOG=info GPUPRIO_PRIORITY=low
    threads_case killed kill GPUPRIO_LOG=info GPUPRIO_PRIORITY=low
    threads_case stopped stop GPUPRIO_LOG=info GPUPRIO_PRIORITY=low
fi

# ---- 11-14. GEMM slices and graph gates: PyTorch at low priority next to the bursting process ----
# slice_check NAME SCRIPT ENTRY WHAT [ALSO]: SCRIPT OUT without the shim (twice with NATIVE_TWICE=1:
# the two must agree for the comparison to mean anything), then under it at low priority next to
# the bursting process of 8 with CHECK_ENV (default GPUPRIO_GEMM_SLICE_US=1): OUT bit-identical,
# exit 0, and the library says "ENTRY: N VERB" with N > 0 (CHECK_VERB, default sliced); what it
# says of entry point ALSO is reported beside it.
slice_check() {
    sd=$out/$1
    mkdir -p "$sd"
    "$python" "$here/$2" "$sd/native.bin" > "$sd/native.log" 2>&1
    nrc=$?
    same=yes
    if [ -n "${NATIVE_TWICE:-}" ]; then
        "$python" "$here/$2" "$sd/native2.bin" > "$sd/native2.log" 2>&1
        cmp -s "$sd/native.bin" "$sd/native2.bin" || same=no
    fi
    start_high "$sd"
    env GPUPRIO_LOG=info GPUPRIO_PRIORITY=low ${CHECK_ENV:-GPUPRIO_GEMM_SLICE_US=1} \
        LD_PRELOAD="$shim" "$python" "$here/$2" "$sd/sliced.bin" > "$sd/sliced.log" 2>&1
    src=$?
    stop_high
    hrc=$?
    verb=${CHECK_VERB:-sliced}
    said=$(grep -o "$3: [0-9]* $verb.*" "$sd/sliced.log" | tail -1)
    sliced=$(echo "$said" | sed -n "s/^$3: \([0-9]*\) $verb.*/\1/p")
    also= # what the library says of entry point $5, reported beside $3's (not required)
    if [ -n "${5:-}" ]; then
        also=$(grep -o "$5: [0-9]* sliced.*" "$sd/sliced.log" | tail -1)
        also="; ${also:-$5: nothing said}"
    fi
    if [ $nrc = 0 ] && [ $src = 0 ] && [ $hrc = 0 ] && [ $same = yes ] &&
        cmp -s "$sd/native.bin" "$sd/sliced.bin" && [ "${sliced:-0}" -gt 0 ]; then
        pass "$1: $4 bit-identical with $3 $verb ($said$also)"
    else
        fail "$1: native exit $nrc$([ $same = yes ] || echo ', the two native runs DIFFER'), sliced exit $src, high exit $hrc, outputs $(cmp -s "$sd/native.bin" "$sd/sliced.bin" && echo identical || echo DIFFER), said: ${said:-nothing}$also (see $1/*.log)"
    fi
}
# 11. Large linear layers with a bias, which PyTorch issues to cublasLtMatmul.
want gemm && slice_check gemm gemm_identical.py cublasLtMatmul outputs
# 12. The LM head's three products and others at PyTorch's default backend: cublasGemmEx.
want gemmex &&
    slice_check gemmex gemmex_identical.py cublasGemmEx outputs cublasGemmStridedBatchedEx
# 13. 20 training steps of a language model with the LM head: losses and weights.
want lm && NATIVE_TWICE=1 slice_check lm lm_identical.py cublasGemmEx "losses and weights"

# 14. PyTorch's CUDA graphs, replayed, with gates inside their launches.
want graphgate && CHECK_ENV=GPUPRIO_GRAPH_GATE_US=50 CHECK_VERB=gated \
    slice_check graphgate graph_gates.py "graph launches" outputs cublasGemmEx

note "$failed failed, $(($(date +%s) - start)) s"
exit $failed
