# test-tree.sh: sourced by the scripts that run programs of a test build (fuzz.sh, soak.sh).
# Sets dir to BUILD_DIR (default build-test/gcc, as scripts/test.sh makes it) and builds it first
# if it has no fuzz_prog yet. Run from the project's root.
dir=${BUILD_DIR:-build-test/gcc}
if [ ! -x "$dir/tests/fuzz/fuzz_prog" ] || [ ! -x "$dir/tests/chaos/chaos" ]; then
    sh scripts/install-deps.sh
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$dir" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
fi
