#!/usr/bin/env bash
# Call 37: issue 32's other bars on the raced registry (race18.db: batch 8 and batch 1 raced):
# batch 32 and a 2048-token prefill (compile vs compile+patch), batch 1 eager without a graph.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
timeout 560 python3 bench/llama_e2e.py --registry .gpu/s/race18.db --batches 32 --steps 32 --prefill 2048 \
    --host-calls 200 --variants eager,patch,compile,compile+patch --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $? in $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p'
