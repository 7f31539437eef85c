#!/bin/sh
# demo.sh: builds gpuprio and runs the main demo on the simulated GPU (no GPU needed): its
# headline table and picture (build-demo/demo-latency.svg), or with --all every row.
# Arguments are passed to the demo (see: scripts/demo.sh --help).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build-demo -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-demo -j "$(nproc 2>/dev/null || echo 2)" --target gpuprio-demo >/dev/null
exec build-demo/bench/gpuprio-demo "$@"
