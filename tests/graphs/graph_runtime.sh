# graph_runtime.sh - sourced at the top of graph_gates.sh and graph_chaos.sh (this directory),
# with their arguments, RUNTIME CASE LIB PROG: checks them and sets runtime, case, lib and prog,
# removes gpuprio's settings (GPUPRIO_*) from the environment, and says in its one case block what
# differs between the runtimes: cuda, PROG tests/cuda/graph_gates.c over the fake driver
# (tests/cuda/fake_cuda.c) and LIB libgpuprio-cuda.so; hip, PROG tests/hipgraph/graph_gates.c over
# the simulated HIP runtime (tests/sim) and LIB libgpuprio-hip.so.
#   fake       the prefix of the fake's lines on stderr; "$fake: error" is a misuse, which fails
#              the test (fake_is names the fake in that failure);
#   prefix     how the sandbox's name starts;
#   share ID   makes the processes share a device, and so a board: FAKE_CUDA_BUS_ID (its bus id
#              "ID:NN"), or HIPSIM_SHARED, with HIPSIM_GRAPH_SAY=1 (the simulator's graph waits say
#              when they hold and open; the fake's always do);
#   handshake  set where PROG talks with its neighbour through GRAPH_ACK and GRAPH_STOP (the HIP
#              program only);
#   retargets  the call PROG counts as gpuprio's moves of its wait nodes (GRAPH_RETARGETED; the
#              HIP program only);
#   gone_env   what makes stream destruction return at once, as the real runtime's does, for
#              graph_chaos.sh's thread_exit and stream_gone (the simulator's always does).
# Also graph_sandbox WHAT: a new $tmp on /dev/shm with a board directory (GPUPRIO_BOARD_DIR), the
# device shared as $name ("$prefix-WHAT-..."), and at exit the processes in high, low, writer and
# stopper killed and all of it removed. The scripts start the neighbour with expect.sh's start_high
# and compare the runs with its same_as_native.
usage() {
    echo "usage: ${0##*/} cuda|hip CASE LIB PROG" >&2
    exit 2
}
[ $# = 4 ] || usage
runtime=$1 case=$2 lib=$3 prog=$4
. "$(dirname "$0")/../tools/expect.sh"
for v in $(env | sed -n 's/^\(GPUPRIO_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
case $runtime in
cuda)
    fake=fake_cuda fake_is="the fake driver" prefix=graph handshake= retargets=
    gone_env=FAKE_CUDA_STREAM_DESTROY_RETURNS=1
    share() { export FAKE_CUDA_BUS_ID="$1"; } ;;
hip)
    fake=hipsim fake_is="the simulator" prefix=hipgraph handshake=yes
    retargets=hipGraphExecBatchMemOpNodeSetParams gone_env=
    share() { export HIPSIM_SHARED="$1" HIPSIM_GRAPH_SAY=1; } ;;
*) usage ;;
esac

high= low= writer= stopper=
graph_sandbox() { # WHAT
    sandbox_boards "$prefix-$1"
    share "$name"
    trap graph_cleanup EXIT
    trap 'exit 1' HUP INT TERM
}
graph_cleanup() {
    sandbox_cleanup $high $low $writer $stopper
    rm -f "/dev/shm/hipsim-$(id -u)-$name-"* # a simulated device other than 0 (GRAPH_DEVICE)
}
