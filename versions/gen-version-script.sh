#!/bin/sh
# gen-version-script.sh TSV [EXTRA_NODE EXTRA_PATTERN...] > FILE.map
#
# Writes a GNU ld version script that puts every symbol of TSV (versions/hip-version-nodes.tsv)
# into the ELF version node the upstream HIP runtime gives it (third column; the Debian column
# where upstream has none), with the nodes chained in version order as libamdhip64 chains them,
# and hides everything else. Names the library does not define are ignored by the linker, so one
# script serves every library that exports a subset of HIP. EXTRA_NODE with its patterns adds one
# more node, for a library's own API.
set -eu
tsv=$1
shift
extra_node=${1-}
[ $# -gt 0 ] && shift
awk -F '\t' -v extra_node="$extra_node" -v extra="$*" '
    /^#/ || NF < 3 { next }
    {
        split($3, up, " ")
        node = up[1]
        if (node == "-") node = $2
        if (node !~ /^hip_[0-9]+\.[0-9]+$/) { print "bad node for " $1 ": " $0 > "/dev/stderr"; exit 1 }
        syms[node] = syms[node] "    " $1 ";\n"
        split(substr(node, 5), v, ".")
        key[node] = sprintf("%03d%03d", v[1], v[2])
    }
    END {
        n = 0
        for (k in key) order[++n] = k
        for (i = 2; i <= n; i++)          # insertion sort by version: awk has no portable sort
            for (j = i; j > 1 && key[order[j]] < key[order[j - 1]]; j--) {
                t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
            }
        prev = ""
        for (i = 1; i <= n; i++) {
            printf "%s {\n  global:\n%s", order[i], syms[order[i]]
            if (i == 1) printf "  local:\n    *;\n"
            printf "}%s;\n", (prev == "" ? "" : " " prev)
            prev = order[i]
        }
        if (extra_node != "") {
            printf "%s {\n  global:\n", extra_node
            m = split(extra, pats, " ")
            for (i = 1; i <= m; i++) printf "    %s;\n", pats[i]
            printf "};\n"
        }
    }' "$tsv"
