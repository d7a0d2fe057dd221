#!/usr/bin/env bash
# Call 32: issue 33's second row: m 256..8192 in steps of 61 at 4096x4096 and 14336x4096 (exact weights),
# own kernels (vendor off) then the same registry with vendor parts (vendor win), each scanned against cuBLASLt.
set -u
export SCAN_ARGS="--step 61" RANGE_EXACT=1
timeout 400 bench/range_scan.sh $OUT/off 4096x4096,14336x4096 256:8192 8 220s off
mkdir -p $OUT/win && cp $OUT/off/range.db $OUT/win/range.db
timeout 170 bench/range_scan.sh $OUT/win 4096x4096,14336x4096 256:8192 8 100s win
for d in off win; do echo "== $d"; sed -n '1,5p' $OUT/$d/range_table.txt; grep -c HOLE $OUT/$d/range_table.txt; done
tar czf $OUT/row2.tgz -C $OUT off/range.yaml off/sweep.txt off/sweep.err off/scan.txt off/scan.err off/range_table.txt win/sweep.txt win/sweep.err win/scan.txt win/scan.err win/range_table.txt; rm -rf $OUT/off $OUT/win
