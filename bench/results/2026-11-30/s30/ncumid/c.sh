#!/usr/bin/env bash
# Prepared in session 30 for the next: where 14336 x 4096's mid-size stream stalls. At m = 65..256 swapab's
# mid-size kernels run the 117 MB weight at 3.1-3.5 TB/s (the first row's 65..256 geomean 0.969x cuBLASLt; the
# copy ceiling 4.26 TB/s allows 1.3x), the decode kernel at m = 16 at 3.8. One config each, the range sweep's
# winners in session 30's call 5: m = 128's part (bm 128, bn 160 with 5 widths in steps of 8, 5 slots, evict 1,
# l2pre 1, inflight 0; 112 CTAs) and m = 16's bucket (bm 64, bn 32, 8 slots of 2 boxes, evict 1, l2pre 4; 224
# CTAs), first timed (the worker, cuBLASLt raced), then Nsight Compute over one launch of each at the GPU's own
# clocks (--clock-control none): speed of light, memory workload (L2 and DRAM), warp states, scheduler.
# Predicted: the mid kernel's L2 throughput near its peak (A read by each of 112 CTAs: 112 x 1.3 MB beside the
# 117 MB weight) and DRAM below 80%, the decode kernel's DRAM above 85%. Run from the tree's root, carry
# ["build/aitune"]; about 2 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s30/ncumid
for k in mid dec; do python3 bench/narrow.py $OUT/h$k swapab $N/$k.lua > /dev/null || exit 1; done
for k in mid dec; do
  AITUNE_HOME=$OUT/h$k timeout 90 build/aitune sweep $N/w.yaml --db $OUT/t$k.db --vendor time --quiet > $OUT/t$k.txt 2>&1
  echo "timed $k: $(grep -E '^gemm_nt' $OUT/t$k.txt | awk '{print $3, $4, $5, $9, $10}' | tr '\n' ' ')"
done
for k in mid dec; do
  AITUNE_HOME=$OUT/h$k timeout 150 ncu --clock-control none --target-processes all -k regex:aitune_gemm -c 2 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section LaunchStats build/aitune sweep $N/w.yaml --db $OUT/n$k.db --vendor off --quiet > $OUT/ncu-$k.txt 2>&1
  echo "ncu $k exit $?"
  grep -E "aitune_gemm|Duration|DRAM Throughput|L2 Cache Throughput|Memory Throughput|SM Active|Elapsed Cycles|No Eligible|Warp Cycles Per Issued" $OUT/ncu-$k.txt | head -24
done
cd $OUT && tar czf all.tgz t*.txt ncu-*.txt && rm -rf hmid hdec *.db* tmid.txt tdec.txt; ls
