#!/bin/sh
# compare.sh PRELOAD_LIB PROGRAM [ARGS...]
# Runs PROGRAM without and with LD_PRELOAD=PRELOAD_LIB and fails unless both print the same
# standard output and exit with the same status. Says, on success, the output's first line too.
set -u
lib=$1
shift
out=${TMPDIR:-/tmp}/gpuprio-compare.$$
"$@" >"$out.plain" 2>/dev/null
echo "exit=$?" >>"$out.plain"
LD_PRELOAD=$lib "$@" >"$out.shim" 2>/dev/null
echo "exit=$?" >>"$out.shim"
if diff -u "$out.plain" "$out.shim"; then
    echo "identical with and without $lib: $(head -n 1 "$out.plain"); $(tail -n 1 "$out.plain")"
    rm -f "$out.plain" "$out.shim"
    exit 0
fi
rm -f "$out.plain" "$out.shim"
exit 1
