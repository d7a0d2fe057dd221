#!/usr/bin/env bash
# Call 1 (thirteenth session, 2x H200): GPU 0 the batch-1 step's kernels (compile, compile+patch);
# GPU 1 the interleaved prefill protocol (bench/llama_e2e.py --units prefill).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gunzip -c .gpu/llama2.db.gz > /tmp/l.db
( CUDA_VISIBLE_DEVICES=1 timeout 500 python3 bench/llama_e2e.py --registry /tmp/l.db --batches '' --units prefill --out $OUT/pre > $OUT/pre.txt 2>&1; echo "prefill exit $?" >> $OUT/pre.txt ) &
CUDA_VISIBLE_DEVICES=0 timeout 400 python3 .gpu/s13/prof.py /tmp/l.db > $OUT/prof.txt 2>&1; echo "prof exit $?" >> $OUT/prof.txt
wait
grep -v -i warn $OUT/prof.txt | tail -95
echo ----; grep -E "prefill|exit" $OUT/pre.txt | tail -12
