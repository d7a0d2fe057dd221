#!/usr/bin/env bash
# Session 20, call 3: compute-sanitizer memcheck over run-time-width swapped kernels (wstep 8/16) at ragged shapes; then 4096^2 at m 1025..4095 (two buckets) with every family and a 150 s sweep, scanned at step 61 against cuBLASLt
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 bench/narrow.py $OUT/ns wgmma .gpu/s20/san.lua wgmma .gpu/s20/san_w.lua wgmma .gpu/s20/s_run.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/ns SANITIZE_SPEC=.gpu/s20/san3.yaml SANITIZE_ARGS="--vendor off" timeout 130 tests/gpu/sanitize.sh $OUT/san
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"
rm -rf $OUT/ns
t0=$(date +%s)
SCAN_ARGS="--step 61" RANGE_EXACT=1 timeout 300 bench/range_scan.sh $OUT/r 4096x4096 1025:4095 8 150s time > $OUT/r.log 2>&1
echo "range exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $OUT/r/range.db > $OUT/r.db.gz; rm -f $OUT/r/range.db*
tar czf $OUT/res.tgz -C $OUT r san && rm -rf $OUT/r $OUT/san
cat $OUT/r.log | tail -6
