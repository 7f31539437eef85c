# lib.sh - sourced by the binding tests' runners (override.sh, two_runtimes.sh, exec.sh): runs
# cases of a test program and checks what the user would see, its exit status and the lines
# gpuprio writes on stderr (they start with "gpuprio:"), since those are the shim's whole
# interface when it cannot bind. POSIX sh.
#
#   run_case NAME COMMAND...    runs COMMAND, stdout and stderr kept apart
#   expect_status N             its exit status is N
#   expect_gpuprio_lines N      gpuprio wrote exactly N lines on stderr...
#   expect_gpuprio_says TEXT    ... one of which contains TEXT
#   expect_stderr_only_gpuprio  nothing else is on stderr
#   finish                      summary; the runner's status
# A failed case prints its stdout and stderr.
set -u
unset GPUPRIO_HIP_LIBRARY GPUPRIO_LOG
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cases=0 failures=0 case_name='' case_failed=0

end_case() {
    [ -n "$case_name" ] || return 0
    if [ "$case_failed" = 1 ]; then
        failures=$((failures + 1))
        echo "--- stdout of [$case_name]:"
        cat "$tmp/out"
        echo "--- stderr of [$case_name]:"
        cat "$tmp/err"
        echo "---"
    else
        echo "ok [$case_name]"
    fi
    case_name=''
}

run_case() { # NAME COMMAND...
    end_case
    case_name=$1
    shift
    cases=$((cases + 1))
    case_failed=0
    "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
}

fail() {
    echo "FAIL [$case_name]: $*"
    case_failed=1
}

expect_status() {
    [ "$status" = "$1" ] || fail "exit status $status, expected $1"
}

expect_gpuprio_lines() {
    n=$(grep -c '^gpuprio:' "$tmp/err")
    [ "$n" = "$1" ] || fail "$n line(s) from gpuprio on stderr, expected $1"
}

expect_gpuprio_says() {
    grep '^gpuprio:' "$tmp/err" | grep -qF -- "$1" || fail "no line from gpuprio says '$1'"
}

expect_stderr_only_gpuprio() {
    n=$(grep -vc '^gpuprio:' "$tmp/err")
    [ "$n" = 0 ] || fail "$n other line(s) on stderr"
}

finish() {
    end_case
    echo "$cases cases, $failures failed"
    [ "$failures" = 0 ]
}
