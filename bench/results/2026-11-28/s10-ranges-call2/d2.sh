#!/usr/bin/env bash
# Call 2 (tenth session, H200): issue 33's ranges suite as bench/run runs it now (400 s sweep: hold's defaults,
# a holding bucket's search cut at half its share), every m 1..256 at the four weights against cuBLASLt.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 575 bench/run --out $OUT/ranges --no-figures ranges > $OUT/ranges.log 2>&1
echo "ranges exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/ranges/range_table.txt 2>/dev/null | head -8
grep -c "^hold:" $OUT/ranges/sweep.err; grep -i "cut\|budget" $OUT/ranges/sweep.err | head -5 | cut -c1-300
cd $OUT && rm -f ranges/range.db-* && tar czf ranges.tgz ranges ranges.log && rm -rf ranges
