#!/usr/bin/env bash
# Call 6 (2x H200): issue 32's whole table in one run (the prefill interleaved) over call 2's registry.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gunzip -c .gpu/s13/l3.db.gz > /tmp/l3.db
t1=$(date +%s)
timeout 520 python3 bench/llama_e2e.py --registry /tmp/l3.db --gpus 2 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t1 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -26
