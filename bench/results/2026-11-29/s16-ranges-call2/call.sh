#!/usr/bin/env bash
# Session 16, call 2: issue 33's first row, the vendor as hold's bar and
# range buckets raced at the aligned sizes they serve (--vendor time).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r2
RANGE_EXACT=1 bench/range_scan.sh $d 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time > $OUT/r2.log 2>&1
gzip -c $d/range.db > $OUT/r2.db.gz; rm -f $d/range.db
tar czf $OUT/r2.tgz -C $OUT r2 && rm -rf $d
cat $OUT/gpu.txt; tail -12 $OUT/r2.log
