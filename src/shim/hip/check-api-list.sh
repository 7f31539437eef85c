#!/bin/sh
# check-api-list.sh DEF TSV
#
# Checks the shim's list of intercepted HIP functions (src/shim/hip/hip_api.def) against
# versions/hip-version-nodes.tsv: every name in DEF must be a symbol of TSV's first column that
# has a version node (third column, or the second where the third is "-"), so that the version
# script can export it in the node the real runtime uses. Also fails on a name listed twice and
# on a DEF without entries. Prints each offending name and exits 1; exits 0 when all is well.
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 DEF TSV" >&2
    exit 2
fi
def=$1
tsv=$2
for f in "$def" "$tsv"; do
    if [ ! -r "$f" ]; then
        echo "$0: cannot read $f" >&2
        exit 2
    fi
done

awk -F '\t' -v def="$def" '
    FNR == NR {                       # TSV: symbols with a node
        if ($0 ~ /^#/ || NF < 3) next
        split($3, up, " ")
        node = up[1]
        if (node == "-") node = $2
        if (node ~ /^hip_[0-9]+\.[0-9]+$/) known[$1] = 1
        next
    }
    /^HIP_API\(/ {                    # DEF: entries start a line with HIP_API(name,
        name = $0
        sub(/^HIP_API\([ \t]*/, "", name)
        sub(/[ \t]*,.*$/, "", name)
        n++
        if (name in seen) {
            print def ": " name ": listed twice" > "/dev/stderr"
            bad = 1
        }
        seen[name] = 1
        if (!(name in known)) {
            print def ": " name ": not in the TSV with a version node" > "/dev/stderr"
            bad = 1
        }
    }
    END {
        if (n == 0) {
            print def ": no HIP_API entries" > "/dev/stderr"
            bad = 1
        }
        exit bad
    }' "$tsv" "$def"
