#!/usr/bin/env bash
# Call 4 (tenth session, H200): swapab's decode default chosen by fill (bm 64 first), m 1..64 at three weights,
# 8 evals a template, against cuBLASLt (call 2 ran these buckets with the old default inside the 1..256 sweep).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 380 bench/range_scan.sh $OUT/dec 4096x4096,1024x4096,14336x4096 1:64 8 200s off > $OUT/dec.log 2>&1
echo "range exit $? at $(( $(date +%s) - t0 )) s"
head -5 $OUT/dec/range_table.txt
cd $OUT && rm -f dec/range.db* && tar czf dec.tgz dec dec.log && rm -rf dec
