#!/usr/bin/env bash
# Call 1 (tenth session, 2x H200): issue 32's whole bar table in one run of bench/llama_e2e.py, spread over the
# host's two GPUs (--gpus 2: each ratio from one process on one GPU), registry e2e_m1.db (tuned on an H100).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)"
t0=$(date +%s)
timeout 540 python3 bench/llama_e2e.py --registry .gpu/s/e2e_m1.db --gpus 2 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t0 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -32
cd $OUT && tar czf e2e.tgz e2e e2e.txt && rm -rf e2e
