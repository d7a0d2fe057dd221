#!/usr/bin/env bash
# Session 20, call 1: the swapped wgmma kernel with its width chosen at run time (wstep): compute-sanitizer on ragged shapes, then every m of 317..8192 step 122 at 4096^2 and 14336x4096 for a narrowed swapped space with wstep 16 against the same space with wstep 0 (fixed widths), x cuBLASLt
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
python3 bench/narrow.py $OUT/ns wgmma .gpu/s20/san.lua wgmma .gpu/s20/san_w.lua wgmma .gpu/s20/s_run.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/ns SANITIZE_SPEC=.gpu/s20/san.yaml SANITIZE_ARGS="--vendor off" timeout 170 tests/gpu/sanitize.sh $OUT/san
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"
for v in run:s16 fixed:s_fixed; do
  name=${v%%:*}
  python3 bench/narrow.py $OUT/h-$name wgmma .gpu/s20/pr.lua wgmma .gpu/s20/pr_w.lua wgmma .gpu/s20/${v#*:}.lua || exit 1
  t0=$(date +%s)
  AITUNE_HOME=$OUT/h-$name RANGE_TEMPLATES=wgmma_swap SCAN_ARGS="--step 122" RANGE_EXACT=1 timeout 200 bench/range_scan.sh $OUT/$name 4096x4096,14336x4096 317:8192 16 "" time > $OUT/$name.log 2>&1
  echo "$name exit $? in $(( $(date +%s) - t0 )) s"
  gzip -c $OUT/$name/range.db > $OUT/$name.db.gz; rm -f $OUT/$name/range.db $OUT/$name/range.db.lock
done
tar czf $OUT/res.tgz -C $OUT run fixed san && rm -rf $OUT/run $OUT/fixed $OUT/san $OUT/h-* $OUT/ns
cat $OUT/gpu.txt
for name in run fixed; do echo "== $name"; tail -9 $OUT/$name.log; done
