#!/usr/bin/env bash
# Session 16, call 4: issue 33's second row, own kernels, with the vendor as hold's bar (--vendor time).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r4
SCAN_ARGS="--step 61" RANGE_EXACT=1 bench/range_scan.sh $d 4096x4096,14336x4096 256:8192 8 300s time > $OUT/r4.log 2>&1
gzip -c $d/range.db > $OUT/r4.db.gz; rm -f $d/range.db
tar czf $OUT/r4.tgz -C $OUT r4 && rm -rf $d
cat $OUT/gpu.txt; tail -8 $OUT/r4.log
