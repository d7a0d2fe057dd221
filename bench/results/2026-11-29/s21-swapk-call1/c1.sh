#!/usr/bin/env bash
# Session 21, call 1: where the swapped wgmma kernel loses to cuBLASLt at m = 1049 and 2086 (4096^2): a narrowed swapped space at k = 64, 512, 4096 (fixed cost per tile against the main loop's), then Nsight Compute over one config and cuBLASLt's kernel at each
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
python3 bench/narrow.py $OUT/nk wgmma .gpu/s21/k.lua wgmma_swap .gpu/s21/kw.lua wgmma_swap .gpu/s21/kb.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/nk timeout 200 build/aitune sweep .gpu/s21/k.yaml --db $OUT/k.db --vendor time --quiet > $OUT/k.txt 2> $OUT/k.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/k.err
python3 .gpu/s21/table.py $OUT/k.db > $OUT/ktable.txt
python3 bench/narrow.py $OUT/n1 wgmma .gpu/s21/o1.lua wgmma_swap .gpu/s21/kw.lua wgmma_swap .gpu/s21/o1b.lua || exit 1
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
AITUNE_HOME=$OUT/n1 timeout 100 ncu --target-processes all -k regex:aitune_gemm -s 3 -c 1 $S -o $OUT/A_swap \
    build/aitune sweep .gpu/s21/one1.yaml --db /tmp/A.db --vendor off --timeout 60s --quiet > $OUT/A.log 2>&1
echo "A exit $?"
AITUNE_HOME=$OUT/n1 timeout 100 ncu --target-processes all -k regex:'nvjet|xmma|cutlass|sm90_' -s 3 -c 1 $S -o $OUT/B_vendor \
    build/aitune sweep .gpu/s21/one1.yaml --db /tmp/B.db --vendor time --timeout 60s --quiet > $OUT/B.log 2>&1
echo "B exit $?"
for c in A_swap B_vendor; do
  [ -f $OUT/$c.ncu-rep ] && ncu --import $OUT/$c.ncu-rep --page details > $OUT/$c.txt 2>&1
done
gzip $OUT/k.db; rm -rf $OUT/nk $OUT/n1 $OUT/k.db.lock
tar czf $OUT/res.tgz -C $OUT ktable.txt k.txt k.err A_swap.txt B_vendor.txt A.log B.log && rm -f $OUT/*.ncu-rep
cat $OUT/ktable.txt
for c in A_swap B_vendor; do
  echo "== $c"
  grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|L2 Hit Rate|Registers Per Thread|Grid Size|Block Size|Issue Slots Busy|Executed Ipc Active|Warp Cycles Per Issued|No Eligible|SM Busy|Elapsed Cycles|SM Frequency" $OUT/$c.txt 2>/dev/null | head -20
done
