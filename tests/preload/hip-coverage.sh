#!/bin/sh
# hip-coverage.sh SRC LIB INCLUDE_DIR - shim.hip_coverage: tools/hip-coverage.sh against the real
# runtime LIB and the headers of INCLUDE_DIR; fails where an exported function that touches a
# stream is neither wrapped nor left out for a recorded reason (the tool's exit status 1). The
# tool reads the headers' stream functions through the preprocessor in a pipeline, whose failure
# would only shorten the list: the headers are preprocessed here first, and a failure, or no
# function at all, fails the test.
set -eu
src=$1 lib=$2 inc=$3
cc=${CC:-cc}
if ! printf '#define __HIP_PLATFORM_AMD__ 1\n#include <hip/hip_runtime_api.h>\n' |
    "$cc" -E -P -x c -I "$inc" - >/dev/null; then
    echo "FAIL: $cc cannot preprocess $inc/hip/hip_runtime_api.h"
    exit 1
fi
sh "$src/tools/hip-coverage.sh" "$lib" "$inc" >"${TMPDIR:-/tmp}/hip-coverage.$$" 2>&1 || status=$?
out=$(cat "${TMPDIR:-/tmp}/hip-coverage.$$")
rm -f "${TMPDIR:-/tmp}/hip-coverage.$$"
echo "$out"
[ "${status:-0}" = 0 ] || exit 1
echo "$out" | grep -Eq '^[1-9][0-9]* exported functions touch a stream' ||
    { echo "FAIL: no exported function of $lib touches a stream"; exit 1; }
