#!/bin/sh
# default.sh - gpuprio-demo's default run (its headline) with short windows (--seconds 0.3
# --rounds 2; the rows are the same as with the default 3 x 1 s, only fewer requests each): it
# succeeds, its whole output (stdout and stderr) takes at most 40 lines, names every headline row
# and the picture's path, counts each client's requests over both rounds (stalled of 60), and
# the picture is there, well-formed XML (Python's parser), an SVG, with one curve (a path of
# class "cdf", id cdf-ROW) for each row the picture draws, in the rows' order: each one the table
# gives figures for (on a busy machine a row can be "-", stalled by the host; it is then named in
# the picture's legend instead). What the numbers are is not checked: they are timings of host
# threads.
#
#   default.sh GPUPRIO_DEMO
set -u
demo=$1
. "$(dirname "$0")/../tools/expect.sh"
sandbox demo
trap 'sandbox_cleanup' EXIT
trap 'exit 1' HUP INT TERM
svg=$tmp/latency.svg
out=$tmp/out.txt

"$demo" --seconds 0.3 --rounds 2 --svg "$svg" >"$out" 2>&1
expect "the demo's exit status" 0 $?
cat "$out"
lines=$(wc -l <"$out")
expect "at most 40 lines of output ($lines)" yes "$([ "$lines" -le 40 ] && echo yes || echo no)"
for row in "LC alone" "LC + BE, native" "LC + BE, gpuprio" "3 groups, native: LC (high)" \
    "3 groups, gpuprio: LC (high)" "LC + BE, 2 processes, native" \
    "LC + BE, 2 processes, gpuprio" "LC alone, 8 CUs" "LC + wide 8 ms BE, native" \
    "LC + wide 8 ms BE, gpuprio + 25% CUs"; do
    expect "a line of the table for $row, its requests over both rounds" 1 \
        "$(grep -c "^$row  *[0-9-].* [0-9]*/60$" "$out")"
done
expect "two LC2 lines (3 groups)" 2 "$(grep -c "^  *LC2 (normal)  *[0-9-].* [0-9]*/60$" "$out")"
expect "the picture's path is printed" 1 "$(grep -cxF "Picture (LC latency, empirical CDF): $svg" "$out")"
expect "the picture is there" yes "$([ -s "$svg" ] && echo yes || echo no)"

# The rows the picture draws, less those the table gives no figures for.
want=
for curve in "lc-alone:LC alone" "lc-1be:LC + BE, native" "lc-1be-gp:LC + BE, gpuprio" \
    "lc-1be-2p:LC + BE, 2 processes, native" "lc-1be-2p-gp:LC + BE, 2 processes, gpuprio"; do
    if grep -q "^${curve#*:}  *[0-9]" "$out"; then
        want="$want${want:+ }cdf-${curve%%:*}"
    else
        expect "the legend says why ${curve#*:} is not drawn" 1 \
            "$(grep -c ">${curve#*:}: not drawn, the host stalled" "$svg")"
    fi
done
if command -v python3 >/dev/null 2>&1; then
    # Parsing fails on anything that is not well-formed XML; the ids are those of the curves.
    got=$(python3 -c '
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
root = d.documentElement
if root.tagName != "svg" or root.getAttribute("xmlns") != "http://www.w3.org/2000/svg":
    sys.exit("not an SVG root element: " + root.tagName)
if d.getElementsByTagName("script"):
    sys.exit("the picture has a script")
print(" ".join(p.getAttribute("id") for p in d.getElementsByTagName("path")
               if p.getAttribute("class") == "cdf"))' "$svg" 2>&1)
    expect "well-formed SVG, one curve per drawn row" "$want" "$got"
else
    echo "skip: no python3, so the picture is not parsed as XML (scripts/install-deps.sh installs it)"
    got=$(grep -o 'class="cdf" id="[^"]*"' "$svg" | sed 's/.*id="\(.*\)"/\1/' | tr '\n' ' ')
    expect "one curve per drawn row" "${want:+$want }" "$got"
fi
expect "no reference outside the file" 0 "$(grep -c 'href\|url(' "$svg")"

# --help says how to read the table and the picture, and lists the picture's options.
help=$("$demo" --help 2>&1)
for word in "P99/alone" "load" "stalled" "picture" "--all" "--svg PATH" "--no-svg" "--rounds N"; do
    expect "--help mentions $word" yes "$(printf '%s\n' "$help" | grep -qF -- "$word" && echo yes || echo no)"
done
[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
