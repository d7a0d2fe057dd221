#!/usr/bin/env bash
# tma_ws (bench/ws_epilogue.sh): where in the next tile's mainloop a consumer waits for its TMA stores and marks the tile ready.
#   bench/archive/ws_signal.sh OUTDIR  (4001^3 nn and nt, cuBLAS in the same call)
set -u
keep=${1:?usage: bench/archive/ws_signal.sh OUTDIR}
mid='s/kb == min(k0 + 2, k1 - 1)/kb == k0 + (k1 - k0) \/ 2/'
late='s/kb == min(k0 + 2, k1 - 1)/kb == k1 - 1/'
bench/variants.sh "$keep/4001" wgmma bench/gemm/overlap.yaml bench/gemm/ws_4001_space.lua "mid=$mid" "late=$late"
