#!/usr/bin/env bash
# Session 19, call 7: which cuBLASLt kernel runs at row 2's wave jumps and at 14336 x 4096's mid m (name, grid, block, cluster, duration): Nsight Compute on the vendor's launches
set -u
python3 bench/narrow.py /tmp/o1 wgmma .gpu/s19/one1.lua || exit 1
for shape in 1049,4096 2086,4096 3184,4096 5258,4096 152,14336 221,14336 1049,14336; do
  m=${shape%,*}; n=${shape#*,}
  sed "s/values: \[1049\]/values: [$m]/" .gpu/s19/one.yaml > /tmp/v.yaml
  sed -i "0,/n: {values: \[4096\]/s//n: {values: [$n]/" /tmp/v.yaml
  AITUNE_HOME=/tmp/o1 timeout 120 ncu --target-processes all -k regex:'nvjet|sm90_|cutlass|xmma|gemm' -c 2 \
      --section LaunchStats --section SpeedOfLight -o $OUT/v_${m}_$n \
      build/aitune sweep /tmp/v.yaml --db /tmp/v$m$n.db --vendor time --timeout 60s --quiet > $OUT/v_${m}_$n.log 2>&1
  echo "== m=$m n=$n exit $?"
  ncu --import $OUT/v_${m}_$n.ncu-rep --page details 2>/dev/null | grep -E "^  [a-zA-Z_].*\(|Duration|Grid Size|Block Size|Cluster Size|Registers Per|Shared Memory Configuration Size|Dynamic Shared|Waves Per SM|Compute \(SM\) Throughput|DRAM Throughput" | head -24
done > $OUT/vendor_kernels.txt 2>&1
cat $OUT/vendor_kernels.txt | grep -v "^$" | head -150
rm -f $OUT/*.ncu-rep
tar czf $OUT/logs.tgz -C $OUT $(cd $OUT && ls *.log) && rm -f $OUT/*.log
