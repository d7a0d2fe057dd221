#!/usr/bin/env bash
# Session 19, call 9: issue 33's second row at 4096^2 (m = 256..8192 step 61), own kernels, with wgmma_swap in the space: sweep (200 s) and scan against cuBLASLt
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r9
t0=$(date +%s)
SCAN_ARGS="--step 61" RANGE_EXACT=1 timeout 420 bench/range_scan.sh $d 4096x4096 256:8192 8 200s time > $OUT/r9.log 2>&1
echo "row2 exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r9.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r9.tgz -C $OUT r9 && rm -rf $d
cat $OUT/gpu.txt; tail -8 $OUT/r9.log
