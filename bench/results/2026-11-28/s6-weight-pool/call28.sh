#!/usr/bin/env bash
# Call 28: are gemv winners slower when the weight is one of a model's many (TLB/page-cold)?
# swapab-only m = 8 winners swept, then bench/weight_pool.py over both registries.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
timeout 150 build/aitune sweep .gpu/sw8.yaml --db $OUT/sw8.db --vendor time --quiet > $OUT/sw8.txt 2> $OUT/sw8.err
echo "sweep exit $?"; grep -E "^gemm_nt|^sweep:" $OUT/sw8.txt $OUT/sw8.err | cut -c1-300
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 500 > $OUT/clocks.txt 2>&1 &
timeout 300 python3 bench/weight_pool.py --registry .gpu/e2e8.db --registry $OUT/sw8.db > $OUT/pool.txt 2>&1
echo "pool exit $?"; kill %1
grep -v -i warn $OUT/pool.txt | sed -n '/^| registry/,$p'
sort $OUT/clocks.txt | uniq -c | sort -rn | head -5
