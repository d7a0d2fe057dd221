#!/usr/bin/env bash
# Call 17: why the 2048 prefill loses (kernel sums per variant) and whether batch 32's
# step varies between captures of one process (issue 32).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
DB=/tmp/l.db
python3 -c 'import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)' .gpu/llama-exact.db $DB
cat > /tmp/pre.yaml <<'Y'
name: llama3-8b-prefill-exact
arch: sm_90a
search: model
max_evals: 12
top_k: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    shapes: {m: {values: [2048]}, n: {values: [4096], exact: true}, k: {values: [4096, 14336], exact: true}}
Y
t0=$(date +%s)
build/aitune sweep /tmp/pre.yaml --db $DB --budget 45s > $OUT/pre.txt 2>&1
echo "prefill sweep exit $? in $(( $(date +%s) - t0 )) s"; grep -E "^gemm_nt|^vendor|x vendor" $OUT/pre.txt | cut -c1-160 | tail -8
cp $DB $OUT/llama14.db
timeout 280 python3 bench/llama_profile.py --registry $DB --prefill 2048 --variants compile,compile+patch,compile+patch-nogroup --top 12 > $OUT/prefill.txt 2>&1
echo "prefill profile exit $?"; grep -v -i warn $OUT/prefill.txt | grep -E "^==|^ " | cut -c1-150
timeout 200 python3 bench/llama_profile.py --registry $DB --batch 32 --variants compile,compile+patch --repeat 3 --top 10 > $OUT/b32.txt 2>&1
echo "b32 exit $?"; grep -v -i warn $OUT/b32.txt | grep -E "^==|^ " | cut -c1-150
