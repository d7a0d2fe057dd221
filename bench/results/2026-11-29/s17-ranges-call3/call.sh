#!/usr/bin/env bash
# Session 17, call 3: compute-sanitizer over wgmma's widths 112/224 and A's
# box of m rows (a narrowed space, odd n and k, m = 5, 77, 200), then issue
# 33's first row (bench/run ranges' command) with them.
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
python3 bench/narrow.py /tmp/h2 wgmma .gpu/s17/space2.lua || exit 1
mkdir -p /tmp/h2/build && cp build/aitune /tmp/h2/build/
t0=$(date +%s)
AITUNE_HOME=/tmp/h2 SANITIZE_SPEC=.gpu/s17/san.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san > $OUT/san.log 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.log
d=$OUT/r3
t0=$(date +%s)
RANGE_EXACT=1 timeout 450 bench/range_scan.sh $d 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time > $OUT/r3.log 2>&1
echo "ranges exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r3.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r3.tgz -C $OUT r3 san && rm -rf $d $OUT/san
cat $OUT/gpu.txt; tail -12 $OUT/r3.log
