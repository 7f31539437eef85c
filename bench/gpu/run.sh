#!/bin/sh
# bench/gpu/run.sh OUTDIR [quick]: the real-GPU benchmarks of gpuprio's CUDA backend, in one go,
# side by side, on an NVIDIA GPU with PyTorch, transformers and torchvision installed (no
# network needed). Builds gpuprio (Release), then:
#   1. launch overhead: empty-kernel launches per second and launch + synchronize round trips,
#      1 and 4 threads, natively and under LD_PRELOAD=libgpuprio-cuda.so: idle, tracked (an
#      idle lower-priority stream exists) and throttled (an idle higher-priority stream exists);
#   2. priority under co-location (bench/gpu/colocation.py): a BERT-base client at 40 requests/s
#      next to ResNet-50 fp16 batch-256 inference, in two processes (CUDA-graph and eager
#      client) and in one process (two threads, graph client): standalone, native, native with
#      stream priorities, and gpuprio with each setting of GPUPRIO_ROWS.
# Prints both tables last; logs and per-row JSON go under OUTDIR, and OUTDIR/colocation.txt is
# rewritten after every row (a run cut short keeps its rows). A row takes 25-50 s, mostly model
# builds: keep a call to about 10 rows where commands have a time limit. "quick" runs one row
# of each.
# GPUPRIO_ROWS lists gpuprio's settings, one row each (default "W4 B250 B500 B1000"): Wn counts
# commands only (GPUPRIO_WINDOW=n GPUPRIO_WINDOW_US=0, the behaviour before the GPU-time
# budget), Bn keeps n microseconds of GPU time in flight (GPUPRIO_WINDOW_US=n, the default
# command ceiling): both Level 1 (GPUPRIO_LEVEL=1); Gn is Level 2 with a gate every n
# microseconds of predicted GPU time (GPUPRIO_GATE_US=n); Rn reserves n% of the device for the
# client (GPUPRIO_CU_RESERVE=n%: under MPS the load, below normal, may use the rest; on AMD,
# CU masks), at the default level; Sn gives the load a minimum share of n% of the device's time
# under GPUPRIO_POLICY=share (docs/configuration.md, "Shares"), at the default level; D is the
# library's defaults (Level 2, its gate bound unset: 100 us, 300 us under MPS); THREAD_ROWS
# does the same for the one-process rows (default:
# GPUPRIO_ROWS). Under MPS (scripts/with-mps.sh bench/gpu/run.sh ..., docs/mps.md) every row's
# processes are MPS clients.
# QUIET=1 adds, for each two-process row, one with the client at 1 request/s: what gpuprio's
# setting costs the load when almost nothing preempts it (read its "vs alone"; a native one,
# run even with NO_NATIVE=1, is the reference).
# REPEAT=n runs every co-location row n times (rows .2, .3... after the first); CALL_REPEAT=n
# runs the rows that measure the client's call (below) n times in turn.
# To fit a time limit, parts can be left out: MODES="graph" (or "eager") limits the two-process
# client modes, NO_LAUNCH=1 skips part 1, NO_2PROC=1 the two-process rows, NO_THREADS=1 the
# one-process rows, NO_NATIVE=1 the native rows (standalone rows always run), NO_STREAMPRIO=1 the
# rows with stream priorities (native, and gpuprio's one-process rows on streams created with
# them), NO_CALL=1 the rows that measure what scheduling costs the client's submitting call
# (alone under gpuprio, and next to an idle low-priority process, with gpuprio and without).
# LOAD=train makes the load a ResNet-50 training step instead of inference, LOAD=ttrain a
# transformer training step with long kernels (BERT-large's shape, bf16, 32 x 512 tokens),
# LOAD=lm language-model training with a head over a 50,257-token vocabulary (GPT-2 medium's
# shape, bf16, 8 x 512 tokens: three GEMMs of 3-4 ms a step),
# LOAD=lmhead only that load's head (its three GEMMs, nothing else: the floor they set),
# LOAD=decode an inference server's captured decode loop (one CUDA graph of 8 forward passes of
# GPT-2 medium's shape, bf16, 8 x 128 tokens, replayed: short kernels, but one command per graph),
# LOAD=idle a process whose stream runs nothing, LOAD=spin a synthetic load of
# SPIN_US-microsecond kernels (default 200) whose trace breaks the preemption latency down
# (table.py). The spin load's settings:
#   SPIN_GAP_US=G   one kernel at a time, G microseconds apart (each waited for before the gap,
#                   unless SPIN_GAP_NOSYNC=1)
#   SPIN_FILL=1     blocks that fill every SM, so that a block is the whole kernel
#   SPIN_BLOCKS=n   n blocks per kernel instead of one per SM
#   SPIN_ONCE=1     one kernel in the load's warm-up and nothing after it (SPIN_ONCE_KERNELS=n: n
#                   kernels; SPIN_ONCE_EVENT=1: and an event recorded after them, kept;
#                   SPIN_ONCE_AFTER_S=s: one more s seconds into the client's window)
# LOAD_TRACE=1 records a real load's kernels (torch.profiler) on the GPU's clock, as the spin
# load's trace, in the two-process rows and the load alone (whose rate, the rows' "vs alone", the
# profiler lowers too): table.py then breaks the preemption latency down against them and names
# the kernels the slowest requests waited for.
# LOAD_QUIET_AFTER_S=s makes any load submit nothing more s seconds into the client's window (its
# process stays), LOAD_EXIT_AFTER_S=s end its process then. THIRD=infer|train|spin adds a third
# process to every two-process row: a load of that kind at normal priority (between the client
# and the load); the table's load columns stay the (low) load's. ROW_SECONDS=s makes each row's
# window s seconds long (default 6). CLIENT_ARGS="--client-batch n --client-seq n --rate r" sizes
# the client's requests (default 8 sequences of 128 tokens, 40 a second).
set -u
out=${1:?usage: run.sh OUTDIR [quick]}
quick=${2:-}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
build=build-gpu
# Only the CUDA library is built (a machine with CUDA only configures without the HIP parts).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target gpuprio-cuda ${GATE_WATCH:+gate_watch} \
        >>"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
# GATE_WATCH=1 runs bench/gpu/gate_watch beside each two-process row (one core busy-polling the
# boards): table.py then shows when, after a request's submission, its queue turned active and
# the load's gate closed.
# SHIM=path runs gpuprio's rows with another build of the library (an earlier commit's, for a
# before/after pair in one call). ROW_B="VAR=value ..." runs each two-process gpuprio row again
# right after with those settings added to both processes' environments (rows named ...-b), so
# that the host's drift falls on both alike: ROW_B=LD_PRELOAD=path compares two builds.
# ROW_B_SIDE=load (or client) adds ROW_B's settings to that process only.
shim=${SHIM:-$(find "$(pwd)/$build" -name libgpuprio-cuda.so -type f | head -n 1)}
py=${PYTHON:-python3}
gcc -O2 -std=c11 -D_GNU_SOURCE -I/usr/local/cuda/include bench/gpu/launch_rate.c \
    -o "$build/launch_rate" -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lcuda -lpthread ||
    exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1

# ---- 1. launch overhead ----
if [ -z "${NO_LAUNCH:-}" ]; then
best() { # MODE THREADS PRELOAD CALLS [low|high]: the best of 3 (us per call per thread)
    for i in 1 2 3; do
        LD_PRELOAD=$3 "$build/launch_rate" "$1" "$2" "$4" ${5:-} 2>>"$out/launch.log" |
            sed 's/.*, \([0-9.]*\) us per call.*/\1/'
    done | sort -n | head -n 1
}
{
    printf '%-10s %-8s %10s %10s %10s %10s\n' call threads native idle tracked throttled
    for mode in rate roundtrip; do
        n=200000
        [ $mode = roundtrip ] && n=20000
        [ -n "$quick" ] && n=$((n / 10))
        for t in 1 4; do
            printf '%-10s %-8s %10s %10s %10s %10s\n' $mode $t "$(best $mode $t "" $n)" \
                "$(best $mode $t "$shim" $n)" "$(best $mode $t "$shim" $n low)" \
                "$(best $mode $t "$shim" $n high)"
        done
    done
} >"$out/launch.txt"
fi

# ---- 2. co-location ----
rows=$out/coloc
rm -rf "$rows"
mkdir -p "$rows"
secs=${ROW_SECONDS:-6}
[ -n "$quick" ] && secs=3
# The environment of a gpuprio setting (see GPUPRIO_ROWS above).
setting_env() {
    case $1 in
    W*) echo "GPUPRIO_LEVEL=1 GPUPRIO_WINDOW=${1#W} GPUPRIO_WINDOW_US=0" ;;
    B*) echo "GPUPRIO_LEVEL=1 GPUPRIO_WINDOW_US=${1#B}" ;;
    G*) echo "GPUPRIO_LEVEL=2 GPUPRIO_GATE_US=${1#G}" ;;
    R*) echo "GPUPRIO_CU_RESERVE=${1#R}%" ;;
    S*) echo "GPUPRIO_POLICY=share GPUPRIO_SHARE=${1#S}" ;;
    D) echo "" ;;
    *) echo "bench/gpu/run.sh: unknown setting '$1' in GPUPRIO_ROWS (Wn, Bn, Gn, Rn, Sn or D)" >&2; exit 1 ;;
    esac
}
repeats() { # NAME: the row's name, then the names of its repeats
    echo "$1"
    r=2
    while [ $r -le "${REPEAT:-1}" ]; do
        echo "$1.$r"
        r=$((r + 1))
    done
}
row() { # NAME ENV-FOR-CLIENT ENV-FOR-LOAD CLIENT-ARGS LOAD-ARGS [b]: two processes; with b,
    # each repeat again with ROW_B's settings added (if any)
    for name in $(repeats "$1"); do
        one_row "$name" "$2" "$3" "$4" "$5"
        [ "${6:-}" != b ] || [ -z "${ROW_B:-}" ] || case ${ROW_B_SIDE:-both} in
            load) one_row "$name-b" "$2" "$3 $ROW_B" "$4" "$5" ;;
            client) one_row "$name-b" "$2 $ROW_B" "$3" "$4" "$5" ;;
            *) one_row "$name-b" "$2 $ROW_B" "$3 $ROW_B" "$4" "$5" ;;
            esac
    done
}
until_ready() { # FILE PID: until the load that is PID writes its ready FILE, or is gone
    while [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null; do sleep 0.2; done
}
one_row() {
    d=$rows/$1
    mkdir -p "$d"
    env $3 $py bench/gpu/colocation.py load $5 ${LOAD_TRACE:+--trace-kernels} --stop-file "$d/stop" \
        --ready-file "$d/ready" \
        --window-file "$d/window" --out "$d/load.json" >"$d/load.log" 2>&1 &
    lp=$!
    if [ -n "${THIRD:-}" ]; then
        # The third process: a load of kind THIRD between the two (normal priority where the
        # load is low); its result is load2.json. It starts once the load is warmed up: under
        # strict priority a low load never gets to warm up next to a busier one (on the H100 the
        # row then waited for it for good, the client waiting for the load's ready file).
        until_ready "$d/ready" $lp
        env $(echo "$3" | sed 's/GPUPRIO_PRIORITY=low/GPUPRIO_PRIORITY=normal/') $py \
            bench/gpu/colocation.py load --kind "$THIRD" --stop-file "$d/stop" \
            --ready-file "$d/ready2" --out "$d/load2.json" >"$d/load2.log" 2>&1 &
        tp=$!
        until_ready "$d/ready2" $tp
    fi
    if [ -n "${GATE_WATCH:-}" ]; then
        # The boards' queues and gates, from the load's warm-up to the row's end (gates.txt).
        (
            until_ready "$d/ready" $lp
            exec "$build/bench/gpu/gate_watch" "$d/stop" "$d/gates.txt"
        ) &
        wp=$!
    fi
    # The client builds and warms up while the load does, and starts its window once the load
    # is ready (it gives up if the load died first).
    env $2 $py bench/gpu/colocation.py client ${CLIENT_ARGS:-} $4 --seconds $secs --out "$d/client.json" \
        --wait-file "$d/ready" --wait-pid $lp --window-file "$d/window" >"$d/client.log" 2>&1
    touch "$d/stop"
    wait $lp
    [ -z "${GATE_WATCH:-}" ] || wait $wp
    [ -z "${THIRD:-}" ] || wait $tp
    failed "$d" client.json client.log
    failed "$d" load.json load.log
    [ -z "${THIRD:-}" ] || failed "$d" load2.json load2.log
    table
}
failed() { # DIR RESULT LOG: a side that wrote no result shows the end of its log
    [ -f "$1/$2" ] || { echo "== $(basename "$1"): no $2; the end of $3:"; tail -n 15 "$1/$3"; }
}
# The table so far, after every row: a run cut short still leaves it.
table() {
    $py bench/gpu/table.py "$rows" >"$out/colocation.txt" 2>&1
}
alone() { # NAME ROLE ARGS... (ALONE_ENV: its environment)
    d=$rows/$1
    role=$2
    shift 2
    extra=
    [ "$role" = client ] && extra=${CLIENT_ARGS:-}
    mkdir -p "$d"
    env ${ALONE_ENV:-X=1} $py bench/gpu/colocation.py $role $extra "$@" --out "$d/$role.json" \
        >"$d/log" 2>&1
    table
}
threads_row() { # NAME ENV ARGS...
    name=$1
    env_=$2
    shift 2
    for n in $(repeats "$name"); do
        d=$rows/$n
        mkdir -p "$d"
        env $env_ $py bench/gpu/colocation.py both ${CLIENT_ARGS:-} "$@" --seconds $secs --out "$d/both.json" \
            >"$d/log" 2>&1
        table
    done
}
P="LD_PRELOAD=$shim"
load=${LOAD:-infer}
load_args="--kind $load"
load_opt() { # VARIABLE OPTION [flag]: the load gets OPTION and the variable's value (with flag,
    # OPTION alone) where the variable is set
    eval "v=\${$1:-}"
    [ -z "$v" ] || load_args="$load_args $2$([ "${3:-}" = flag ] || echo " $v")"
}
if [ "$load" = spin ]; then
    load_args="$load_args --spin-us ${SPIN_US:-200} --spin-gap-us ${SPIN_GAP_US:-0}"
    load_opt SPIN_GAP_NOSYNC --spin-gap-nosync flag
    load_opt SPIN_FILL --spin-fill flag
    load_opt SPIN_BLOCKS --spin-blocks
    load_opt SPIN_ONCE --spin-once flag
    load_opt SPIN_ONCE_KERNELS --spin-once-kernels
    load_opt SPIN_ONCE_EVENT --spin-once-event flag
    load_opt SPIN_ONCE_AFTER_S --spin-once-after
fi
load_opt LOAD_QUIET_AFTER_S --quiet-after
load_opt LOAD_EXIT_AFTER_S --exit-after
modes=${MODES:-graph eager}
np=2proc
[ -z "${THIRD:-}" ] || np=3proc-$THIRD
settings=${GPUPRIO_ROWS:-W4 B250 B500 B1000}
[ -n "$quick" ] && modes=graph settings=B500
for s in $settings ${THREAD_ROWS:-}; do setting_env "$s" >/dev/null || exit 1; done
alone 00-alone-load load $load_args ${LOAD_TRACE:+--trace-kernels} --seconds $secs
for m in graph $modes; do
    [ -d "$rows/00-alone-client-$m" ] || alone "00-alone-client-$m" client --mode $m --seconds $secs
done
if [ -z "${NO_CALL:-}" ]; then
    # What being scheduled costs the client without GPU contention: alone under gpuprio, and
    # next to a process whose only stream runs nothing (table.py's "call" column). With
    # CALL_REPEAT=n the three (alone natively too) run n times in turn, so that the host's drift
    # between rows falls on each of them alike.
    r=1
    while [ $r -le "${CALL_REPEAT:-1}" ]; do
        sfx=
        [ $r -eq 1 ] || sfx=.$r
        [ $r -eq 1 ] || alone "00-alone-client-graph$sfx" client --mode graph --seconds $secs
        ALONE_ENV="$P GPUPRIO_PRIORITY=high" alone "01-alone-client-graph-gpuprio$sfx" client \
            --mode graph --seconds $secs
        for name in $(repeats "02-2proc-graph-gpuprio-idle$sfx"); do
            one_row "$name" "$P GPUPRIO_PRIORITY=high" "$P GPUPRIO_PRIORITY=low" "--mode graph" \
                "--kind idle"
        done
        # The same without gpuprio: what the idle process alone costs the client (under MPS,
        # another client of the daemon).
        [ -n "${NO_NATIVE:-}" ] || one_row "02-2proc-graph-native-idle$sfx" "X=1" "X=1" \
            "--mode graph" "--kind idle"
        r=$((r + 1))
    done
fi
[ -z "${NO_2PROC:-}" ] || modes=
for m in $modes; do
    if [ -z "${NO_NATIVE:-}" ]; then
        row "10-$np-$m-native" "X=1" "X=1" "--mode $m" "$load_args"
        [ -n "${NO_STREAMPRIO:-}" ] || row "11-$np-$m-streamprio" "X=1" "X=1" "--mode $m --stream-priorities" \
            "$load_args --stream-priorities"
    fi
    for s in $settings; do
        e=$(setting_env "$s")
        row "12-$np-$m-gpuprio-$s" "$P GPUPRIO_PRIORITY=high $e" "$P GPUPRIO_PRIORITY=low $e" \
            "--mode $m" "$load_args" b
        # What the setting costs the load when almost nothing preempts it (its "vs alone").
        [ -z "${QUIET:-}" ] ||
            row "13-$np-$m-gpuprio-$s-quiet" "$P GPUPRIO_PRIORITY=high $e" \
                "$P GPUPRIO_PRIORITY=low $e" "--mode $m --rate 1" "$load_args"
    done
    [ -z "${QUIET:-}" ] ||
        row "13-$np-$m-native-quiet" "X=1" "X=1" "--mode $m --rate 1" "$load_args"
done
if [ -z "${NO_THREADS:-}" ]; then
    if [ -z "${NO_NATIVE:-}" ]; then
        threads_row "20-1proc-graph-native" "X=1" --mode graph $load_args
        [ -n "${NO_STREAMPRIO:-}" ] || threads_row "21-1proc-graph-streamprio" "X=1" --mode graph $load_args --stream-priorities
    fi
    for s in ${THREAD_ROWS:-$settings}; do
        threads_row "22-1proc-graph-gpuprio-$s" "$P $(setting_env "$s")" --mode graph \
            $load_args --gpuprio
        # The same on streams also created with the device's greatest and least priorities (an
        # application that already uses them): gpuprio still holds the load on the host, which
        # stream priorities alone do not do (design.md, "Scheduling").
        [ -n "${NO_STREAMPRIO:-}" ] ||
            threads_row "23-1proc-graph-gpuprio-prio-$s" "$P $(setting_env "$s")" \
                --mode graph $load_args --gpuprio --stream-priorities
    done
fi
table

echo "== device"
cat "$out/gpu.txt"
echo "== launch overhead (us per call per thread, best of 3)"
cat "$out/launch.txt" 2>/dev/null
echo "== co-location (BERT-base client at 40 req/s next to ResNet-50 fp16 b256, $load)"
cat "$out/colocation.txt"
