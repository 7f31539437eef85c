#!/bin/sh
# hip-headers.sh SRC - cmake/HipHeaders.cmake finds HIP where AMD's and Debian's packages put it,
# through hip-config.cmake, without running it, and says so at configure time. Fake HIP layouts
# (a hip-config.cmake that fails if run, hip/hip_version.h of a version no real HIP has, an empty
# hip/hip_runtime_api.h) and a tiny project that includes only the module: configure only.
set -eu
src=$(cd "$1" && pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset HIP_PATH ROCM_PATH CMAKE_PREFIX_PATH hip_DIR
fails=0

# fake PREFIX CONFIG_SUBDIR [no-headers]: a HIP under PREFIX, hip-config.cmake in CONFIG_SUBDIR.
fake() {
    mkdir -p "$1/$2"
    echo 'message(FATAL_ERROR "hip-config.cmake was run")' >"$1/$2/hip-config.cmake"
    [ "${3:-}" = no-headers ] && return 0
    mkdir -p "$1/include/hip"
    printf '#define HIP_VERSION_%s %s\n' MAJOR 9 MINOR 8 PATCH 76543 >"$1/include/hip/hip_version.h"
    : >"$1/include/hip/hip_runtime_api.h"
}
fake "$tmp/amd" lib/cmake/hip              # AMD's packages: /opt/rocm-X.Y.Z
fake "$tmp/debian" lib/test-arch/cmake/hip # Debian's: /usr/lib/ARCH/cmake/hip
fake "$tmp/empty" lib/cmake/hip no-headers # a hip-config.cmake without headers beside it
mkdir -p "$tmp/project"
cat >"$tmp/project/CMakeLists.txt" <<EOT
cmake_minimum_required(VERSION 3.20)
project(hip_headers_test LANGUAGES NONE)
set(CMAKE_LIBRARY_ARCHITECTURE test-arch)
include("$src/cmake/HipHeaders.cmake")
EOT

n=0
# check WHAT EXPECTED_LINE [EXPECTED_WARNING] -- CMAKE-ARGS...: a fresh configure prints the line.
check() {
    what=$1 want=$2 warn=$3
    shift 4
    n=$((n + 1))
    rm -rf "$tmp/build"
    if ! cmake -S "$tmp/project" -B "$tmp/build" "$@" >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        echo "FAIL: $what: configure failed"
        fails=$((fails + 1))
    elif ! grep -qF -- "-- HIP headers: $want" "$tmp/out"; then
        grep -E 'HIP headers|Warning' "$tmp/out"
        echo "FAIL: $what: expected \"-- HIP headers: $want\""
        fails=$((fails + 1))
    elif [ -n "$warn" ] && ! tr '\n' ' ' <"$tmp/out" | tr -s ' ' | grep -qF -- "$warn"; then
        cat "$tmp/out"
        echo "FAIL: $what: expected the warning \"$warn\""
        fails=$((fails + 1))
    else
        echo "ok: $what: $(grep -- '-- HIP headers' "$tmp/out" | sed 's/; choose with.*//')"
    fi
}
amd="$tmp/amd/include/hip, HIP 9.8.76543 (from"
debian="$tmp/debian/include/hip, HIP 9.8.76543 (from"
debian_config=$tmp/debian/lib/test-arch/cmake/hip/hip-config.cmake
check "CMAKE_PREFIX_PATH, AMD's layout" \
    "$amd CMAKE_PREFIX_PATH: hip-config.cmake $tmp/amd/lib/cmake/hip/hip-config.cmake;" "" -- \
    -DCMAKE_PREFIX_PATH="$tmp/amd"
check "CMAKE_PREFIX_PATH, Debian's layout" \
    "$debian CMAKE_PREFIX_PATH: hip-config.cmake $debian_config;" \
    "" -- -DCMAKE_PREFIX_PATH="$tmp/debian"
export ROCM_PATH="$tmp/amd"
check "ROCM_PATH in the environment" \
    "$amd ROCM_PATH=$tmp/amd: hip-config.cmake $tmp/amd/lib/cmake/hip/hip-config.cmake;" "" --
unset ROCM_PATH
check "HIP_PATH before CMAKE_PREFIX_PATH" \
    "$debian HIP_PATH=$tmp/debian: hip-config.cmake" "" -- \
    -DHIP_PATH="$tmp/debian" -DCMAKE_PREFIX_PATH="$tmp/amd"
check "hip_DIR" "$amd hip_DIR: hip-config.cmake $tmp/amd/lib/cmake/hip/hip-config.cmake;" "" -- \
    -Dhip_DIR="$tmp/amd/lib/cmake/hip"
check "a hip-config.cmake without headers is passed over" \
    "$amd CMAKE_PREFIX_PATH: hip-config.cmake $tmp/amd/lib/cmake/hip/hip-config.cmake;" \
    "$tmp/empty/lib/cmake/hip/hip-config.cmake: its prefix has no include/hip/hip_runtime_api.h" \
    -- "-DCMAKE_PREFIX_PATH=$tmp/empty;$tmp/amd"
[ $fails = 0 ] || exit 1
echo "all $n layouts found as expected"
