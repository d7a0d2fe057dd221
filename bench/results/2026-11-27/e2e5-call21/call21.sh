#!/usr/bin/env bash
# Call 21: issue 32's table, part 2 (batch 32 in a graph, the 2048-token prefill),
# static shapes per batch, on .gpu/e2e.db.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 python3 bench/llama_e2e.py --registry .gpu/e2e.db --batches 32 --steps 32 --prefill 2048 --host-calls 500 --variants compile,compile+patch --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $?"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p'
