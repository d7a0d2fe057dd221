#!/usr/bin/env bash
# One GPU call: Llama-3-8B's fused projections (aitune.patch's group=True:
# q/k/v 6144 x 4096, gate/up 28672 x 4096) tuned at their exact n and k
# (docs/SPEC.md "Exact sizes") into a copy of a registry that holds log2
# winners for the unfused shapes (.gpu/llama.db by default), decode rows
# m in 1..32 timed as in a decode graph (timing: neighbour, as `python -m
# aitune tune` times decode) and a 2048-token prefill.
# The log2 buckets are left as they are: 6144 no longer replaces o_proj's
# 4096 x 4096 winner (both were n=2^12), and lookup answers each from its own.
#
#   bench/llama_fused_exact.sh [REGISTRY]     # writes $OUT/llama-exact.db
#
# Env: BUDGET (default 8m: the sweep stops there, keeping what it found; run
# again to resume), E2E=1 also runs bench/llama_e2e.py at batch 32 and the
# 2048 prefill (compile vs compile+patch) on the new registry. Prints a table
# last: which bucket answers each shape, and its time. Needs this tree's
# build/aitune and build/libaitune.so, built beforehand (the GPU machine need not build) (an older libaitune would answer 6144
# from the log2 bucket: it ranks the smaller lo first).
set -u
cd "$(dirname "$0")/.."
SRC=${1:-.gpu/llama.db}
OUT=${OUT:-/tmp/llama-fused-exact}
mkdir -p "$OUT"
[ -x build/aitune ] && [ -e build/libaitune.so ] || { echo "build first (make), here or where the GPU is not" >&2; exit 1; }
count() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }
DB=$OUT/llama-exact.db
rm -f "$DB"
# A copy, written whole (the source may be open in WAL mode), so SRC stays as it was.
python3 -c 'import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)' \
    "$SRC" "$DB" || exit 1
cat >"$OUT/fused.yaml" <<'YAML'
name: llama3-8b-fused-exact
arch: sm_90a
search: model
max_evals: 12
top_k: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    timing: neighbour
    shapes: {m: {range: [1, 32], align: [1]}, n: {values: [6144, 28672], exact: true}, k: {values: [4096], exact: true}}
  - op: gemm_nt
    dtypes: [bf16]
    shapes: {m: {values: [2048]}, n: {values: [6144, 28672], exact: true}, k: {values: [4096], exact: true}}
YAML
before=$(count "$DB" "select count(*) from winners where bucket like '%2^%'")
t0=$(date +%s)
build/aitune sweep "$OUT/fused.yaml" --db "$DB" --budget "${BUDGET:-8m}" >"$OUT/sweep.log" 2>&1
rc=$?
echo "sweep exit $rc in $(( $(date +%s) - t0 )) s (log: sweep.log)"
tail -6 "$OUT/sweep.log"
after=$(count "$DB" "select count(*) from winners where bucket like '%2^%' and bucket not like '%n=6144%' and bucket not like '%n=28672%'")
echo "log2 winners before $before, after $after (must be equal: nothing replaced)"
if [ "${E2E:-0}" = 1 ]; then
    export PYTHONPATH=python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
    timeout 300 python3 bench/llama_e2e.py --registry "$DB" --batches 32 --variants compile,compile+patch \
        --prefill 2048 --out "$OUT" >"$OUT/e2e.txt" 2>&1
    echo "e2e exit $?"; grep -v Warn "$OUT/e2e.txt" | tail -12
fi
echo
printf '%-18s %-8s %-30s %-16s %10s\n' shape level bucket template median_us
for s in 1,6144,4096 7,6144,4096 8,6144,4096 17,6144,4096 31,6144,4096 32,6144,4096 2048,6144,4096 \
         1,28672,4096 8,28672,4096 32,28672,4096 2048,28672,4096 32,4096,4096 2048,4096,4096 32,14336,4096; do
    build/aitune lookup gemm_nt --arch sm_90 --dtype bf16 --shape "$s" --db "$DB" --json 2>&1 | python3 -c '
import json, sys
s, t = sys.argv[1], sys.stdin.read()
try:
    c = json.loads(t)
    print("%-18s %-8s %-30s %-16s %10.2f" % (s, c["level"], c.get("bucket") or "-", c["template"], c.get("median_us") or 0))
except ValueError:
    print("%-18s %s" % (s, t.strip()[:100]))' "$s"
done
