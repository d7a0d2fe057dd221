#!/usr/bin/env bash
# Decode with programmatic dependent launch (issue 10): bench/archive/gemm/decode_pdl.cu
# (a 16-byte read and slab GEMVs, back to back over rotating weight copies,
# plain / PDL / PDL with an L2 prefetch before the wait), then cuBLAS
# (F.linear) back to back over rotating copies in a CUDA graph, in the same
# call. Needs nvcc and PyTorch; writes OUTDIR/decode-pdl.txt.
#   bench/archive/decode_pdl.sh OUTDIR [slab]
# slab: the per-block slab reads (plain, PDL, PDL + bulk prefetch to L2)
# and eight slab GEMV layouts in all three modes instead.
set -eu
out=${1:-/tmp/aitune-decode}
mkdir -p "$out"
nvcc -O3 -arch=sm_90a -std=c++17 -o "$out/decode_pdl" bench/archive/gemm/decode_pdl.cu
"$out/decode_pdl" ${2:-} | tee "$out/decode-pdl.txt"
python3 bench/archive/gemm/decode_rot_cublas.py | tee -a "$out/decode-pdl.txt"
