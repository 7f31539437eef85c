#!/bin/sh
# options.sh - `gpuprio run` and the library accept exactly the same values, and `gpuprio run
# --help` tells which. Both come from the options table (src/util/gp_options.def); this shows it
# from the outside, end to end: the command's exit status (0, or 125 for a refused value) against
# the preloaded library's warning for the same value given in the environment.
#
#   options.sh GPUPRIO OPT_PROBES TOOLS_CHILD HIP_SHIM
#
# For each option of `gpuprio run` (OPT_PROBES lists them and values around their bounds and
# words, with the table parser's verdict):
#   - every probe value: the parser, the command and the library all accept it, or all refuse it;
#     and each option has values of both kinds;
#   - what --help says the option accepts: its range's ends are accepted and one past each is
#     refused, its words are accepted, by both the command and the library.
set -u
gpuprio=$1 probes=$2 child=$3 shim=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in $("$probes" names); do
    unset "$v"
done
unset LD_PRELOAD
tab=$(printf '\t')

. "$(dirname "$0")/expect.sh"

# The command's verdict on --FLAG=VALUE: ok (it ran COMMAND) or bad (125, nothing run).
tool_verdict() { # FLAG VALUE
    "$gpuprio" run --shim hip "--$1=$2" -- "$child" exit 0 >/dev/null 2>"$tmp/err"
    rc=$?
    case $rc in
    0) echo ok ;;
    125) echo bad ;;
    *) echo "status $rc" ;;
    esac
}

# The library's verdict on VARIABLE=VALUE: bad when it warns about the variable, which it does at
# the process's first GPU call (to a runtime it cannot find here: one error line besides).
lib_verdict() { # VARIABLE VALUE
    env "$1=$2" GPUPRIO_HIP_LIBRARY=/nonexistent/libamdhip64.so.6 LD_PRELOAD="$shim" "$child" \
        gpu-call >/dev/null 2>"$tmp/err"
    if grep -q "^gpuprio: warn: $1='" "$tmp/err"; then echo bad; else echo ok; fi
}

both() { # WHAT EXPECTED FLAG VARIABLE VALUE
    expect "$1: gpuprio run --$3='$5'" "$2" "$(tool_verdict "$3" "$5")"
    expect "$1: $4='$5' for the library" "$2" "$(lib_verdict "$4" "$5")"
}

"$probes" >"$tmp/probes" || exit 2
while IFS=$tab read -r kind flag var verdict esc; do
    [ "$kind" = probe ] || continue
    value=$(printf "$esc"; echo x) # (x: keeps trailing white space)
    both "table" "$verdict" "$flag" "$var" "${value%x}"
    echo "$var $verdict" >>"$tmp/verdicts"
done <"$tmp/probes"
while IFS=$tab read -r kind flag metavar var; do
    [ "$kind" = option ] || continue
    for v in ok bad; do
        expect "$var: some values $v" yes "$(grep -q "^$var $v\$" "$tmp/verdicts" && echo yes)"
    done
done <"$tmp/probes"

# What --help says, one line: each option's "accepted: ..." up to its default or the next option.
help=$("$gpuprio" run --help | tr '\n' ' ' | tr -s ' ')
while IFS=$tab read -r kind flag metavar var; do
    [ "$kind" = option ] || continue
    case $help in
    *" --$flag $metavar "*) expect "--help lists --$flag $metavar" yes yes ;;
    *) expect "--help lists --$flag $metavar" yes no ;;
    esac
    said=$(printf '%s\n' "$help" | sed -n "s/.*($var); accepted: //p" |
        sed 's/ -[-a-z].*//; s/; default .*//')
    expect "--help says what --$flag accepts" yes "$([ -n "$said" ] && echo yes)"
    range=$(printf '%s\n' "$said" |
        sed -n 's/.*from \(-\{0,1\}[0-9][0-9]*\) to \(-\{0,1\}[0-9][0-9]*\).*/\1 \2/p')
    if [ -n "$range" ]; then
        lo=${range% *} hi=${range#* }
        both "--help: from $lo" ok "$flag" "$var" "$lo"
        both "--help: to $hi" ok "$flag" "$var" "$hi"
        both "--help: below $lo" bad "$flag" "$var" "$((lo - 1))"
        both "--help: above $hi" bad "$flag" "$var" "$((hi + 1))"
    fi
    # The words: all of a choice's, or those before ", or an integer ...".
    case $said in
    *", or "*) words=${said%%, or *} ;;
    *from*) words= ;;
    *) words=$said ;;
    esac
    printf '%s\n' "$words" | tr ',' '\n' | sed 's/^ *//' >"$tmp/words"
    while read -r w; do
        [ -z "$w" ] || both "--help: word" ok "$flag" "$var" "$w"
    done <"$tmp/words"
done <"$tmp/probes"

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
