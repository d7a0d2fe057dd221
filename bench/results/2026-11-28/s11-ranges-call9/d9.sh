#!/usr/bin/env bash
# Call 9 (eleventh session, H200): the ranges suite again, with budget shares that pass what fast buckets leave to later
# ones (sweep_share); then the host time per call of issue 32
# (bench/host_overhead.py) twice over the same registry's 1 x 4096 x 4096 winner.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
lscpu | grep "Model name"
t0=$(date +%s)
timeout 500 bench/run --out $OUT/ranges --no-figures ranges > $OUT/ranges.log 2>&1
echo "ranges exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/ranges/range_table.txt 2>/dev/null | head -8
grep -i "cut\|budget" $OUT/ranges/sweep.err | head -5 | cut -c1-300
cp $OUT/ranges/range.db /tmp/range.db
(cd $OUT && rm -f ranges/range.db* && tar czf ranges.tgz ranges ranges.log && rm -rf ranges ranges.log)
for r in 1 2; do
  timeout 40 python3 bench/host_overhead.py --registry /tmp/range.db --out /tmp/h$r > $OUT/host$r.txt 2>&1
  echo "host $r exit $? at $(( $(date +%s) - t0 )) s"; tail -4 $OUT/host$r.txt
done
