#!/bin/sh
# Throwaway device plan: the eager client in two processes, and the graph client in three, with
# MPS ("mps") or without ("nomps").
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
how=$1
exec > $O/plan5-$how.log 2>&1
w() { if [ $how = mps ]; then sh scripts/with-mps.sh "$@"; else "$@"; fi; }
export NO_LAUNCH=1 NO_THREADS=1 NO_CALL=1 NO_STREAMPRIO=1 GPUPRIO_ROWS=G100 LOAD=infer
date
MODES=eager w sh bench/gpu/run.sh /tmp/w/eager-$how > /dev/null 2>&1
cp /tmp/w/eager-$how/colocation.txt $O/eager-$how.txt
date
MODES=graph THIRD=train w sh bench/gpu/run.sh /tmp/w/three-$how > /dev/null 2>&1
cp /tmp/w/three-$how/colocation.txt $O/three-$how.txt
for f in /tmp/w/three-$how/coloc/*/load2.json; do echo "$f: $(python3 -c "import json,sys; d=json.load(open('$f')); print({k: d[k] for k in d if not isinstance(d[k], list)})" 2>&1 | head -c 400)"; done
date
pgrep -af '^nvidia-cuda-mps' || echo "no MPS daemon left"
echo "== eager"; cat $O/eager-$how.txt; echo "== three"; cat $O/three-$how.txt
