#!/bin/sh
# cdi_spec.sh - cdi.spec: `gpuprio cdi` without a container engine. The spec it writes, checked
# offline against the CDI specification's rules and against what the command promises
# (cdi_check.py): without a configuration file (board directory /run/gpuprio, or --board-dir),
# and with one (its shared directory, the file mounted read-only), for --shim hip and all; to
# standard output and with --output DIR (the file's path printed, mode 0644, no temporary file
# left). Errors: a bad option or --shim (2), a DIR that does not exist, a path a spec cannot hold
# (1), each with one message.
#
#   cdi_spec.sh GPUPRIO HIP_LIBRARY [CUDA_LIBRARY]
set -u
gpuprio=$1 hip=$2 cuda=${3:-}
. "$(dirname "$0")/../tools/expect.sh"
check=$(dirname "$0")/cdi_check.py
if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "skipped: python3-yaml is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The libraries in one directory, as installed.
libdir=$tmp/lib
mkdir "$libdir" && cp "$hip" "$libdir/" || exit 1
libs=1
if [ -n "$cuda" ]; then
    cp "$cuda" "$libdir/" || exit 1
    libs=2
fi
export GPUPRIO_LIBRARY_DIR=$libdir GPUPRIO_CONFIG=$tmp/none
checked() { # WHAT SPEC BOARD_DIR CONF
    if python3 "$check" "$2" "$3" "$4" >"$tmp/check.out" 2>&1; then
        echo "ok: $1 ($(tail -n 1 "$tmp/check.out"))"
    else
        echo "FAIL: $1:"
        cat "$tmp/check.out" "$2"
        fails=$((fails + 1))
    fi
}

"$gpuprio" cdi --shim hip >"$tmp/stdout.yaml" 2>"$tmp/err"
expect "gpuprio cdi to standard output" 0 $?
checked "no configuration file: /run/gpuprio" "$tmp/stdout.yaml" /run/gpuprio -
if [ -d /run/gpuprio ]; then
    expect "nothing on stderr" "" "$(cat "$tmp/err")"
else
    expect "a warning: the board directory is not there" \
        "gpuprio cdi: warning: the board directory /run/gpuprio is not there; the containers cannot start until it is (install -d -m 1777 /run/gpuprio)" \
        "$(cat "$tmp/err")"
fi
mkdir "$tmp/boards"
"$gpuprio" cdi --shim all --board-dir "$tmp/boards" >"$tmp/all.yaml" 2>"$tmp/err"
expect "--board-dir that exists: no warning" "" "$(cat "$tmp/err")"
checked "--shim all --board-dir" "$tmp/all.yaml" "$tmp/boards" -
expect "--shim all preloads every library built" $libs \
    "$(grep -c 'containerPath: "/opt/gpuprio/lib/libgpuprio-' "$tmp/all.yaml")"

# The administrator's file (root's, when the test runs as root): its shared directory and the file.
if [ "$(id -u)" = 0 ]; then
    chmod 755 "$tmp"
    mkdir -m 1777 "$tmp/shared" && chmod 1777 "$tmp/shared"
    printf 'board_dir = %s\n' "$tmp/shared" >"$tmp/gpuprio.conf"
    chmod 644 "$tmp/gpuprio.conf"
    mkdir "$tmp/out"
    out=$(GPUPRIO_CONFIG=$tmp/gpuprio.conf "$gpuprio" cdi --shim hip --output "$tmp/out")
    expect "--output DIR prints the spec's path" "$tmp/out/gpuprio.yaml" "$out"
    checked "with /etc/gpuprio.conf: its directory, the file mounted" "$tmp/out/gpuprio.yaml" \
        "$tmp/shared" "$tmp/gpuprio.conf"
    expect "the spec's mode" 644 "$(stat -c %a "$tmp/out/gpuprio.yaml")"
    expect "no temporary file left" gpuprio.yaml "$(ls -A "$tmp/out")"
    # Written again over itself: replaced whole.
    cp "$tmp/out/gpuprio.yaml" "$tmp/first.yaml"
    GPUPRIO_CONFIG=$tmp/gpuprio.conf "$gpuprio" cdi --shim hip --output "$tmp/out" >/dev/null
    expect "written again: one file, the same" "gpuprio.yaml same" \
        "$(ls -A "$tmp/out") $(cmp -s "$tmp/out/gpuprio.yaml" "$tmp/first.yaml" && echo same)"
else
    echo "skipped: the configuration file's case runs as root (the file must be root's)"
fi

# The checker refuses what the CDI specification refuses (each a change to a good spec).
refused() { # WHAT SED-EXPRESSION
    sed "$2" "$tmp/all.yaml" >"$tmp/bad.yaml"
    if python3 "$check" "$tmp/bad.yaml" >"$tmp/check.out" 2>&1; then
        echo "FAIL: the checker took a spec with $1"
        fails=$((fails + 1))
    else
        echo "ok: the checker refuses $1: $(grep FAIL "$tmp/check.out" | head -n 1)"
    fi
}
refused "an unreleased cdiVersion" 's/^cdiVersion: "0.5.0"/cdiVersion: "0.5"/'
refused "annotations under 0.5.0" 's/^devices:/annotations: {a: b}\ndevices:/'
refused "a device name starting with '-'" 's/- name: "high"/- name: "-high"/'
refused "a device name twice" 's/- name: "low"/- name: "high"/'
refused "a kind without a class" 's|^kind: "gpuprio.dev/priority"|kind: "gpuprio.dev"|'
refused "an env entry without '='" 's/"GPUPRIO_PRIORITY=10"/"GPUPRIO_PRIORITY"/'
refused "a relative containerPath" 's|containerPath: "/opt/|containerPath: "opt/|'
refused "an unknown field" 's/^      options:/      flags:/'

# Errors.
"$gpuprio" cdi --bogus >/dev/null 2>"$tmp/err"
expect "a bad option: status 2" "2 gpuprio cdi: bad option '--bogus' (gpuprio cdi --help)" \
    "$? $(cat "$tmp/err")"
"$gpuprio" cdi --shim rocm >/dev/null 2>"$tmp/err"
expect "a bad --shim: status 2" "2 gpuprio cdi: 'rocm' is not a library choice; accepted: hip, cuda, all" \
    "$? $(cat "$tmp/err")"
"$gpuprio" cdi --board-dir "$tmp/boards" --output "$tmp/nowhere" >/dev/null 2>"$tmp/err"
expect "--output to no directory: status 1" \
    "1 gpuprio cdi: cannot write in $tmp/nowhere: No such file or directory" "$? $(cat "$tmp/err")"
"$gpuprio" cdi --board-dir "/run/my boards" >/dev/null 2>"$tmp/err"
expect "a path with a space: status 1" 1 $?
grep -q "cannot write '/run/my boards' in a spec" "$tmp/err" && echo "ok: ... saying which path" ||
    { echo "FAIL: $(cat "$tmp/err")"; fails=$((fails + 1)); }
GPUPRIO_LIBRARY_DIR=$tmp/empty "$gpuprio" cdi --shim hip >/dev/null 2>"$tmp/err"
expect "no library: status 1" 1 $?
grep -q "cannot find libgpuprio-hip.so in $tmp/empty" "$tmp/err" && echo "ok: ... saying where it looked" ||
    { echo "FAIL: $(cat "$tmp/err")"; fails=$((fails + 1)); }
[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
