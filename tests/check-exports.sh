#!/bin/sh
# check-exports.sh LIB TSV [EXTRA_NODE EXTRA_PREFIX*]
#
# Fails unless every symbol LIB exports is either a HIP symbol in the ELF version node that TSV
# (versions/hip-version-nodes.tsv) gives it upstream (the Debian node where upstream has none), as
# the default version, or a name with EXTRA_PREFIX in EXTRA_NODE. A HIP symbol in the wrong node
# is silently bypassed by applications, so this is checked on every build.
set -eu
lib=$1 tsv=$2 extra_node=${3-} extra_prefix=${4-}
extra_prefix=${extra_prefix%\*}
command -v readelf >/dev/null || { echo "check-exports: readelf not found (binutils)" >&2; exit 2; }
readelf --dyn-syms -W "$lib" | awk -v tsv="$tsv" -v extra_node="$extra_node" \
                                    -v extra_prefix="$extra_prefix" '
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
    }
    $1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && ($5 == "GLOBAL" || $5 == "WEAK") {
        sym = $8; total++
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
        if (total == 0) { print "no exports found"; exit 1 }
        printf "%d exports checked, %d wrong\n", total, bad
        exit bad > 0
    }'
