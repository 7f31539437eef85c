#!/bin/sh
# help.sh - the gpuprio command's help and version: gpuprio --help, gpuprio help CMD,
# gpuprio CMD --help (all exit 0 on stdout; run, top, set, metrics), gpuprio --version, and
# unknown commands and bad arguments (status 2).
#
#   help.sh GPUPRIO VERSION
set -u
gpuprio=$1 version=$2
fails=0
check() { # WHAT PATTERN ARGS... : exit 0, PATTERN on stdout
    what=$1 pattern=$2
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    if [ $rc != 0 ] || ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
        echo "FAIL: $what: status $rc, output: $out"
        fails=$((fails + 1))
    else
        echo "ok: $what"
    fi
}
check "--help" "^Usage: gpuprio COMMAND" "$gpuprio" --help
check "-h" "^Usage: gpuprio COMMAND" "$gpuprio" -h
check "help" "^Usage: gpuprio COMMAND" "$gpuprio" help
for cmd in run top set metrics; do
    check "help $cmd" "^Usage: gpuprio $cmd" "$gpuprio" help $cmd
    check "$cmd --help" "^Usage: gpuprio $cmd" "$gpuprio" $cmd --help
done
check "--version" "^gpuprio $version\$" "$gpuprio" --version
for args in "" "frobnicate" "help frobnicate" "top --bogus" "top -d 0" "set 1" "set x high" "metrics" \
    "metrics --bogus" "metrics --once --interval 1"; do
    # shellcheck disable=SC2086
    "$gpuprio" $args >/dev/null 2>&1
    rc=$?
    if [ $rc != 2 ]; then
        echo "FAIL: gpuprio $args: status $rc, expected 2"
        fails=$((fails + 1))
    else
        echo "ok: gpuprio $args: 2"
    fi
done
[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
