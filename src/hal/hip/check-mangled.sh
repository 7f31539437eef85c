#!/bin/sh
# check-mangled.sh OBJECT HEADER: fails unless the C++ name that HEADER's
# HIPHAL_LT_IS_ALGO_SUPPORTED spells (in string pieces) is the one OBJECT (hipblaslt_check.cpp's,
# compiled against hipblaslt-ext.hpp) refers to for hipblaslt_ext::matmulIsAlgoSupported.
set -eu
obj=$1 header=$2
ours=$(sed -n '/#define HIPHAL_LT_IS_ALGO_SUPPORTED/,/^[^ ]/p' "$header" |
    grep -o '"[^"]*"' | tr -d '"\n')
theirs=$(nm -u "$obj" | awk '$2 ~ /matmulIsAlgoSupported/ { print $2 }')
if [ -z "$ours" ] || [ "$ours" != "$theirs" ]; then
    echo "FAIL: hip_hipblaslt.h calls '$ours'; hipblaslt-ext.hpp declares '$theirs'"
    exit 1
fi
echo "ok $ours"
