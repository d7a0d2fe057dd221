#!/usr/bin/env bash
# Call 2 (twelfth session, 2x H200): issue 32's whole bar table in one run of bench/llama_e2e.py over the
# registry call 1 tuned on this card (python -m aitune tune, README's command, --budget 470s, --gpus 2).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)"
db=/tmp/llama.db
[ -f $db ] || { gunzip -c .gpu/llama.db.gz > /tmp/llama2.db; db=/tmp/llama2.db; }
echo "registry $db"; ls -la $db
t0=$(date +%s)
timeout 560 python3 bench/llama_e2e.py --registry $db --gpus 2 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t0 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -34
cd $OUT && tar czf e2e.tgz e2e e2e.txt && rm -rf e2e
