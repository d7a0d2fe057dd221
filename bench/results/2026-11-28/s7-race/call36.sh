#!/usr/bin/env bash
# Call 36: race batch 1 over call 35's batch-8-raced registry, then issue 32's decode bars
# (batches 1 and 8, compile vs compile+patch, host time, check) on the raced registry.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
timeout 200 python3 bench/llama_race.py --registry .gpu/s/race.db --batch 1 --rounds 2 --replays 8 --timed 3 > $OUT/race1.txt 2>&1
echo "race exit $? in $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/race1.txt | grep -E "^race:|^before|^\||^llama_race|Error|error" | cut -c1-200 | tail -24
DB=$OUT/race.db; [ -s $DB ] || DB=.gpu/s/race.db
t0=$(date +%s)
timeout 330 python3 bench/llama_e2e.py --registry $DB --batches 1,8 --steps 32 --prefill 0 \
    --variants compile,compile+patch --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $? in $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p'
