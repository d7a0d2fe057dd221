#!/usr/bin/env bash
# Call 41: python -m aitune race (the model built from its config with random weights,
# patched, its batch-8 decode step raced in a CUDA graph) over a copy of call 35's m = 8
# sweep, not yet raced.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
cp .gpu/s/e2e8r.db $OUT/r.db
t0=$(date +%s)
timeout 170 python3 -m aitune race .gpu/s/llama3/config.json --batch 8 --db $OUT/r.db --mode graph --rounds 2 > $OUT/race.txt 2> $OUT/race.err
echo "race exit $? in $(( $(date +%s) - t0 )) s"
cat $OUT/race.txt; grep -v -i warn $OUT/race.err | grep -v "^race gemm" | tail -6 | cut -c1-200
build/aitune show --db $OUT/r.db | grep -E "m=8," | cut -c1-120
rm -f $OUT/r.db*
