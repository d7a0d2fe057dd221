#!/usr/bin/env bash
# Call 35 (seventh session): the m = 8 exact buckets swept again into a copy of e2e.db (the
# neighbour race now takes each template's fastest row: swapab among the finalists), then
# aitune.racing.race over the batch-8 step (bench/llama_race.py).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
DB=$OUT/e2e8r.db
python3 -c 'import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)' .gpu/e2e.db $DB
t0=$(date +%s)
timeout 150 build/aitune sweep .gpu/s/m8.yaml --db $DB --budget 110s > $OUT/sweep.log 2>&1
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; grep -E "^gemm_nt|^vendor|^sweep: [0-9]+ cand" $OUT/sweep.log | cut -c1-200
build/aitune show --db $DB | grep -E "m=8," | cut -c1-150
for b in m=8,n=4096,k=4096 m=8,n=6144,k=4096 m=8,n=28672,k=4096 m=8,n=4096,k=14336 m=8,n=128256,k=4096; do
  echo "== $b"; build/aitune pin gemm_nt --dtype bf16 --db $DB --bucket $b --list 2>&1 | cut -c1-110
done
t0=$(date +%s)
timeout 330 python3 bench/llama_race.py --registry $DB --batch 8 --rounds 2 --replays 8 --timed 3 > $OUT/race.txt 2>&1
echo "race exit $? in $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/race.txt | grep -E "^race|^before|^\||^llama_race|Error|error" | cut -c1-260 | tail -40
