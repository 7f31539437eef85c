# expect.sh - sourced by the gpuprio command's test scripts (run.sh, top_set.sh, install.sh):
# one check that counts failures in $fails. POSIX sh.
#
#   expect WHAT EXPECTED ACTUAL    prints "ok: WHAT", or a FAIL line naming both values
#   show_stderr DIR NAME...        prints DIR/NAME.err of each NAME whose file is not empty
fails=0

expect() { # WHAT EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then
        echo "ok: $1"
    else
        echo "FAIL: $1: expected '$2', got '$3'"
        fails=$((fails + 1))
    fi
}

show_stderr() { # DIR NAME...
    dir=$1
    shift
    for name in "$@"; do
        if [ -s "$dir/$name.err" ]; then
            echo "$name's stderr:"
            cat "$dir/$name.err"
        fi
    done
}
