#!/usr/bin/env bash
# Session 27, call 8: where stream-K's time goes (ncu sections: speed of light, memory workload, warp states,
# scheduler) for swapab bm 128 x bn 144 at 14336 x 4096, m = 136, streamk 0 (kernel 4b2a59e0) and 1 (78001bc5),
# one launch each. Needs streamk.patch on 78a37cc (see c.sh). Run from the tree's root, carry ["build/aitune"].
set -u
N=bench/results/2026-11-29/s27/sk
python3 bench/narrow.py $OUT/h swapab $N/ncu.lua > /dev/null || exit 1
for kn in 4b2a59e0 78001bc5; do
  AITUNE_HOME=$OUT/h timeout 150 ncu --target-processes all -k regex:$kn -c 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats \
    build/aitune sweep $N/ncu.yaml --db $OUT/n$kn.db --vendor off --quiet > $OUT/ncu2-$kn.txt 2>&1
  echo "ncu $kn exit $?"; rm -rf $OUT/n$kn.db*
done
rm -rf $OUT/h
grep -h -E "aitune_gemm|Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)|Stall|Warp Cycles Per Issued|No Eligible|Issued Warp" $OUT/ncu2-*.txt | head -60
