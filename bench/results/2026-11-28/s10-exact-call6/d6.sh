#!/usr/bin/env bash
# Call 6 (tenth session, H200): call 4's m 1..64 sweep with n and k exact (RANGE_EXACT=1, as python -m aitune
# tune writes a model's weights), at 1024x4096 and 4096x4096, 8 evals a template, against cuBLASLt.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
RANGE_EXACT=1 timeout 150 bench/range_scan.sh $OUT/ex 4096x4096,1024x4096 1:64 8 100s off > $OUT/ex.log 2>&1
echo "range exit $? at $(( $(date +%s) - t0 )) s"
head -4 $OUT/ex/range_table.txt
cd $OUT && rm -f ex/range.db* && tar czf ex.tgz ex ex.log && rm -rf ex
