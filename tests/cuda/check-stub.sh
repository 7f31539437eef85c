#!/bin/sh
# check-stub.sh LIST STUB: fails unless the CUDA toolkit's stub libcuda.so (STUB), which exports
# what the real driver exports, exports every name of LIST: the shim must never define a name
# the driver does not have.
set -eu
list=$1 stub=$2
nm -D --defined-only "$stub" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u > "${TMPDIR:-/tmp}/stub.$$"
missing=$(sort -u "$list" | comm -23 - "${TMPDIR:-/tmp}/stub.$$")
rm -f "${TMPDIR:-/tmp}/stub.$$"
if [ -n "$missing" ]; then
    echo "listed in cuda_api.def but not exported by $stub:"
    echo "$missing"
    exit 1
fi
echo "$(wc -l < "$list") names, all exported by $stub"
