#!/bin/sh
# test.sh: builds gpuprio from scratch and runs every test, three times: an optimized gcc build,
# a clang build with AddressSanitizer and UndefinedBehaviorSanitizer, and a clang build with
# ThreadSanitizer. Where cuda.h is installed, a fourth build without the HIP parts
# (-DGPUPRIO_HIP=OFF) checks that a machine with CUDA only builds and tests the CUDA library.
# The gcc build must configure the real-runtime test against Debian 12's libamdhip64.so.5
# (GPUPRIO_REQUIRE_REAL_HIP_RUNTIME: a configure error otherwise); each build prints which HIP
# headers it found and the real-runtime test's line.
# Then scripts/test-rocm.sh builds and tests gpuprio against the real HIP 6.4 and 7.2 runtimes
# in roots made from Debian's archive, and preloads the library of the Debian package made from
# the gcc build's configuration there (as root; it fails where the archive cannot be reached).
# Build trees go to build-test/. Exits non-zero if anything fails.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
status=0
run() { # NAME CC SANITIZE [CMAKE-ARGS...]
    dir=build-test/$1
    cc=$2 sanitize=$3
    shift 3
    echo "==== $(basename "$dir"): CC=$cc GPUPRIO_SANITIZE=$sanitize $*"
    rm -rf "$dir"
    mkdir -p "$dir"
    # Which HIP headers, and the real-runtime test's line; all of it where configure fails.
    if ! CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DGPUPRIO_SANITIZE=$sanitize" "$@" >"$dir/configure.log" 2>&1; then
        cat "$dir/configure.log"
        echo "configure failed: $(basename "$dir")"
        status=1
        return
    fi
    grep -E '^-- (HIP headers|gpuprio: real-runtime)' "$dir/configure.log" || true
    if ! cmake --build "$dir" -j "$jobs" >/dev/null; then
        echo "build failed: $(basename "$dir")"
        status=1
        return
    fi
    ctest --test-dir "$dir" -j "$jobs" --output-on-failure || status=1
}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:atexit_sleep_ms=0
# The real-runtime test (Debian 12's libamdhip64.so.5) must be configured: a configure error if not.
run gcc gcc "" -DGPUPRIO_REQUIRE_REAL_HIP_RUNTIME=ON
run asan clang "address,undefined"
run tsan clang "thread"
if [ -e /usr/local/cuda/include/cuda.h ]; then
    run cuda-only gcc "" -DGPUPRIO_HIP=OFF
fi
echo "==== rocm: the real HIP 6.4 and 7.2 runtimes (scripts/test-rocm.sh)"
# The package's build tree that package.deb left: only packing is left to do.
GPUPRIO_PACKAGE_BUILD_DIR=$(pwd -P)/build-test/gcc/tests/package/build-package \
    sh scripts/test-rocm.sh || status=1
[ $status = 0 ] && echo "all test configurations passed" || echo "SOME TESTS FAILED"
exit $status
