#!/usr/bin/env bash
# Decode probe (issue 10): bench/gemm/decode_gap.cu, the mma GEMV's access
# pattern against contiguous row streams, back to back over rotating weight
# copies with programmatic dependent launch (4096^2 bf16). Needs nvcc;
# writes OUTDIR/decode-gap.txt.
#   bench/decode_gap.sh OUTDIR
set -eu
out=${1:-/tmp/aitune-decode-gap}
mkdir -p "$out"
nvcc -O3 -arch=sm_90a -std=c++17 -diag-suppress 128 -o "$out/decode_gap" bench/gemm/decode_gap.cu
"$out/decode_gap" | tee "$out/decode-gap.txt"
