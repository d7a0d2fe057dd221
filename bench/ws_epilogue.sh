#!/usr/bin/env bash
# The wgmma family's "tma_ws" epilogue (D's rows not 16-byte aligned: TMA
# stores into an aligned copy of D in the workspace, the producer's idle
# warps copy it to D) against "rows", in one call:
# 1. compute-sanitizer memcheck (tests/gpu/ws_sanitize.yaml) over the
#    small configs of bench/gemm/ws_small_space.lua, capped at 240 s;
# 2. 4001^3 nn and nt (bench/gemm/overlap.yaml over
#    bench/gemm/ws_4001_space.lua) and 4096 x 4097 x 4096 nn
#    (bench/gemm/nn4097.yaml over bench/gemm/ws_4097_space.lua), every
#    config, cuBLAS in the same call.
#   bench/ws_epilogue.sh OUTDIR
set -u
keep=${1:?usage: bench/ws_epilogue.sh OUTDIR}
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-ws.XXXX)
python3 bench/narrow.py "$w/small" wgmma bench/gemm/ws_small_space.lua
AITUNE_HOME=$w/small SANITIZE_SPEC=tests/gpu/ws_sanitize.yaml timeout 240 tests/gpu/sanitize.sh "$w/sanitize" |
    tail -2 | tee "$keep/sanitize-verdict.txt"
grep -h "failed candidate\|wrong\|Invalid\|ERROR" "$w/sanitize"/* | head -20 >> "$keep/sanitize-verdict.txt"
bench/variants.sh "$keep/4001" wgmma bench/gemm/overlap.yaml bench/gemm/ws_4001_space.lua "base="
bench/variants.sh "$keep/4097" wgmma bench/gemm/nn4097.yaml bench/gemm/ws_4097_space.lua "base="
