#!/bin/sh
# override.sh PROGRAM SHIM RUNTIME RUNTIME_FILE: GPUPRIO_HIP_LIBRARY under the shim, with
# PROGRAM = override.c, RUNTIME = the path under which PROGRAM maps the simulator it links
# (libamdhip64.so.6), RUNTIME_FILE = the same file under its real name (libamdhip64.so.6.3.0).
#   - set to the linked runtime, by either name: bound to it, silent, exit 0;
#   - empty: as if unset (bound to the mapped copy), silent;
#   - a missing file: exactly one error line, naming GPUPRIO_HIP_LIBRARY and the path; calls
#     pass through with right results; the program's own exit status (3);
#   - the shim itself: rejected with exactly one error line naming it; pass-through; status 4.
. "$(dirname "$0")/lib.sh"
prog=$1 shim=$2 runtime=$3 runtime_file=$4

run_case "override is the linked runtime" \
    env GPUPRIO_HIP_LIBRARY="$runtime" LD_PRELOAD="$shim" "$prog" bound "$runtime"
expect_status 0
expect_gpuprio_lines 0
expect_stderr_only_gpuprio

run_case "override is the linked runtime by its real file name" \
    env GPUPRIO_HIP_LIBRARY="$runtime_file" LD_PRELOAD="$shim" "$prog" bound "$runtime_file"
expect_status 0
expect_gpuprio_lines 0
expect_stderr_only_gpuprio

run_case "empty override means unset" \
    env GPUPRIO_HIP_LIBRARY= LD_PRELOAD="$shim" "$prog" bound "$runtime"
expect_status 0
expect_gpuprio_lines 0
expect_stderr_only_gpuprio

missing=/nonexistent/libamdhip64.so.6
run_case "override is a missing file" \
    env GPUPRIO_HIP_LIBRARY=$missing LD_PRELOAD="$shim" "$prog" passthrough 3
expect_status 3
expect_gpuprio_lines 1
expect_gpuprio_says "gpuprio: error: GPUPRIO_HIP_LIBRARY=$missing"
expect_stderr_only_gpuprio

run_case "override is the shim itself" \
    env GPUPRIO_HIP_LIBRARY="$shim" LD_PRELOAD="$shim" "$prog" passthrough 4
expect_status 4
expect_gpuprio_lines 1
expect_gpuprio_says "gpuprio: error: GPUPRIO_HIP_LIBRARY=$shim"
expect_stderr_only_gpuprio

finish
