#!/usr/bin/env bash
# B's k rows copied behind too (wgmma stage abk_overlap, nn) against A's
# alone (ab_overlap), at 4001^3 nn, in one call:
# 1. compute-sanitizer memcheck over overlapped configs of small tiles
#    (tests/gpu/overlap_sanitize.yaml, bench/gemm/overlap_small_space.lua),
#    capped at 200 s;
# 2. bench/variants.sh over bench/gemm/overlap_b_space.lua at 4001^3 nn
#    (bench/gemm/cost_4001.yaml), one variant per B_PRE8 (how many eighths
#    of B's k tiles are staged up front: the copy warps' head start),
#    cuBLAS in the same call.
#   bench/overlap_b.sh OUTDIR [B_PRE8 ...]
set -u
keep=${1:?usage: bench/overlap_b.sh OUTDIR [B_PRE8 ...]}
shift
[ $# -gt 0 ] || set -- 1 4
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-overlap-b.XXXX)
python3 bench/narrow.py "$w/small" wgmma bench/gemm/overlap_small_space.lua
AITUNE_HOME=$w/small SANITIZE_SPEC=tests/gpu/overlap_sanitize.yaml timeout 200 tests/gpu/sanitize.sh "$w/sanitize" |
    tail -2 | tee "$keep/sanitize-verdict.txt"
grep -h "failed candidate\|wrong\|Invalid\|ERROR" "$w/sanitize"/* | head -20 >> "$keep/sanitize-verdict.txt"
vs=("base=")
for e in "$@"; do vs+=("pre$e=s/^local B_PRE8 = [0-9]*/local B_PRE8 = $e/"); done
bench/variants.sh "$keep" wgmma bench/gemm/cost_4001.yaml bench/gemm/overlap_b_space.lua "${vs[@]}"
