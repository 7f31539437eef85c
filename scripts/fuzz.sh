#!/bin/sh
# fuzz.sh: differential fuzzing beyond CI's fixed seeds (docs/testing-stages.md, "Fuzzing").
#
#   scripts/fuzz.sh N [FIRST_SEED]
#
# Builds the gcc test tree if it is not there (build-test/gcc, as scripts/test.sh makes it), then
# runs N seeds from FIRST_SEED (default: a random one, printed) through tests/fuzz/fuzz.sh:
# without gpuprio, under it with scheduling off and with scheduling at work. A failing seed is
# printed with its reduced program. BUILD_DIR=DIR uses another build tree (a sanitizer one).
set -eu
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 N [FIRST_SEED]" >&2
    exit 2
fi
count=$1
first=${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
case $count$first in *[!0-9]*) echo "$0: N and FIRST_SEED are numbers" >&2; exit 2 ;; esac
. scripts/test-tree.sh
echo "fuzz: seeds $first.. ($count)"
exec sh tests/fuzz/fuzz.sh "$dir/tests/fuzz/fuzz_prog" "$dir/src/libgpuprio-hip.so" "$first" "$count"
