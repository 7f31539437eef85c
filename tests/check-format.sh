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
bad=0
for f in $(find "$src/include" "$src/src" "$src/tools" "$src/tests" "$src/bench" \
    -name '*.[ch]' -o -name '*.cu'); do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: ${f#"$src"/} (clang-format -i ${f#"$src"/})"
        bad=1
    fi
done
[ $bad = 0 ] && echo "check-format: every file is formatted"
exit $bad
