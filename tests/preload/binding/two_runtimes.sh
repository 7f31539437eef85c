#!/bin/sh
# two_runtimes.sh PROGRAM SHIM COPY: PROGRAM = two_runtimes.c under LD_PRELOAD=SHIM, COPY = a
# second copy of the simulator at another path.
#   - with COPY dlopen()ed: exactly one error line saying two HIP runtimes are loaded and naming
#     COPY; calls pass through with right results; the program's own exit status (6);
#   - without (control): bound, silent, exit status 6.
. "$(dirname "$0")/lib.sh"
prog=$1 shim=$2 copy=$3

run_case "a second runtime dlopen()ed RTLD_LOCAL" env LD_PRELOAD="$shim" "$prog" two "$copy" 6
expect_status 6
expect_gpuprio_lines 1
expect_gpuprio_says "gpuprio: error: two HIP runtimes are loaded"
expect_gpuprio_says "$copy"
expect_stderr_only_gpuprio

run_case "one runtime (control)" env LD_PRELOAD="$shim" "$prog" one "$copy" 6
expect_status 6
expect_gpuprio_lines 0
expect_stderr_only_gpuprio

finish
