#!/usr/bin/env bash
# Session 21, call 7: where the swapped kernel's warps stall at 1049 x 4096 x 4096 (Nsight Compute source counters, per SASS instruction): 256 x 136 coop and 128 x 136 ping-pong, and cuBLASLt's kernel
set -u
S="--section SourceCounters --section WarpStateStats --section SpeedOfLight"
for v in o1 o2; do
  python3 bench/narrow.py $OUT/n$v wgmma .gpu/s21/$v.lua wgmma_swap .gpu/s21/kw.lua wgmma_swap .gpu/s21/o1b.lua || exit 1
  AITUNE_HOME=$OUT/n$v timeout 100 ncu --target-processes all -k regex:aitune_gemm -s 3 -c 1 $S -o $OUT/$v \
      build/aitune sweep .gpu/s21/one1.yaml --db /tmp/$v.db --vendor off --timeout 60s --quiet > $OUT/$v.log 2>&1
  echo "$v exit $?"
done
timeout 100 ncu --target-processes all -k regex:'nvjet|xmma|cutlass|sm90_' -s 3 -c 1 $S -o $OUT/ven \
    build/aitune sweep .gpu/s21/one1.yaml --db /tmp/v.db --vendor time --timeout 60s --quiet > $OUT/ven.log 2>&1
echo "ven exit $?"
for v in o1 o2 ven; do
  [ -f $OUT/$v.ncu-rep ] || continue
  ncu --import $OUT/$v.ncu-rep --page source --csv --print-source sass > $OUT/${v}_sass.csv 2> $OUT/${v}_sass.err
  ncu --import $OUT/$v.ncu-rep --page details > $OUT/${v}.txt 2>&1
done
tar czf $OUT/sass.tgz -C $OUT $(cd $OUT && ls *_sass.csv *.txt *.log 2>/dev/null) && rm -rf $OUT/*.csv $OUT/n* $OUT/*.ncu-rep
ls -la $OUT; for v in o1 o2 ven; do grep -E "Duration|Warp Cycles Per Issued" $OUT/$v.txt | head -2; done
