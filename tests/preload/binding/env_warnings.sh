#!/bin/sh
# env_warnings.sh PROGRAM SHIM RUNTIME: bad GPUPRIO_* values in the environment, with PROGRAM =
# override.c and RUNTIME the runtime it links (as override.sh):
#   - a process that makes no GPU call (PROGRAM without arguments: its usage, status 2) says
#     nothing of them, as a script's sh, cat or timeout under `gpuprio run` must not;
#   - a process that does says each once, at its first GPU call, and runs as with the defaults.
. "$(dirname "$0")/lib.sh"
prog=$1 shim=$2 runtime=$3

run_case "no GPU call: nothing said" \
    env GPUPRIO_WINDOW=0 GPUPRIO_POLICY=bogus LD_PRELOAD="$shim" "$prog"
expect_status 2
expect_gpuprio_lines 0
expect_stderr_only_gpuprio

run_case "GPU calls: each bad value said once" \
    env GPUPRIO_WINDOW=0 GPUPRIO_POLICY=bogus GPUPRIO_HIP_LIBRARY="$runtime" LD_PRELOAD="$shim" \
    "$prog" bound "$runtime"
expect_status 0
expect_gpuprio_lines 2
expect_gpuprio_says "gpuprio: warn: GPUPRIO_WINDOW='0' is not a whole number of commands"
expect_gpuprio_says "gpuprio: warn: GPUPRIO_POLICY='bogus' is not one of hpf, passthrough, share"
expect_stderr_only_gpuprio
finish
