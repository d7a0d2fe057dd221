#!/usr/bin/env bash
# Call 24 (fifth session): issue 32's table, part 2 (batch 32 in a graph, the 2048-token
# prefill), static shapes, on call 23's registry (e2e.db + exact m = 8 winners). Vendor-held
# shapes are now traced as F.linear (ops.traced_linear).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 python3 bench/llama_e2e.py --registry .gpu/e2e8.db --batches 32 --steps 32 --prefill 2048 \
    --variants compile,compile+patch --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $?"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p'
