#!/usr/bin/env bash
# Call 5 (2x H200): no graph break with aitune's attention (tiny model, forced), then issue 32's decode table
# over call 2's registry (the Llama registry with attn_decode swept at the bench's cache).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gunzip -c .gpu/s13/l3.db.gz > /tmp/l3.db
CUDA_VISIBLE_DEVICES=1 timeout 100 python3 .gpu/s13/explain.py > $OUT/explain.txt 2>&1
grep -E "forced|^2\.|REASON" $OUT/explain.txt | head -5
t1=$(date +%s)
timeout 400 python3 bench/llama_e2e.py --registry /tmp/l3.db --gpus 2 --prefill 0 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t1 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -24
