#!/usr/bin/env bash
# What the decode bars (issue 10) can reach on this GPU: a pure 16-byte read
# of 32 MB and 128 MB (the weights of 4096^2 and 8192^2 bf16) and a family of
# tensor-core GEMV layouts, each timed two ways: the worker's method (L2
# flushed, one launch between events) and back-to-back launches over
# rotating copies (as in a decode loop); then cuBLAS (F.linear) back to back
# over rotating copies. Needs nvcc and PyTorch; writes OUTDIR/decode-ceiling.txt.
#   bench/archive/decode_ceiling.sh OUTDIR
set -eu
out=${1:-/tmp/aitune-decode}
mkdir -p "$out"
nvcc -O3 -arch=sm_90a -std=c++17 -o "$out/decode_ceiling" bench/archive/gemm/decode_ceiling.cu
"$out/decode_ceiling" | tee "$out/decode-ceiling.txt"
python3 bench/archive/gemm/decode_rot_cublas.py | tee -a "$out/decode-ceiling.txt"
