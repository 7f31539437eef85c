#!/bin/sh
# check-locks.sh SOURCE_DIR: the lock hierarchy is whole. Every mutex and reader-writer lock of
# the library is taken through gp_lockrank.h's ranked helpers (a raw pthread lock call is allowed
# only in a file that ranks it by hand with gp_rank_acquire), so that debug builds check its
# order; and docs/design.md's lock table lists exactly the ranks of GP_LOCK_RANKS, in their order.
set -eu
src=$1
status=0
raw='pthread_(mutex_(lock|trylock|timedlock)|rwlock_(rd|wr|tryrd|trywr|timedrd|timedwr)lock)\('
for f in $(grep -rlE "$raw" "$src/src" --include='*.c' --include='*.h'); do
    case $f in */src/util/gp_lockrank.h) continue ;; esac
    if ! grep -q 'gp_rank_acquire(' "$f"; then
        grep -nE "$raw" "$f" | sed "s|^|$f:|;s|$| (not ranked: use gp_mutex_lock or gp_rwlock_*)|"
        status=1
    fi
done
# The ranks, lowest first, as the header lists them ...
ranks=$(sed -n 's/^ *X(\([A-Z_]*\), ".*/\1/p' "$src/src/util/gp_lockrank.h" | tr '\n' ' ')
# ... and the table's rows, "| N | `NAME` | ...".
rows=$(sed -n 's/^| \([0-9]*\) | `\([A-Z_]*\)` |.*/\1 \2/p' "$src/docs/design.md")
table=$(echo "$rows" | awk '{printf "%s ", $2}')
numbers=$(echo "$rows" | awk '{printf "%s ", $1}')
expected=$(echo "$ranks" | awk '{for (i = 1; i <= NF; i++) printf "%d ", i}')
if [ -z "$ranks" ] || [ "$ranks" != "$table" ] || [ "$numbers" != "$expected" ]; then
    echo "docs/design.md's lock table does not list the ranks of src/util/gp_lockrank.h in order:"
    echo "  ranks: $ranks"
    echo "  table: $table (numbered $numbers)"
    status=1
fi
[ $status = 0 ] && echo "every lock ranked; the table lists the $(echo "$ranks" | wc -w) ranks"
exit $status
