#!/usr/bin/env bash
# Call 8 (2x H200): the decode attention as the README's tune command writes it (--ops attn_decode: every
# batch 1..32 and cache 1..4096 of the spec, tuned at the buckets' upper edges) into the GEMM registry of
# the twelfth session (call 1's tune + the exact 2048 prefill), then issue 32's decode table over it.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gunzip -c .gpu/llama2.db.gz > /tmp/l.db
t0=$(date +%s)
timeout 150 python3 -m aitune tune .gpu/llama3/config.json --batch 1:32 --prompt 128:2048 --ops attn_decode \
    --gpus 2 --budget 110s --db /tmp/l.db > $OUT/tune.txt 2>&1
echo "tune exit $? at $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tune.txt
build/aitune show --db /tmp/l.db 2>/dev/null | grep attn_decode | grep -E "b=2\^0|b=2\^3|b=2\^5" | grep -E "n=2\^7" 
build/aitune show --db /tmp/l.db 2>/dev/null | grep -c attn_decode
t1=$(date +%s)
timeout 280 python3 bench/llama_e2e.py --registry /tmp/l.db --gpus 2 --prefill 0 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t1 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -20
