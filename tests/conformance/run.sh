#!/bin/sh
# run.sh - run one conformance program and compare what it prints with its expected output.
#
#   run.sh PROGRAM EXPECTED_FILE [PRELOAD_LIB]
#       Runs PROGRAM (with LD_PRELOAD=PRELOAD_LIB when given), appends "exit=<status>" to its
#       stdout and compares the result with EXPECTED_FILE. Exit 0 when they are equal; otherwise
#       print a unified diff (expected -> actual) and exit 1.
#   run.sh --must-differ PROGRAM EXPECTED_FILE [PRELOAD_LIB]
#       The same run, but exit 0 only when the output differs from EXPECTED_FILE (fault
#       injection: HIPSIM_FAULT set in the environment must make the program notice).
#
# The program's stderr passes through untouched (sanitizer reports show up there, and their
# non-zero exit status shows up in the "exit=" line).

usage() {
    echo "usage: $0 [--must-differ] PROGRAM EXPECTED_FILE [PRELOAD_LIB]" >&2
    exit 2
}

mode=match
if [ "$#" -gt 0 ] && [ "$1" = "--must-differ" ]; then
    mode=differ
    shift
fi
if [ "$#" -lt 2 ] || [ "$#" -gt 3 ]; then
    usage
fi
prog=$1
expected=$2
preload=${3:-}

if [ ! -x "$prog" ]; then
    echo "run.sh: $prog: not an executable" >&2
    exit 2
fi
if [ ! -r "$expected" ]; then
    echo "run.sh: $expected: cannot read the expected output" >&2
    exit 2
fi

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/gpuprio-conf.XXXXXX") || exit 2
trap 'rm -rf "$tmpdir"' EXIT
trap 'exit 130' INT TERM HUP
actual=$tmpdir/actual

if [ -n "$preload" ]; then
    LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}" "$prog" >"$actual"
else
    "$prog" >"$actual"
fi
status=$?
echo "exit=$status" >>"$actual"

if diff -u "$expected" "$actual" >"$tmpdir/diff"; then
    same=1
else
    same=0
fi

name=$(basename "$prog")
if [ "$mode" = match ]; then
    if [ "$same" = 1 ]; then
        exit 0
    fi
    echo "run.sh: $name: output differs from $expected${preload:+ (LD_PRELOAD=$preload)}:"
    cat "$tmpdir/diff"
    exit 1
fi

if [ "$same" = 0 ]; then
    echo "run.sh: $name: output differs from $expected, as required${HIPSIM_FAULT:+ (HIPSIM_FAULT=$HIPSIM_FAULT)}:"
    cat "$tmpdir/diff"
    exit 0
fi
echo "run.sh: $name: output equals $expected although it must differ${HIPSIM_FAULT:+ (HIPSIM_FAULT=$HIPSIM_FAULT)}"
exit 1
