#!/usr/bin/env bash
# Call 3 (tenth session, 2x H200): (1) issue 32's whole table again in one run of bench/llama_e2e.py --gpus 2
# (Linear.forward's warm path in C now); (2) issue 33's ranges suite on GPU 0 with swapab's decode default
# chosen by fill (bm 64 first), as call 2 ran it with the old default.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 300 python3 bench/llama_e2e.py --registry .gpu/s/e2e_m1.db --gpus 2 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t0 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -24
CUDA_VISIBLE_DEVICES=0 timeout $(( 585 - ($(date +%s) - t0) )) bench/run --out $OUT/ranges --no-figures ranges > $OUT/ranges.log 2>&1
echo "ranges exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/ranges/range_table.txt 2>/dev/null | head -8
grep -i "cut\|budget" $OUT/ranges/sweep.err | head -3 | cut -c1-300
cd $OUT && rm -f ranges/range.db-* && tar czf d3.tgz e2e e2e.txt ranges ranges.log && rm -rf e2e ranges
