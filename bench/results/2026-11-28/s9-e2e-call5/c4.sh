#!/usr/bin/env bash
# Call 4 (9th session): m 65..256 at 4096^2 and 1024x4096 with hold given time (240 s for 6 buckets);
# Llama-3-8B batch 1 with gemm_swiglu at m = 1 (rowdot) in the registry.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 330 bench/range_scan.sh $OUT/mid 4096x4096,1024x4096 65:256 8 240s off > $OUT/mid.log 2>&1
echo "range exit $? at $(( $(date +%s) - t0 )) s"
head -4 $OUT/mid/range_table.txt; grep "^hold:" $OUT/mid/sweep.err | cut -c1-400
cp .gpu/s/e2e_m1.db /tmp/e2e.db
timeout 230 python3 bench/llama_e2e.py --registry /tmp/e2e.db --batches 1 --steps 32 --prefill 0 --host-calls 2000 \
    --variants compile,compile+patch --out $OUT > $OUT/e2e.txt 2> $OUT/e2e.err
echo "e2e exit $? at $(( $(date +%s) - t0 )) s"
grep "^| 1 \|host\|check\|bar" $OUT/e2e.txt | head -12
grep -v -i warn $OUT/e2e.err | tail -3 | cut -c1-300
cd $OUT && rm -f mid/range.db-* && mv mid/range.db range.db && tar czf mid.tgz mid && rm -rf mid
