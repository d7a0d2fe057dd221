#!/usr/bin/env bash
# Call 31: does a GEMM before the neighbour (a model's previous projection) reproduce the in-step loss of gemv?
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader -lms 200 > $OUT/clocks.txt 2>&1 &
timeout 400 python3 bench/weight_pool.py --registry .gpu/e2e8.db --registry .gpu/x/sw4.db --neighbour mul,gemm \
   --shapes 4096x4096,28672x4096,4096x14336 > $OUT/pool.txt 2>&1
echo "pool exit $?"; kill %1
grep -v -i warn $OUT/pool.txt | sed -n '/^| registry/,$p'
awk -F, '{print $1}' $OUT/clocks.txt | sort | uniq -c | sort -rn | head -4
sort -t, -k3 -rn $OUT/clocks.txt | head -3
