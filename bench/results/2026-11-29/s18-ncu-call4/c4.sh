#!/usr/bin/env bash
# Session 18, call 4: Nsight Compute over one config of each decode family at 14336 x 4096 (and gemv at 4096 x 14336), and cuBLASLt
set -u
python3 bench/narrow.py /tmp/hp rowdot .gpu/s18/n_rd.lua gemv .gpu/s18/n_gv.lua swapab .gpu/s18/n_sw.lua || exit 1
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats"
for c in A_rd1 B_rd2 C_gv_n D_gv_k E_sw; do
  AITUNE_HOME=/tmp/hp timeout 100 ncu --target-processes all -k regex:aitune_gemm -s 3 -c 1 $S -o $OUT/$c \
      build/aitune sweep .gpu/s18/$c.yaml --db /tmp/$c.db --vendor off --timeout 60s --quiet > $OUT/$c.log 2>&1
  echo "$c exit $?"
done
AITUNE_HOME=/tmp/hp timeout 100 ncu --target-processes all -k regex:'nvjet|xmma|cutlass|sm90_' -s 3 -c 1 $S -o $OUT/F_vendor \
    build/aitune sweep .gpu/s18/E_sw.yaml --db /tmp/F.db --vendor time --timeout 60s --quiet > $OUT/F_vendor.log 2>&1
echo "vendor exit $?"
for c in A_rd1 B_rd2 C_gv_n D_gv_k E_sw F_vendor; do
  [ -f $OUT/$c.ncu-rep ] && ncu --import $OUT/$c.ncu-rep --page details > $OUT/$c.txt 2>&1
  echo "== $c"
  grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|Mem Busy|Max Bandwidth|Registers Per Thread|Grid Size|Block Size|Waves Per SM|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Stall Long|L1/TEX Hit" $OUT/$c.txt 2>/dev/null | head -24
done
tar czf $OUT/reps.tgz -C $OUT $(cd $OUT && ls *.txt) && rm -f $OUT/*.ncu-rep $OUT/*.txt
