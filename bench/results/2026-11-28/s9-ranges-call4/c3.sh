#!/usr/bin/env bash
# Call 3 (9th session): issue 33's first row after hold's defaults and swapab's bm-64 mid default (same command as call 1);
# gemm_swiglu at m = 1 fused (rowdot) against the grouped product + silu*mul, same registry, same run.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 420 bench/run --out $OUT/ranges --no-figures ranges > $OUT/ranges.log 2>&1
echo "ranges exit $? at $(( $(date +%s) - t0 )) s"
head -8 $OUT/ranges/range_table.txt
grep "^hold:\|^sweep:" $OUT/ranges/sweep.err | tail -2 | cut -c1-400
timeout 80 python3 bench/swiglu_prefill.py --registry .gpu/s/e2e_m1.db --tokens 1,8 2> $OUT/peer.err
echo "peer exit $? at $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/peer.err | tail -3 | cut -c1-300
rm -f .gpu/s/e2e_m1.db-*
cd $OUT && rm -f ranges/range.db-* && mv ranges/range.db range.db && tar czf ranges.tgz ranges && rm -rf ranges
