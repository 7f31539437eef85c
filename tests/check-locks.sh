#!/bin/sh
# check-locks.sh SOURCE_DIR: the lock hierarchy is whole. Every mutex and reader-writer lock of
# the library is taken through gp_lockrank.h's ranked helpers, so that debug builds check its
# order: a raw pthread lock call is allowed only on a lock of hand_ranked below, in its file, which
# ranks it by hand with gp_rank_acquire. The check is per call, not per file: exempting every
# file that calls gp_rank_acquire let a later unranked lock in such a file go unnoticed. And
# docs/design.md's lock table lists exactly the ranks of GP_LOCK_RANKS, in their order.
set -eu
src=$1
status=0
# FILE:LOCK, each the one lock its file takes raw (xqueue.c's scheduling lock: trylock, then a
# spin, for an activating thread; docs/design.md, "Locks").
hand_ranked='src/preempt/xqueue.c:sched_mu'
raw='pthread_(mutex_(lock|trylock|timedlock)|rwlock_(rd|wr|tryrd|trywr|timedrd|timedwr)lock)\('
for entry in $hand_ranked; do
    if ! grep -q 'gp_rank_acquire(' "$src/${entry%%:*}"; then
        echo "$src/${entry%%:*}: takes ${entry#*:} raw but never ranks it (gp_rank_acquire)"
        status=1
    fi
done
# Each raw call as FILE:LINE:CALL(ARGUMENT), one per call even where a line has two.
calls=$(cd "$src" && grep -rnoE "$raw[^)]*\)" src --include='*.c' --include='*.h' |
    grep -v '^src/util/gp_lockrank\.h:' || true)
bad=$(printf '%s\n' "$calls" | while IFS= read -r call; do
    [ -n "$call" ] || continue
    file=${call%%:*}
    lock=$(echo "$call" | sed -E 's/[^(]*\( *&? *([^ ,)]*).*/\1/')
    case " $hand_ranked " in
    *" $file:$lock "*) ;;
    *) echo "$src/$call (not ranked: use gp_mutex_lock or gp_rwlock_*, or rank it by hand and list it in tests/check-locks.sh)" ;;
    esac
done)
if [ -n "$bad" ]; then
    echo "$bad"
    status=1
fi
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
