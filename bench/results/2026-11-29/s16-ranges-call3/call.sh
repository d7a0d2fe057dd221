#!/usr/bin/env bash
# Session 16, call 3: issue 33's first row, the vendor as hold's bar and
# range buckets raced at the aligned sizes they serve, split where races flip (--vendor time).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r3
RANGE_EXACT=1 bench/range_scan.sh $d 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time > $OUT/r3.log 2>&1
gzip -c $d/range.db > $OUT/r3.db.gz; rm -f $d/range.db
tar czf $OUT/r3.tgz -C $OUT r3 && rm -rf $d
cat $OUT/gpu.txt; tail -12 $OUT/r3.log
