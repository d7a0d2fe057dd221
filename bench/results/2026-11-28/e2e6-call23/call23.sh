#!/usr/bin/env bash
# Call 23 (fifth session): Llama-3-8B's batch-8 GEMMs tuned at m = 8 exactly (the range
# bucket m=2^3:align1 was tuned at its upper edge, 15, and ran 8% slower in the step than
# the sweep said) into a copy of e2e.db, then issue 32's table part 1 (host time with the
# C hot path, batch 1 and 8 in graphs, batch 1 eager, check=True), static shapes.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
DB=$OUT/e2e8.db
python3 -c 'import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)' .gpu/e2e.db $DB
cat > $OUT/m8.yaml <<'YAML'
name: llama3-8b-batch8-exact
arch: sm_90a
search: model
max_evals: 24
top_k: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    timing: neighbour
    shapes: {m: {values: [8], exact: true}, n: {values: [4096, 6144, 28672, 128256], exact: true}, k: {values: [4096], exact: true}}
  - op: gemm_nt
    dtypes: [bf16]
    timing: neighbour
    shapes: {m: {values: [8], exact: true}, n: {values: [4096], exact: true}, k: {values: [14336], exact: true}}
YAML
t0=$(date +%s)
timeout 150 build/aitune sweep $OUT/m8.yaml --db $DB --budget 110s > $OUT/sweep.log 2>&1
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; grep -E "^gemm_nt|^vendor|^sweep: [0-9]+ cand" $OUT/sweep.log
timeout 430 python3 bench/llama_e2e.py --registry $DB --batches 1,8 --steps 32 --prefill 0 --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $?"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p'
