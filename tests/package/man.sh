#!/bin/sh
# man.sh - package.man: the man page generated from docs/cli.md (cmake/md2man.awk) renders
# without a warning from groff or man (the checks lintian makes), keeps the structure of the
# Markdown (every ## a section, every ### a subsection, every fenced block a literal block), has a
# NAME line whatis can read, names the version the command prints, and has a subsection for each
# command `gpuprio --help` lists, read from the help text when the test runs, so a command added
# to the tool without its part of the manual fails here.
#
# Then the converter on tests/package/md2man-sample.md, which uses every construct it knows and
# the characters roff would otherwise take for requests or escapes: no warnings, and the text
# comes out as written.
#
#   man.sh GPUPRIO PAGE.1.gz CLI.md AWK MD2MAN.awk SAMPLE.md
#
# Exits 77 (skipped) where groff is not installed (scripts/install-deps.sh installs man-db,
# which brings it).
set -u
gpuprio=$1 page=$2 md=$3 awk=$4 md2man=$5 sample=$6
. "$(dirname "$0")/../tools/expect.sh"

command -v groff >/dev/null 2>&1 || { echo "skipped: groff is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -f "$page" ] || { echo "FAIL: $page was not built"; exit 1; }
gzip -dc "$page" >"$tmp/page.1" || { echo "FAIL: $page is not gzip"; exit 1; }
roff=$tmp/page.1

# groff's own warnings, all of them (-ww), with tbl and the input encoding as man runs them. Not
# -z: some warnings (tbl's "text block will not fit on one page") come only when output is made.
warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -t -k "$roff" 2>&1 >/dev/null)
expect "groff -ww: no warnings" "" "$warnings"
# What lintian's manpage check runs (man-db's man, at 80 columns).
if command -v man >/dev/null 2>&1; then
    warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" \
        2>&1 >/dev/null)
    expect "man --warnings: no warnings" "" "$warnings"
    text=$(LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat PAGER=cat man -l "$page" 2>&1)
    case "$text" in
    *"NAME"*"gpuprio - "*"SYNOPSIS"*) echo "ok: man -l renders NAME and SYNOPSIS" ;;
    *) echo "FAIL: man -l: $(printf '%s\n' "$text" | head -8)"; fails=$((fails + 1)) ;;
    esac
else
    echo "skipped: man is not installed (man --warnings, man -l)"
fi
# whatis and apropos read the NAME line through lexgrog.
if command -v lexgrog >/dev/null 2>&1; then
    w=$(lexgrog "$page" 2>&1)
    case "$w" in
    *'"gpuprio - '*) echo "ok: lexgrog: ${w#*: }" ;;
    *) echo "FAIL: lexgrog cannot read the NAME line: $w"; fails=$((fails + 1)) ;;
    esac
fi

# The title line names the command's version.
version=$("$gpuprio" --version | sed 's/^gpuprio //')
th=$(grep '^\.TH ' "$roff")
case "$th" in
*"\"gpuprio $version\""*) echo "ok: .TH names gpuprio $version" ;;
*) echo "FAIL: .TH does not name gpuprio $version: $th"; fails=$((fails + 1)) ;;
esac

# The converter kept the Markdown's structure.
count() { # PATTERN FILE
    grep -c -- "$1" "$2"
}
expect "every ## heading is a .SH" "$(count '^## ' "$md")" "$(count '^\.SH ' "$roff")"
expect "every ### heading is a .SS" "$(count '^### ' "$md")" "$(count '^\.SS ' "$roff")"
expect "every fenced block is a .nf block" "$(($(count '^ *```' "$md") / 2))" \
    "$(count '^\.nf$' "$roff")"
for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
    grep -q "^\.SH \"$s\"\$" "$roff" && echo "ok: section $s" ||
        { echo "FAIL: no section $s"; fails=$((fails + 1)); }
done

# Each command of `gpuprio --help` (the lines under "Commands:" that start with two spaces and a
# name) has a subsection "gpuprio CMD". `help` is documented under SYNOPSIS and EXIT STATUS.
cmds=$("$gpuprio" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
                                on && /^  [a-z]/ { print $1 }')
[ -n "$cmds" ] || { echo "FAIL: no commands found in gpuprio --help"; fails=$((fails + 1)); }
for c in $cmds; do
    [ "$c" = help ] && continue
    grep -q "^\.SS \"gpuprio $c\"\$" "$roff" && echo "ok: gpuprio $c has a section" ||
        { echo "FAIL: gpuprio --help lists '$c', but the man page has no section 'gpuprio $c'" \
            "(docs/cli.md: ### gpuprio $c)"; fails=$((fails + 1)); }
done

# The sample page.
"$awk" -v version=9.9.9 -v source=md2man-sample.md -f "$md2man" "$sample" >"$tmp/sample.1"
expect "sample: the first line asks for tbl" "'\\\" t" "$(head -n 1 "$tmp/sample.1")"
expect "sample: groff -ww: no warnings" "" \
    "$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -t -k "$tmp/sample.1" 2>&1 >/dev/null)"
# Plain ASCII, lines wide enough that no phrase checked is broken.
LC_ALL=C.UTF-8 groff -man -Tascii -t -k -rLL=200n -P-cbou "$tmp/sample.1" >"$tmp/sample.txt" 2>&1
while IFS= read -r phrase; do
    # printf, not echo: the phrases hold backslashes.
    if grep -qF -- "$phrase" "$tmp/sample.txt"; then
        printf 'ok: sample: %s\n' "$phrase"
    else
        printf "FAIL: sample: no '%s' in:\n" "$phrase"
        cat "$tmp/sample.txt"
        fails=$((fails + 1))
    fi
done <<'PHRASES'
SAMPLE(1)
sample - a page that uses every construct
sample [-x] [--long-option=VALUE] 'quoted' "double" \back\slash ^caret ~tilde `tick`
           .starts with a dot
           'starts with a quote
with code that spans two lines, bold, emphasis, a link <https://example.org/x-y> and a backslash \ and an escaped *star*. Negative -10, option -x,
a dash - here. .a line of text that starts with a dot 'and one with a quote, and a code span with a ` backtick in it.
       .A paragraph that starts with a dot, and one line 'that starts with a quote.
       'A paragraph that starts with a quote.
an item continued on an indented line
  and a second paragraph in it
   sample sub
the first cell is empty
.dot   'quote
.a last cell that starts with a dot
       sample_a_metric_name_that_is_long_total
              second column that is wide too: counter; third: labels
              what it counts
       -x, --long-option=VALUE
              A second paragraph of the definition.
       A term on two lines
              Its definition.
sample 9.9.9
PHRASES

[ $fails = 0 ] && echo "all passed" || echo "$fails FAILED"
[ $fails = 0 ]
