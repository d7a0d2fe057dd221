#!/usr/bin/env bash
# Swap-AB decode GEMM (templates/gemm_nt/swapab.lua) on the H100, in one call:
# compute-sanitizer over tests/gpu/swapab_sanitize.yaml, then SPEC (default
# bench/archive/gemm/swapab_m16.yaml) swept by bench/gemm.sh --stream (cuBLAS timed
# the same way) with swapab's space narrowed to SPACE (default
# bench/archive/gemm/swapab_space.lua) and gemv's nt space to the configs that won
# the decode buckets (bench/archive/gemm/gemv_decode_space.lua, seventh session), so
# both families meet in one call.
# Writes OUTDIR/sanitize-result.txt, gemm-table.txt, gemm-stats.txt,
# gemm-measurements.tsv.
#   bench/archive/swapab.sh OUTDIR [SPEC] [SPACE]
set -u
out=${1:-/tmp/aitune-swapab}
spec=${2:-bench/archive/gemm/swapab_m16.yaml}
space=${3:-bench/archive/gemm/swapab_space.lua}
mkdir -p "$out"
home=$(mktemp -d /tmp/aitune-swapab.XXXX)/home
python3 bench/narrow.py "$home" swapab "$space" gemv bench/archive/gemm/gemv_decode_space.lua
. bench/archive/narrowed.sh
sanitize_into "$out" tests/gpu/swapab_sanitize.yaml
sweep_into "$out" "$spec" "$home"
