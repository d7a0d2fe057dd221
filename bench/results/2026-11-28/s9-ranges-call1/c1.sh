#!/usr/bin/env bash
# Call 1 (9th session): issue 33's first row with today's kernels; gemm_swiglu's rowdot at m = 1, 2, 4.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 400 bench/run --out $OUT/ranges --no-figures ranges > $OUT/ranges.log 2>&1
echo "ranges exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/ranges/range_table.txt | head -20
rm -f $OUT/ranges/range.db-*
cp .gpu/s/e2e_sw2.db
timeout 110 build/aitune sweep .gpu/s/sw3.yaml --db $OUT/sw.db --quiet > $OUT/sweep.txt 2> $OUT/sweep.err
echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
grep swiglu $OUT/sweep.txt | cut -c1-230
grep -i "wrong\|fault\|error" $OUT/sweep.err | head -5
timeout 70 python3 bench/swiglu_prefill.py --registry $OUT/sw.db --tokens 1,2,4 2> $OUT/peer.err
echo "peer exit $? at $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/peer.err | tail -5 | cut -c1-300
rm -f $OUT/sw.db-*
