#!/bin/sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > $O/plan6.log 2>&1
export NO_LAUNCH=1 NO_THREADS=1 NO_CALL=1 NO_STREAMPRIO=1 GPUPRIO_ROWS=G100 LOAD=infer MODES=graph THIRD=train
( while sleep 10; do cp /tmp/w/three-mps/colocation.txt $O/three-mps.txt 2>/dev/null; ls /tmp/w/three-mps/coloc/ > $O/rows.txt 2>/dev/null; done ) &
cp=$!
date
timeout 520 sh scripts/with-mps.sh sh bench/gpu/run.sh /tmp/w/three-mps > /dev/null 2>&1
echo "status $?"; date
kill $cp
cp /tmp/w/three-mps/colocation.txt $O/three-mps.txt
for f in /tmp/w/three-mps/coloc/*/load2.json; do python3 -c "import json; d=json.load(open('$f')); print('$f', {k: d[k] for k in d if not isinstance(d[k], (list, dict))})" 2>&1 | head -c 600; echo; done
for f in /tmp/w/three-mps/coloc/*/*.log; do echo "== $f"; tail -3 $f; done 2>/dev/null | tail -40
echo quit | nvidia-cuda-mps-control 2>/dev/null
