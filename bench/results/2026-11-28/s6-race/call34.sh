#!/usr/bin/env bash
# Call 34: aitune.racing.race on Llama-3-8B batch 8 over e2e8.db (bench/llama_race.py).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
timeout 140 python3 bench/llama_race.py --registry .gpu/e2e8.db --batch 8 --rounds 2 --replays 8 --timed 3 > $OUT/race.txt 2>&1
echo "race exit $?"
grep -v -i warn $OUT/race.txt | grep -E "^race|^before|^\||^llama_race|Error|error" | cut -c1-260 | tail -40
