#!/usr/bin/env bash
# Decode probe (issue 10): bench/archive/gemm/decode_gap.cu, the mma GEMV's access
# pattern against contiguous row streams, back to back over rotating weight
# copies with programmatic dependent launch (4096^2 bf16). Needs nvcc;
# writes OUTDIR/decode-gap.txt.
#   bench/archive/decode_gap.sh OUTDIR [tr|lds|quad]
# tr: instead, the mma GEMV with contiguous loads scattered into ldmatrix
# tiles (m = 16 and 1) against the slab GEMV; lds: the same fed by cp.async
# into a per-warp ring, split-K over a cluster; quad: the slab GEMV with
# each warp load over 4 rows x 128 bytes (prmt + movmatrix into the mma
# fragments) against the template's slab winner.
set -eu
out=${1:-/tmp/aitune-decode-gap}
mkdir -p "$out"
nvcc -O3 -arch=sm_90a -std=c++17 -diag-suppress 128 -o "$out/decode_gap" bench/archive/gemm/decode_gap.cu
"$out/decode_gap" ${2:-} | tee "$out/decode-gap${2:+-$2}.txt"
