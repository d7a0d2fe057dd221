#!/usr/bin/env bash
# What 4001^3 nn pays for its unaligned rows: the wgmma winners' region
# (bench/archive/gemm/cost_space.lua: staging none / up front / overlapped, each
# epilogue) at 4000^3 (aligned: same tile grid, no staging, TMA stores
# allowed) and at 4001^3, cuBLAS in the same call; first the overlapped
# configs of small tiles under compute-sanitizer (as bench/overlap.sh).
#   bench/archive/staging_cost.sh OUTDIR
set -u
keep=${1:?usage: bench/archive/staging_cost.sh OUTDIR}
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-cost.XXXX)
python3 bench/narrow.py "$w/small" wgmma bench/gemm/overlap_small_space.lua
AITUNE_HOME=$w/small SANITIZE_SPEC=tests/gpu/overlap_sanitize.yaml timeout 200 tests/gpu/sanitize.sh "$w/sanitize" |
    tail -2 | tee "$keep/cost-summary.txt"
python3 bench/narrow.py "$w/space" wgmma bench/archive/gemm/cost_space.lua
for s in 4000 4001; do
    AITUNE_HOME=$w/space bench/gemm.sh "$w/out-$s" "$(ls bench/gemm/cost_$s.yaml bench/archive/gemm/cost_$s.yaml 2>/dev/null | head -n 1)" > "$w/gemm-$s.txt" 2>&1
    cp "$w/out-$s/gemm-measurements.tsv" "$keep/cost-$s.tsv"
    grep -h "bucket.*best\|^gemm_\|failed" "$w/out-$s/gemm-stats.txt" "$w/out-$s/gemm-table.txt" | sed "s/^/$s: /" >> "$keep/cost-summary.txt"
done
cat "$keep/cost-summary.txt"
