#!/bin/sh
# in-root.sh - the part of the real-runtime stage (scripts/test-rocm.sh) that runs inside a root
# with one of Debian's real HIP runtimes installed (libamdhip64.so.6 or .so.7) and no GPU:
#   1. builds gpuprio from SRC with gcc (-Werror, as every build) against the root's HIP headers,
#      its hipBLASLt declarations checked against the headers of sid's libhipblaslt-dev and
#      libhipblas-common-dev (downloaded and unpacked, not installed: g++ compiles the check),
#      and runs its tests (ctest); a test that needs a package the root lacks skips, and its
#      reason is printed; the real-runtime test (shim.real_runtime_identical) must be among
#      those run, against the root's runtime (GPUPRIO_REQUIRE_REAL_HIP_RUNTIME: configure fails
#      otherwise), and so must shim.hip_coverage: tools/hip-coverage.sh against the root's
#      runtime and headers, every export that touches a stream wrapped or left out for a
#      recorded reason (its summary line is printed);
#   2. preloads HOST_SHIM, the library built on Debian 12 (the .deb's), into programs compiled
#      here against the real runtime: real_hip (linked against it) and wheel_main (the runtime
#      copied into a wheel-like directory under the wheel's file name, reached through a
#      framework library opened RTLD_LOCAL; and again under an auditwheel-style name,
#      libamdhip64-3f2a1b0c.so, which the shim must take for the runtime too). Each runs in every exit mode without and with the
#      shim: the same output and the same exit status, the one the mode asks for, never a signal
#      but the one it raises; the wheel's process maps one runtime, and the shim binds to that
#      copy (its debug log names the file), as it binds to the system's for real_hip. Every HIP
#      function these
#      programs import binds to the shim in its version node, but the five that touch no stream,
#      which bind to the runtime.
#
#   in-root.sh SRC HOST_SHIM WORK JOBS
#
# WORK is emptied first. Prints "ok: ..."/"FAIL: ..." lines; exits 1 if anything failed.
set -u
src=$1 shim=$2 work=$3 jobs=$4
here=$src/tests/rocm
fails=0
ok() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
rm -rf "$work"
mkdir -p "$work/rocm"
lib=$(readlink -f "/usr/lib/$(gcc -print-multiarch)/libamdhip64.so")
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
headers=$(awk '/#define HIP_VERSION_(MAJOR|MINOR|PATCH)/ {v = v (v == "" ? "" : ".") $3} END {print v}' \
    /usr/include/hip/hip_version.h)
echo "runtime: $lib ($soname), headers: HIP $headers"

# hipBLASLt's headers, for the compile-time check of gpuprio's declarations of it
# (src/hal/hip/hipblaslt_check.cpp): the two -dev packages unpacked, not installed (they would
# pull in the runtime, libhipblaslt1, some 160 MB that nothing here runs). The release's own:
# experimental's (hipBLASLt 7.2) in the root that has experimental (HIP 7.2), else sid's.
hipblaslt=$work/hipblaslt hipblaslt_include= release=
mkdir -p "$hipblaslt/root"
! grep -qs experimental /etc/apt/sources.list || release=experimental
if (cd "$hipblaslt" && apt-get update -qq &&
    apt-get download -qq ${release:+-t "$release"} libhipblaslt-dev libhipblas-common-dev) \
    >"$hipblaslt/download.log" 2>&1; then
    hipblaslt_include=$hipblaslt/root/usr/include
    for deb in "$hipblaslt"/*.deb; do
        dpkg-deb -x "$deb" "$hipblaslt/root" || hipblaslt_include=
    done
fi
if [ -n "$hipblaslt_include" ] && [ -f "$hipblaslt_include/hipblaslt/hipblaslt.h" ]; then
    ok "hipBLASLt headers from$(for deb in "$hipblaslt"/*.deb; do printf ' %s' "${deb##*/}"; done)"
else
    hipblaslt_include=
    tail -n 5 "$hipblaslt/download.log"
    fail "hipBLASLt headers (apt-get download libhipblaslt-dev libhipblas-common-dev)"
fi

# 1. The project, built and tested here.
t0=$(date +%s)
build=$work/gpuprio
if ! CC=gcc CXX=g++ cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    ${hipblaslt_include:+"-DGPUPRIO_HIPBLASLT_INCLUDE_DIR=$hipblaslt_include"} \
    -DGPUPRIO_REQUIRE_REAL_HIP_RUNTIME=ON >"$work/configure.log" 2>&1; then
    tail -n 20 "$work/configure.log"
    fail "configure"
elif ! cmake --build "$build" -j "$jobs" >"$work/build.log" 2>&1; then
    grep -E 'error|warning' "$work/build.log" | head -n 40
    fail "build with gcc -Werror against the HIP $headers headers"
else
    grep -E '^-- (HIP headers|gpuprio: real-runtime)' "$work/configure.log"
    ok "build with gcc -Werror against the HIP $headers headers ($(($(date +%s) - t0))s)"
    t0=$(date +%s)
    for t in shim.real_runtime_identical shim.hip_coverage hip.hipblaslt_mangled; do
        if ctest --test-dir "$build" -N -R "^$t\$" | grep -q 'Total Tests: 1'; then
            ok "$t is configured"
        else
            fail "$t is not configured against $soname"
        fi
    done
    # The sim-dependent tests wait on timers, not the CPU: more jobs than cores shortens the run.
    ctest --test-dir "$build" -j "$((jobs + 1))" --output-on-failure >"$work/ctest.log" 2>&1
    ctest_status=$?
    grep -E '^[0-9]+% tests passed|^Total Test time' "$work/ctest.log"
    # Each skipped test with its reason (the last line it printed).
    sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$work/ctest.log" | while read -r t; do
        reason=$(awk -v t="$t" '$0 ~ "Test: " t "$" {on = 1} on && /^<end of output>/ {print last; exit}
                               on {last = $0}' "$build/Testing/Temporary/LastTest.log")
        echo "skipped: $t: $reason"
    done
    coverage=$(awk '/Test: shim\.hip_coverage$/ {on = 1}
                    on && /exported functions touch a stream/ {print; exit}' \
        "$build/Testing/Temporary/LastTest.log")
    echo "hip-coverage against $soname: ${coverage:-no summary line}"
    if [ $ctest_status = 0 ]; then
        ok "ctest ($(($(date +%s) - t0))s)"
    else
        sed -n '/The following tests FAILED/,$p' "$work/ctest.log"
        grep -B2 -A30 -E '\*\*\*(Failed|Timeout|Exception)' "$work/ctest.log" | head -n 200
        fail "ctest"
    fi
fi

# 2. The Debian 12 library preloaded into programs built here.
t0=$(date +%s)
cflags="-std=c11 -Wall -Wextra -Werror -O1 -g -I$here/../../src/hal/hip" # calls.c: hip_compat.h
wheel=$work/rocm/wheel/torch/lib
mkdir -p "$wheel"
# The file PyTorch's ROCm wheels bundle, torch/lib/libamdhip64.so, its soname set to that file
# name (patchelf) so that the framework's DT_NEEDED names it and finds this copy, not the system's.
cp "$lib" "$wheel/libamdhip64.so"
patchelf --set-soname libamdhip64.so "$wheel/libamdhip64.so"
# And as auditwheel renames what a wheel bundles: a hash in the name, the soname set to match.
hashed=$work/rocm/hashed/lib
mkdir -p "$hashed"
cp "$lib" "$hashed/libamdhip64-3f2a1b0c.so"
patchelf --set-soname libamdhip64-3f2a1b0c.so "$hashed/libamdhip64-3f2a1b0c.so"
# shellcheck disable=SC2086,SC2016 # the flags are words; $ORIGIN is the linker's
if ! gcc $cflags -o "$work/rocm/real_hip" "$here/real_hip.c" "$here/calls.c" -lamdhip64 -lpthread ||
    ! gcc $cflags -fPIC -shared -o "$wheel/libframework.so" "$here/wheel_framework.c" \
        "$here/calls.c" -L"$wheel" -l:libamdhip64.so -lpthread -Wl,-rpath,'$ORIGIN' ||
    ! gcc $cflags -fPIC -shared -o "$hashed/libframework.so" "$here/wheel_framework.c" \
        "$here/calls.c" -L"$hashed" -l:libamdhip64-3f2a1b0c.so -lpthread -Wl,-rpath,'$ORIGIN' ||
    ! gcc $cflags -o "$work/rocm/wheel_main" "$here/wheel_main.c" -ldl; then
    fail "compile the programs against $soname"
    exit 1
fi

# run NAME EXPECTED_STATUS PROGRAM ARGS...: the same output and status EXPECTED_STATUS without and
# with the shim.
run() {
    name=$1 want=$2
    shift 2
    out=$work/rocm/$name
    "$@" >"$out.plain" 2>"$out.plain.err"
    plain=$?
    LD_PRELOAD=$shim "$@" >"$out.shim" 2>"$out.shim.err"
    shimmed=$?
    if [ $plain != "$want" ]; then
        cat "$out.plain.err"
        fail "$name: exit status $plain without the shim, expected $want"
    elif [ $shimmed != "$want" ]; then
        cat "$out.shim.err"
        fail "$name: exit status $shimmed under the shim, $want without"
    elif ! diff -u "$out.plain" "$out.shim"; then
        fail "$name: output differs under the shim"
    else
        ok "$name: $(sed -n 's/^\([0-9]* calls\)$/\1/p' "$out.plain"), output identical, exit status $want"
    fi
}
for mode in return:3 exit:5 thread:9 signal:143; do
    run "real_hip.${mode%:*}" "${mode#*:}" "$work/rocm/real_hip" "${mode%:*}"
    run "wheel.${mode%:*}" "${mode#*:}" "$work/rocm/wheel_main" "$wheel/libframework.so" "${mode%:*}"
done
run wheel.dlclose 4 "$work/rocm/wheel_main" "$wheel/libframework.so" dlclose
run hashed.return 3 "$work/rocm/wheel_main" "$hashed/libframework.so" return
for w in wheel hashed; do
    if grep -q '^HIP runtimes mapped: 1$' "$work/rocm/$w.return.shim"; then
        ok "$w: one runtime mapped under the shim"
    else
        fail "$w: $(grep '^HIP runtimes mapped' "$work/rocm/$w.return.shim") under the shim"
    fi
done
# The runtime the shim bound to, as its debug log names it: the wheel's copy in the wheel's
# processes (not the system's, which a search by soname would find), the system's for real_hip.
bound_to() { # NAME EXPECTED_FILE PROGRAM ARGS...
    name=$1 want=$2
    shift 2
    GPUPRIO_LOG=debug LD_PRELOAD=$shim "$@" 2>"$work/rocm/$name.debug" >/dev/null
    got=$(sed -n 's/.*bound to the HIP runtime //p' "$work/rocm/$name.debug" | head -n 1)
    if [ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$want")" ]; then
        ok "$name: the shim bound to $got"
    else
        grep -i 'runtime' "$work/rocm/$name.debug" | head -n 3
        fail "$name: the shim bound to ${got:-no runtime}, not $want"
    fi
}
bound_to real_hip "$lib" "$work/rocm/real_hip" return
bound_to wheel "$wheel/libamdhip64.so" "$work/rocm/wheel_main" "$wheel/libframework.so" return
bound_to hashed "$hashed/libamdhip64-3f2a1b0c.so" \
    "$work/rocm/wheel_main" "$hashed/libframework.so" return

# Bindings: every HIP function these programs import binds, in its version node, to the shim,
# but the few that touch no stream, which must reach the runtime itself (docs/hip-coverage.md:
# the error state is never intercepted).
not_intercepted=" hipEventCreate hipGetDeviceCount hipGetLastError hipPeekAtLastError hipRuntimeGetVersion "
check_bindings() { # NAME OBJECT PROGRAM ARGS...
    name=$1 object=$2
    shift 2
    LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=$work/rocm/$name.bindings LD_PRELOAD=$shim \
        "$@" >/dev/null 2>&1
    cat "$work/rocm/$name.bindings".* >"$work/rocm/$name.bindings"
    readelf --dyn-syms -W "$object" |
        awk '$7 == "UND" && $8 ~ /^hip.*@/ {sub(/ \(.*/, "", $8); print $8}' | sort -u \
        >"$work/rocm/$name.imports"
    bad=0 n=0 to_shim=0
    while IFS=@ read -r sym node; do
        n=$((n + 1))
        case $not_intercepted in
        *" $sym "*) want='[^ ]*libamdhip64[^ ]*' what="the runtime" ;;
        *) want=$shim what="the shim" to_shim=$((to_shim + 1)) ;;
        esac
        grep -q "binding file $object \[0\] to $want \[0\]: normal symbol \`$sym' \[$node\]" \
            "$work/rocm/$name.bindings" || {
            echo "  $sym@$node is not bound to $what"
            bad=$((bad + 1))
        }
    done <"$work/rocm/$name.imports"
    nodes=$(sed 's/.*@//' "$work/rocm/$name.imports" | sort -u -t. -k1,1 -k2n | tr '\n' ' ')
    if [ $n -gt 0 ] && [ $bad = 0 ]; then
        ok "$name: $to_shim of its $n HIP imports bound to the shim, the rest to the runtime (nodes: ${nodes% })"
    else
        fail "$name: $bad of its $n HIP imports bound elsewhere than they should"
    fi
}
check_bindings real_hip "$work/rocm/real_hip" "$work/rocm/real_hip" return
check_bindings wheel "$wheel/libframework.so" "$work/rocm/wheel_main" "$wheel/libframework.so" return
check_bindings hashed "$hashed/libframework.so" "$work/rocm/wheel_main" "$hashed/libframework.so" return
echo "preload checks: $(($(date +%s) - t0))s"
[ $fails = 0 ]
