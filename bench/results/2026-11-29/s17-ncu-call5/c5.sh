#!/usr/bin/env bash
# Session 17, call 5: Nsight Compute over swapab's mid-size kernel (bm 128,
# bn 224: the 14336 x 4096 part [193, 224)'s winner) and cuBLASLt's kernel at
# 200 x 14336 x 4096, each run by the worker inside a sweep.
set -u
python3 bench/narrow.py /tmp/hp swapab .gpu/s17/sw1.lua || exit 1
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats"
t0=$(date +%s)
AITUNE_HOME=/tmp/hp timeout 150 ncu --target-processes all -k regex:aitune_gemm -s 3 -c 1 $S -o $OUT/ours \
    build/aitune sweep .gpu/s17/prof.yaml --db /tmp/p1.db --vendor off --timeout 120s --quiet > $OUT/ncu_ours.log 2>&1
echo "ours exit $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
AITUNE_HOME=/tmp/hp timeout 150 ncu --target-processes all -k regex:'nvjet|xmma|cutlass|sm90' -s 3 -c 1 $S -o $OUT/vendor \
    build/aitune sweep .gpu/s17/prof.yaml --db /tmp/p2.db --vendor time --timeout 120s --quiet > $OUT/ncu_vendor.log 2>&1
echo "vendor exit $? in $(( $(date +%s) - t0 )) s"
for r in ours vendor; do
    [ -f $OUT/$r.ncu-rep ] && ncu --import $OUT/$r.ncu-rep --page details > $OUT/$r.txt 2>&1
done
tail -5 $OUT/ncu_ours.log $OUT/ncu_vendor.log
for r in ours vendor; do
    echo "== $r"
    grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Issue Slots Busy|Warp Cycles Per Issued|Registers Per Thread|Grid Size|Block Size|Dynamic Shared|Achieved Occupancy|Executed Ipc Active|Stall|SM Busy|No Eligible" $OUT/$r.txt 2>/dev/null | head -40
done
