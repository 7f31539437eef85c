#!/bin/sh
# check-exports.sh LIB LIST [LT_LIST]: fails unless LIB (libgpuprio-cuda.so) exports, as defined
# dynamic symbols, exactly the CUDA names of LIST (generated from src/shim/cuda/cuda_api.def) and
# the cuBLASLt names of LT_LIST (from src/hal/cuda/cublaslt_api.def), the public gpuprio_* API and
# the dlsym/dlvsym override, each CUDA and cuBLASLt name unversioned.
set -eu
lib=$1
if [ $# -gt 2 ]; then
    list=$(mktemp) || exit 2
    trap 'rm -f "$list"' EXIT
    cat "$2" "$3" > "$list"
else
    list=$2
fi
command -v nm >/dev/null || { echo "check-exports: nm not found (binutils)" >&2; exit 2; }
nm -D --defined-only "$lib" | awk -v list="$list" '
    BEGIN { while ((getline n < list) > 0) { want[n] = 0; nwant++ } }
    $2 == "A" { next }                       # version node names
    {
        sym = $3; name = sym; sub(/@.*/, "", name); total++
        if (name in want) {
            if (sym != name) { print "versioned CUDA export: " sym; bad++ }
            want[name]++
        } else if (name == "dlsym" || name == "dlvsym") {
            dl[name]++
        } else if (index(name, "gpuprio_") == 1) {
            api++
        } else {
            print "unexpected export: " sym; bad++
        }
    }
    END {
        for (n in want) if (!want[n]) { print "missing export: " n; bad++ }
        if (dl["dlsym"] < 1 || dl["dlvsym"] < 1) { print "missing export: dlsym/dlvsym"; bad++ }
        if (api < 1) { print "missing export: gpuprio_* API"; bad++ }
        printf "%d exports checked (%d CUDA names listed), %d wrong\n", total, nwant, bad
        exit bad > 0
    }'
