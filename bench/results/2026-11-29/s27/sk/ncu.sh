#!/usr/bin/env bash
# Session 27, call 5: why stream-K lost (calls 2-4: 51-55 us against 37-39 at m = 136): ncu's DRAM and L2 bytes,
# time and the SMs' issue activity of swapab bm 128 x bn 144 at 14336 x 4096, m = 136, streamk 0 and 1 (pdl 0 both).
# Needs stream-K's templates (streamk.patch on 78a37cc, see c.sh). Run from the tree's root, carry ["build/aitune"].
set -u
N=bench/results/2026-11-29/s27/sk
python3 bench/narrow.py $OUT/h swapab $N/ncu.lua > /dev/null || exit 1
AITUNE_HOME=$OUT/h timeout 200 ncu --target-processes all -k regex:aitune_gemm_nt -c 6 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__cycles_active.avg,launch__grid_size,launch__registers_per_thread \
  build/aitune sweep $N/ncu.yaml --db $OUT/n.db --vendor off --quiet > $OUT/ncu.txt 2>&1
echo "ncu exit $?"
grep -E "aitune_|gpu__time|dram__bytes|lts__t_bytes|sm__cycles|grid_size|registers" $OUT/ncu.txt | head -60
rm -rf $OUT/h $OUT/n.db*
