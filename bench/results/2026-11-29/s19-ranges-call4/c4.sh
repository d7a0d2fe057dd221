#!/usr/bin/env bash
# Session 19, call 4: issue 33 first row (bench/run ranges command), one sweep, with swapab mid-size default (fewer rows computed on a tie)
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r4
t0=$(date +%s)
RANGE_EXACT=1 timeout 450 bench/range_scan.sh $d 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time > $OUT/r4.log 2>&1
echo "ranges exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r4.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r4.tgz -C $OUT r4 && rm -rf $d
cat $OUT/gpu.txt; tail -12 $OUT/r4.log
