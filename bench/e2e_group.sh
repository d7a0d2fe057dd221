#!/usr/bin/env bash
# Grouped projections on the GPU (issue 32), one call, about 8 minutes on an H100:
#   1. the fused shapes tuned into a copy of the registry (REG, default
#      .gpu/llama.db, tuned with the projections separate): `python -m aitune tune
#      --group only` writes q/k/v (6144 x 4096) and gate/up (28672 x 4096) at m in
#      1..32, timed as a decode loop runs, n and k exact (docs/SPEC.md "Exact
#      sizes": 6144 gets its own buckets beside o_proj's log2 4096 x 4096); the
#      sweep stops at TUNE_BUDGET (150s);
#   2. bench/llama_e2e.py --quick over that registry: eager, patch (grouped, the
#      default), compile, compile+patch (grouped) and compile+patch-nogroup
#      (patch(group=False): the separate GEMMs, same run, same card), ending with
#      issue 32's bars table.
# Logs and the registry go to $OUT (e2e.txt, llama_e2e.jsonl, sweep.txt, group.db).
#   bench/e2e_group.sh                       # after make, on the GPU machine
#   REG=other.db TUNE_BUDGET=100s bench/e2e_group.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/e2e_group}
REG=${REG:-.gpu/llama.db}
BUDGET=${TUNE_BUDGET:-150s}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
if [ ! -f "$REG" ]; then
    echo "e2e_group: no registry at $REG (REG=...: one tuned for the model's separate shapes)" >&2
    exit 2
fi
DB=$OUT/group.db
# A copy, written whole (the source may be open in WAL mode), so REG stays as it was.
python3 -c 'import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); d = sqlite3.connect(sys.argv[2]); s.backup(d)' \
    "$REG" "$DB" || exit 1
cat > "$OUT/llama3-8b.json" <<'EOF'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "torch_dtype": "bfloat16",
 "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
 "head_dim": 128, "num_hidden_layers": 32, "vocab_size": 128256, "rms_norm_eps": 1e-05}
EOF
t0=$(date +%s)
python3 -m aitune tune "$OUT/llama3-8b.json" --batch 1:32 --prompt 1 --group only --max-evals 12 \
    --budget "$BUDGET" --db "$DB" --spec-out "$OUT/group.yaml" > "$OUT/sweep.txt" 2>&1
echo "tune exit $? in $(( $(date +%s) - t0 )) s"
grep -E "^(sweep|hold):" "$OUT/sweep.txt" | tail -4
build/aitune show --db "$DB" 2>&1 | grep -E "n=2\^1[2-4]|6144|28672" | cut -c1-150 | head -16
t0=$(date +%s)
timeout 380 python3 bench/llama_e2e.py --registry "$DB" --quick --out "$OUT" \
    --variants eager,patch,compile,compile+patch,compile+patch-nogroup > "$OUT/e2e.txt" 2>&1
echo "e2e exit $? in $(( $(date +%s) - t0 )) s"
grep -v Warn "$OUT/e2e.txt" | grep -E "what=decode" | sed 's/^ *//' | cut -c1-200
grep -v Warn "$OUT/e2e.txt" | sed -n '/^llama_e2e on/,$p'
