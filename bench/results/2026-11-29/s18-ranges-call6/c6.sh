#!/usr/bin/env bash
# Session 18, call 6: issue 33's first row (bench/run ranges' command) with parts that tie or trail the vendor searched
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r6
t0=$(date +%s)
RANGE_EXACT=1 timeout 450 bench/range_scan.sh $d 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time > $OUT/r6.log 2>&1
echo "ranges exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r6.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r6.tgz -C $OUT r6 && rm -rf $d
cat $OUT/gpu.txt; tail -12 $OUT/r6.log
