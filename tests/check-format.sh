#!/bin/sh
# check-format.sh SOURCE_DIR: fails unless every C, header and CUDA file of the project's own
# directories is formatted as the checked-in .clang-format says. The files are formatted with
# Debian 12's clang-format (14); another version formats some constructs differently, so the
# check is skipped (exit 77) where clang-format is missing or of another major version.
set -eu
src=$1
want=14
command -v clang-format >/dev/null 2>&1 ||
    { echo "check-format: clang-format not found: skipped (scripts/install-deps.sh installs it)"; exit 77; }
have=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$have" != "$want" ]; then
    echo "check-format: clang-format $have, the tree is formatted with $want: skipped"
    exit 77
fi
# One clang-format for every file (the test runs in each build of scripts/test.sh); it names
# each file it would change in its diagnostics, "FILE:LINE:COL: error: ...".
files=$(find "$src/include" "$src/src" "$src/tools" "$src/tests" "$src/bench" \
    -name '*.[ch]' -o -name '*.cu')
status=0
# shellcheck disable=SC2086
out=$(clang-format --dry-run -Werror $files 2>&1) || status=$?
bad=$(printf '%s\n' "$out" | sed -n 's/^\(.*\.\(c\|h\|cu\)\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
for f in $bad; do
    echo "not formatted: ${f#"$src"/} (clang-format -i ${f#"$src"/})"
done
if [ $status != 0 ]; then
    # Failed without naming a file: clang-format itself (say, a .clang-format it cannot read).
    [ -n "$bad" ] || printf 'check-format: clang-format failed:\n%s\n' "$out"
    exit 1
fi
echo "check-format: every file is formatted"
