#!/usr/bin/env bash
# Call 4 (twelfth session, 2x H200): the batch-1 prefill of 2048 tokens tuned exactly (the tasks
# `python -m aitune tune ... --exact-prompt 2048` adds, .gpu/p2048.yaml) into call 1's registry, then
# issue 32's whole table again (bench/llama_e2e.py --gpus 2).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
gunzip -c .gpu/llama.db.gz > /tmp/llama.db
t0=$(date +%s)
timeout 250 build/aitune sweep .gpu/p2048.yaml --db /tmp/llama.db --gpus 2 --budget 200s --max-evals 48 > $OUT/p2048.log 2>&1
echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
grep -v "^sweep: bucket\|ETA" $OUT/p2048.log | tail -14 | cut -c1-260
timeout 330 python3 bench/llama_e2e.py --registry /tmp/llama.db --gpus 2 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t0 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -22
gzip -c /tmp/llama.db > $OUT/llama2.db.gz
cd $OUT && tar czf e2e.tgz e2e e2e.txt && rm -rf e2e
