#!/usr/bin/env bash
# The wgmma family's rows_async epilogue (the producer warpgroup's spare
# warps store the consumers' pieces of D while the consumers go on to their
# next tile) against rows (the consumers store them), in one call:
# 1. compute-sanitizer memcheck at odd n (tests/gpu/rows_sanitize.yaml) over
#    small rows_async configs (bench/gemm/async_small_space.lua), capped at
#    200 s;
# 2. 4001^3 nn and nt (bench/gemm/overlap.yaml over
#    bench/gemm/async_space.lua) and 4096 x 4097 x 4096 nn
#    (bench/gemm/nn4097.yaml), every config, cuBLAS in the same call.
#   bench/rows_async.sh OUTDIR
set -u
keep=${1:?usage: bench/rows_async.sh OUTDIR}
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-rows-async.XXXX)
python3 bench/narrow.py "$w/small" wgmma bench/gemm/async_small_space.lua
AITUNE_HOME=$w/small SANITIZE_SPEC=tests/gpu/rows_sanitize.yaml timeout 200 tests/gpu/sanitize.sh "$w/sanitize" |
    tail -2 | tee "$keep/sanitize-verdict.txt"
grep -h "failed candidate\|wrong\|Invalid\|ERROR" "$w/sanitize"/* | head -20 >> "$keep/sanitize-verdict.txt"
bench/variants.sh "$keep/4001" wgmma bench/gemm/overlap.yaml bench/gemm/async_space.lua "base="
bench/variants.sh "$keep/4097" wgmma bench/gemm/nn4097.yaml bench/gemm/nn4097_space.lua "base="
