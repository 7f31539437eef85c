#!/bin/sh
# check-exports.sh LIB TSV [EXTRA_NODE EXTRA_PREFIX* [EXACT...]]
#
# Fails unless every symbol LIB exports is either a HIP symbol in the ELF version node that TSV
# (versions/hip-version-nodes.tsv) gives it upstream (the Debian node where upstream has none), as
# the default version, a name with EXTRA_PREFIX in EXTRA_NODE, or one of the EXACT symbols as
# readelf prints them (name@@NODE or name@NODE), each of which must be present. A HIP symbol in the wrong node
# is silently bypassed by applications, so this is checked on every build.
set -eu
lib=$1 tsv=$2 extra_node=${3-} extra_prefix=${4-}
extra_prefix=${extra_prefix%\*}
[ $# -gt 4 ] && shift 4 || shift $#
exact="$*"
command -v readelf >/dev/null || { echo "check-exports: readelf not found (binutils)" >&2; exit 2; }
readelf --dyn-syms -W "$lib" | awk -v tsv="$tsv" -v extra_node="$extra_node" \
                                    -v extra_prefix="$extra_prefix" -v exact="$exact" '
    BEGIN {
        FS = "\t"
        while ((getline line < tsv) > 0) {
            if (line ~ /^#/) continue
            split(line, f, "\t"); split(f[3], up, " ")
            node = up[1] == "-" ? f[2] : up[1]
            if (f[1] ~ /\*$/) prefix[substr(f[1], 1, length(f[1]) - 1)] = node
            else want[f[1]] = node
        }
        FS = " "
        n_exact = split(exact, ex, " ")
        for (i = 1; i <= n_exact; i++) allowed[ex[i]] = 0
    }
    $1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && ($5 == "GLOBAL" || $5 == "WEAK") {
        sym = $8; total++
        if (sym in allowed) { allowed[sym]++; next }
        if (index(sym, "@@") == 0) { print "not a default-version export: " sym; bad++; next }
        split(sym, p, "@@"); name = p[1]; node = p[2]
        expect = ""
        if (name in want) expect = want[name]
        else for (pre in prefix) if (index(name, pre) == 1) expect = prefix[pre]
        if (expect == "" && extra_prefix != "" && index(name, extra_prefix) == 1) expect = extra_node
        if (expect == "") { print "unexpected export: " sym; bad++ }
        else if (node != expect) { print "wrong node: " name "@@" node ", expected " expect; bad++ }
    }
    END {
        for (s in allowed) if (!allowed[s]) { print "missing export: " s; bad++ }
        if (total == 0) { print "no exports found"; exit 1 }
        printf "%d exports checked, %d wrong\n", total, bad
        exit bad > 0
    }'
