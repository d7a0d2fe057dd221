#!/usr/bin/env bash
# gemv nt's seg and lean paths (templates/gemm_nt/gemv.lua: seg 2, a warp load
# of 4 rows x 128 bytes instead of 8 rows x 64; lean, whole steps without
# tests and the rest on the FMA pipe, so that minb 4 holds 64 registers)
# on the H100, in one call: compute-sanitizer over
# bench/gemm/gemv_seg_sanitize.yaml with lean 1 only, then SPEC (default
# bench/gemm/gemv_seg.yaml) swept by bench/gemm.sh --stream (cuBLAS timed
# the same way) with gemv's nt space narrowed to SPACE (default
# bench/archive/gemm/gemv_seg_space.lua). Writes OUTDIR/sanitize-result.txt,
# gemm-table.txt, gemm-stats.txt, gemm-measurements.tsv.
#   bench/archive/gemv_seg.sh OUTDIR [SPEC] [SPACE]
set -u
out=${1:-/tmp/aitune-gemv-seg}
spec=${2:-bench/gemm/gemv_seg.yaml}
space=${3:-bench/archive/gemm/gemv_seg_space.lua}
mkdir -p "$out"
tmp=$(mktemp -d /tmp/aitune-gemv-seg.XXXX)
. bench/archive/narrowed.sh
[ -n "${SKIP_SANITIZE:-}" ] || python3 bench/narrow.py "$tmp/san" gemv bench/gemm/gemv_seg_sanitize_space.lua
sanitize_into "$out" bench/gemm/gemv_seg_sanitize.yaml "$tmp/san"
python3 bench/narrow.py "$tmp/home" gemv "$space"
sweep_into "$out" "$spec" "$tmp/home"
