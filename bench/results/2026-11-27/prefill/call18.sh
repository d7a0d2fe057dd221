#!/usr/bin/env bash
# Call 18: the prefill GEMMs burst / sustained / mixed against torch (issue 32), on the
# flush-timed registry of call 17 and on one whose m = 2048 buckets are stream-timed.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
cat > /tmp/pst.yaml <<'Y'
name: llama3-8b-prefill-stream
arch: sm_90a
search: model
max_evals: 12
top_k: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    timing: stream
    shapes: {m: {values: [2048]}, n: {values: [6144, 4096, 28672], exact: true}, k: {values: [4096], exact: true}}
  - op: gemm_nt
    dtypes: [bf16]
    timing: stream
    shapes: {m: {values: [2048]}, n: {values: [4096], exact: true}, k: {values: [14336], exact: true}}
Y
t0=$(date +%s)
build/aitune sweep /tmp/pst.yaml --db /tmp/st.db --budget 100s > $OUT/pst.txt 2>&1
echo "stream sweep exit $? in $(( $(date +%s) - t0 )) s"; grep -E "^gemm_nt|^vendor" $OUT/pst.txt | cut -c1-170
timeout 100 python3 bench/prefill_gemms.py --registry .gpu/llama14.db > $OUT/pg14.txt 2>&1; echo "flush-timed registry: exit $?"; sed -n '/^prefill GEMMs/,$p' $OUT/pg14.txt
timeout 100 python3 bench/prefill_gemms.py --registry /tmp/st.db > $OUT/pgst.txt 2>&1; echo "stream-timed registry: exit $?"; sed -n '/^prefill GEMMs/,$p' $OUT/pgst.txt
cp /tmp/st.db $OUT/st.db
