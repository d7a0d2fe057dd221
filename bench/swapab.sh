#!/usr/bin/env bash
# Swap-AB decode GEMM (templates/lib/swapab.lua) on the H100, in one call:
# compute-sanitizer over tests/gpu/swapab_sanitize.yaml, then SPEC (default
# bench/gemm/swapab_m16.yaml) swept by bench/gemm.sh --stream (cuBLAS timed
# the same way) with swapab's space narrowed to SPACE (default
# bench/gemm/swapab_space.lua) and gemv's nt space to the configs that won
# the decode buckets (bench/gemm/gemv_decode_space.lua, seventh session), so
# both families meet in one call.
# Writes OUTDIR/sanitize-result.txt, gemm-table.txt, gemm-stats.txt,
# gemm-measurements.tsv.
#   bench/swapab.sh OUTDIR [SPEC] [SPACE]
set -u
out=${1:-/tmp/aitune-swapab}
spec=${2:-bench/gemm/swapab_m16.yaml}
space=${3:-bench/gemm/swapab_space.lua}
mkdir -p "$out"
home=$(mktemp -d /tmp/aitune-swapab.XXXX)/home
python3 bench/narrow.py "$home" swapab "$space" gemv bench/gemm/gemv_decode_space.lua
if [ -z "${SKIP_SANITIZE:-}" ]; then
    SANITIZE_SPEC=tests/gpu/swapab_sanitize.yaml tests/gpu/sanitize.sh "$out/sanitize" > /dev/null 2>&1
    cp "$out/sanitize/sanitize-result.txt" "$out/" 2>/dev/null
    grep -h "ERROR SUMMARY\|PASS\|FAIL\|bad:" "$out/sanitize/sanitize.txt" "$out/sanitize-result.txt" | tail -8
    rm -rf "$out/sanitize"
fi
AITUNE_HOME=$home bench/gemm.sh "$out" "$spec" --stream > "$out/gemm-run.txt" 2>&1
rm -f "$out/gemm-winners.json" "$out/gemm-show.txt" "$out/gemm-sweep.txt"
grep -h "template\|kw\|csplit\|status\|failed" "$out/gemm-stats.txt"
cat "$out/gemm-table.txt"
