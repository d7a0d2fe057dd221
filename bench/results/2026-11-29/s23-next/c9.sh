#!/usr/bin/env bash
# Prepared in session 23 for the next: why the swapped 64 x 192 tile (one consumer, 6 stages) runs 4096^2 m = 317 in 35.5 us and
# m = 378 in 21.2 (calls 5 and 7): the same 128 tiles on 128 CTAs. Nsight Compute, one launch of each (after 3),
# the sweep's own timing beside. Suspected: TMA's zero-filled rows (lib/wgmma.lua's a_box: a 256 x 112 tile at
# m = 129 ran 77.8 us, at 256 50.1): 317 leaves 67 of the second tile's 192 B rows past m, 378 leaves 6. First the
# time against the rows past m (oob.py: m 317..384, wstep 0 and 16), then the profiles. Prepared, not run (the session's device time ran out): run from the tree's root with carry ["build/aitune"].
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
G=bench/results/2026-11-29/s23-next
python3 bench/narrow.py $OUT/h wgmma $G/w.lua wgmma_swap $G/swid.lua wgmma_swap $G/srows.lua wgmma_swap $G/sw.lua > /dev/null || exit 1
python3 bench/narrow.py $OUT/h16 wgmma $G/w.lua wgmma_swap $G/swid.lua wgmma_swap $G/srows.lua wgmma_swap $G/sw16.lua > /dev/null || exit 1
AITUNE_HOME=$OUT/h16 timeout 90 build/aitune sweep $G/mx.yaml --db $OUT/mx.db --vendor time --budget 80s --quiet > $OUT/mx.txt 2>&1
echo "oob sweep exit $?"; python3 $G/oob.py $OUT/mx.db | tee $OUT/oob.txt
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats"
for m in 317 378; do
  AITUNE_HOME=$OUT/h timeout 60 build/aitune sweep $G/m$m.yaml --db $OUT/t$m.db --vendor time --budget 40s --quiet > $OUT/t$m.txt 2>&1
  echo "sweep $m exit $?"; grep "^gemm_nt" $OUT/t$m.txt | cut -c1-120
  AITUNE_HOME=$OUT/h timeout 90 ncu --target-processes all -k regex:aitune_gemm -s 3 -c 1 $S -o $OUT/n$m \
      build/aitune sweep $G/m$m.yaml --db $OUT/p$m.db --vendor off --timeout 60s --quiet > $OUT/n$m.log 2>&1
  echo "ncu $m exit $?"
  ncu --import $OUT/n$m.ncu-rep --page details > $OUT/n$m.txt 2>&1
done
rm -rf $OUT/h $OUT/h16 $OUT/*.db $OUT/*.db.lock $OUT/*.ncu-rep
for m in 317 378; do echo "== $m"; grep -E "Duration|Grid Size|Waves Per SM|Achieved Occupancy|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Memory Throughput|Elapsed Cycles|SM Active Cycles|Issued Warp|No Eligible|Warp Cycles Per Issued" $OUT/n$m.txt | head -20; done
