#!/usr/bin/env bash
# Call 20: issue 32's table, part 1 (host time, batch 1 and 8 in graphs, batch 1 eager,
# check=True), static shapes per batch, on .gpu/e2e.db (decode as before; the m = 2048
# buckets stream-timed: the vendor holds them).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 python3 bench/llama_e2e.py --registry .gpu/e2e.db --batches 1,8 --steps 32 --prefill 0 --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $?"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p'
