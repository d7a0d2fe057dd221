#!/usr/bin/env bash
# Decode probe (issue 10): bench/archive/gemm/decode_seg.cu, the mma GEMV with
# R rows x 512/R contiguous bytes per warp load (only the columns of one
# segment per mma), against gemv's 8 rows x 64 bytes through the same code
# and a plain read; 16 (and 3) x 4096^2 bf16, back to back over rotating
# weight copies with programmatic dependent launch, A fixed and rotated.
# Then each FILE (a gemv nt kernel printed by the gen step) timed the same
# way. Needs nvcc; writes OUTDIR/decode-seg.txt.
#   bench/archive/decode_seg.sh OUTDIR [FILE.cu...]
#   bench/archive/decode_seg.sh gen FILE.cu key=value...   (here: needs lua5.4, or
#     LUA=an interpreter; prints gemv nt's kernel for that config, the rest
#     of its params from the template's default at 16 x 4096^2)
set -eu
if [ "${1:-}" = gen ]; then
    f=$2; shift 2
    declare -A kv=([warps]=8 [kw]=1 [seg]=1 [cpw]=2)
    for a in "$@"; do kv[${a%%=*}]=${a#*=}; done
    cols=$(( kv[warps] / kv[kw] * (8 / kv[seg]) * kv[cpw] ))
    { echo "// GEN_COLS=$cols GEN_BLOCK=$(( 32 * kv[warps] )) $*"
      FAM=gemv ${LUA:-lua5.4} bench/gemm/dump.lua . nt bf16 gen shape=16x4096x4096 "$@"; } > "$f"
    exit 0
fi
out=${1:-/tmp/aitune-decode-seg}
shift || true
mkdir -p "$out"
nvcc -O3 -arch=sm_90a -std=c++17 -diag-suppress 128 -o "$out/decode_seg" bench/archive/gemm/decode_seg.cu
"$out/decode_seg" | tee "$out/decode-seg.txt"
for f in "$@"; do
    read -r _ c b _ < <(head -1 "$f" | tr '=' ' ' | awk '{ print $1, $3, $5, $6 }')
    nvcc -O3 -arch=sm_90a -std=c++17 -diag-suppress 128,177,550 -DGEN="\"$PWD/$f\"" -DGEN_COLS="$c" -DGEN_BLOCK="$b" \
        -o "$out/decode_gen" bench/archive/gemm/decode_seg.cu
    "$out/decode_gen" | tee -a "$out/decode-seg.txt"
done
rm -f "$out/decode_seg" "$out/decode_gen"
