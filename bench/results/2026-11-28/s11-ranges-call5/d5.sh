#!/usr/bin/env bash
# Call 5 (eleventh session, H200): issue 33's ranges suite (bench/run ranges: n and k exact, 400 s sweep) with
# swapab's A box over m only and its defaults with pdl; every m 1..256 at the four weights against cuBLASLt.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 580 bench/run --out $OUT/ranges --no-figures ranges > $OUT/ranges.log 2>&1
echo "ranges exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/ranges/range_table.txt 2>/dev/null | head -8
grep -i "cut\|budget" $OUT/ranges/sweep.err | head -5 | cut -c1-300
cd $OUT && rm -f ranges/range.db* && tar czf ranges.tgz ranges ranges.log && rm -rf ranges
