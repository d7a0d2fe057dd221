#!/usr/bin/env bash
# Call 7 (eleventh session, H200): issue 33's ranges suite (bench/run ranges) with swapab's A box over m, two tiles
# of rows along z for the first mid-size kernel and its new default; then the host time per call of issue 32
# (bench/host_overhead.py) twice over the same registry's 1 x 4096 x 4096 winner.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
lscpu | grep "Model name"
t0=$(date +%s)
timeout 470 bench/run --out $OUT/ranges --no-figures ranges > $OUT/ranges.log 2>&1
echo "ranges exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/ranges/range_table.txt 2>/dev/null | head -8
grep -i "cut\|budget" $OUT/ranges/sweep.err | head -5 | cut -c1-300
for r in 1 2; do
  timeout 45 python3 bench/host_overhead.py --registry $OUT/ranges/range.db --out $OUT/h$r > $OUT/host$r.txt 2>&1
  echo "host $r exit $? at $(( $(date +%s) - t0 )) s"; tail -4 $OUT/host$r.txt
done
cd $OUT && rm -f ranges/range.db* && tar czf ranges.tgz ranges ranges.log host1.txt host2.txt h1 h2 && rm -rf ranges h1 h2
