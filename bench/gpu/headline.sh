#!/bin/sh
# bench/gpu/headline.sh OUTDIR [LOADS]: the README's headline rows on an NVIDIA GPU: for each load
# (default "spin infer train ttrain"), the BERT-base CUDA-graph client at 40 requests/s alone, next
# to the load in another process natively, and under gpuprio's defaults (client high, load low),
# REPEAT times each (default 2) so that every figure comes with its spread. One bench/gpu/run.sh
# per load (its rows 00-alone-*, 10-2proc-graph-native*, 12-2proc-graph-gpuprio-D*); every
# table goes to OUTDIR/summary.txt, the rows' JSON to OUTDIR/rows.tar.gz. A load takes about
# (2 + 2 x REPEAT) x 30 s. The board directory is the library's default unless GPUPRIO_BOARD_DIR
# says otherwise (measure a disk directory with GPUPRIO_BOARD_DIR=/var/tmp/gpuprio-boards).
# GPUPRIO_COMMIT names the code measured where the copy's git metadata cannot (the lent machine's
# copy of the tree carries a stale .git: pass GPUPRIO_COMMIT=$(git rev-parse --short HEAD)).
set -u
out=${1:?usage: headline.sh OUTDIR [LOADS]}
loads=${2:-spin infer train ttrain}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
{
    echo "commit ${GPUPRIO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (modified)')}, $(date -u '+%Y-%m-%d %H:%M UTC')"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
    echo "board directory: ${GPUPRIO_BOARD_DIR:-the default}; REPEAT=${REPEAT:-2}"
} >"$out/summary.txt"
for load in $loads; do
    start=$(date +%s)
    LOAD=$load REPEAT=${REPEAT:-2} MODES=graph GPUPRIO_ROWS=D NO_STREAMPRIO=1 NO_LAUNCH=1 \
        NO_THREADS=1 NO_CALL=1 sh bench/gpu/run.sh "$out/$load" >"$out/$load.log" 2>&1
    {
        echo
        echo "== LOAD=$load ($(($(date +%s) - start)) s)"
        cat "$out/$load/colocation.txt"
    } >>"$out/summary.txt"
done
tar -czf "$out/rows.tar.gz" -C "$out" $(for l in $loads; do echo "$l/coloc"; done) 2>/dev/null
cat "$out/summary.txt"
