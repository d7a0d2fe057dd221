#!/usr/bin/env bash
# Call 26 (fifth session): batch 8 again on a fresh machine (compile vs compile+patch,
# static shapes, e2e8.db): is call 23's 1.102x a figure that holds?
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 185 python3 bench/llama_e2e.py --registry .gpu/e2e8.db --batches 8 --steps 32 --prefill 0 --host-calls 200 \
    --variants compile,compile+patch --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $?"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p' | head -8
