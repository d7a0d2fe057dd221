#!/usr/bin/env bash
# Session 16, call 1: issue 33's first row with the vendor as hold's bar
# (--vendor time), the suite's other settings (8 evaluations, 400 s).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r1
RANGE_EXACT=1 bench/range_scan.sh $d 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time > $OUT/r1.log 2>&1
rm -f $d/range.db
tar czf $OUT/r1.tgz -C $OUT r1 && rm -rf $d
cat $OUT/gpu.txt $OUT/r1.log
