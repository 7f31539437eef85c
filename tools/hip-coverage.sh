#!/bin/sh
# hip-coverage.sh LIB INCLUDE_DIR [DEF [COMPAT_H]]
#
# What a real HIP runtime exports that touches a stream, and whether the shim wraps it: one
# Markdown table row per function, for docs/hip-coverage.md's per-runtime tables and for CI.
#   LIB          the runtime (libamdhip64.so.N); its dynamic symbols, read with objdump -T
#   INCLUDE_DIR  the directory holding that runtime's hip/hip_runtime_api.h
#   DEF          the shim's list (default src/shim/hip/hip_api.def)
#   COMPAT_H     where the C++ names wrapped by hand are (default src/hal/hip/hip_compat.h)
# A function touches a stream when the headers declare it with a hipStream_t parameter, when the
# shim's list has it, or when its C++ name has an ihipStream_t parameter. Wrapped: in the list,
# or one of the C++ names of hip_compat.h's *_CXX macros. Anything else is left out for a reason
# given below; one without a recorded reason is printed as such and makes the exit status 1.
# Headers that cannot be read, or that declare nothing taking a stream, exit with 2.
set -eu
lib=$1 inc=$2
here=$(cd "$(dirname "$0")/.." && pwd)
def=${3-$here/src/shim/hip/hip_api.def}
compat=${4-$here/src/hal/hip/hip_compat.h}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

objdump -T "$lib" | awk '$4 == ".text" && $6 ~ /^hip_/ { print $7 "\t" $6 }' | sort -u > "$tmp/exports"
sed -n 's/^HIP_API(\([A-Za-z0-9_]*\),.*/\1/p' "$def" | sort -u > "$tmp/listed"
sed -n 's/^ *"\(_Z[A-Za-z0-9_]*\)"$/\1/p' "$compat" | sort -u > "$tmp/cxx_wrapped"
# Preprocessed apart from the pipeline below, whose failure would only shorten the list.
printf '#define __HIP_PLATFORM_AMD__ 1\n#include <hip/hip_runtime_api.h>\n' |
    "$cc" -E -P -x c -I "$inc" - > "$tmp/headers" ||
    { echo "$0: $cc cannot preprocess $inc/hip/hip_runtime_api.h" >&2; exit 2; }
tr '\n' ' ' < "$tmp/headers" | tr ';' '\n' | grep -w hipStream_t |
    sed -n 's/.*[^A-Za-z0-9_]\(hip[A-Za-z0-9_]*\) *(.*/\1/p' | sort -u > "$tmp/declared"
[ -s "$tmp/declared" ] ||
    { echo "$0: $inc/hip/hip_runtime_api.h declares no function taking a hipStream_t" >&2; exit 2; }

awk -F '\t' -v listed="$tmp/listed" -v cxx="$tmp/cxx_wrapped" -v declared="$tmp/declared" '
    BEGIN {
        while ((getline n < listed) > 0) wrap[n] = 1
        while ((getline n < cxx) > 0) wrap[n] = 1
        while ((getline n < declared) > 0) stream[n] = 1
        why["hipGetLastError"] = "error state: never intercepted, so the shim cannot change it"
        why["hipPeekAtLastError"] = why["hipGetLastError"]
        why["hipExtGetLastError"] = why["hipGetLastError"]
        why["hipGetStreamDeviceId"] = "returns int, not hipError_t; only reads"
        why["hipKernelNameRefByPtr"] = "returns const char *, not hipError_t; only reads"
    }
    {
        name = $1; node = $2
        if (!(name in wrap) && !(name in stream) && !(name ~ /^_Z.*ihipStream_t/)) next
        if (name in wrap) { status = "wrapped"; wrapped++ }
        else if (name in why) { status = "left out: " why[name]; out++ }
        else { status = "left out: NO REASON RECORDED"; out++; unexplained++ }
        printf "| `%s` | %s | %s |\n", name, node, status
        total++
    }
    END {
        printf "\n%d exported functions touch a stream: %d wrapped, %d left out (%d without a reason)\n",
               total, wrapped, out, unexplained
        exit unexplained > 0
    }' "$tmp/exports"
