#!/usr/bin/env bash
# "tma_ws" winners through the runtime, then the unaligned shapes' search:
# 1. tests/gpu/gemm_launch.sh with the wgmma space narrowed to tma_ws
#    (bench/archive/gemm/ws_launch_space.lua: 128x64 tiles, so that a CTA has more
#    than one tile at 2048 x 1001 and its copy warps run): aitune_launch,
#    the emitted .cu and the fp64 reference agree;
# 2. bench/gemm.sh over bench/archive/gemm/unaligned.yaml (model search, whole
#    space), cuBLAS in the same call.
#   bench/archive/ws_launch.sh OUTDIR
set -u
keep=${1:?usage: bench/archive/ws_launch.sh OUTDIR}
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-wsl.XXXX)
python3 bench/narrow.py "$w/home" wgmma bench/archive/gemm/ws_launch_space.lua
AITUNE_HOME=$w/home timeout 280 tests/gpu/gemm_launch.sh "$w/launch" > "$keep/gemm-launch.txt" 2>&1
build/aitune show --db "$w/launch/gemm-launch.db" 2>&1 | grep -c tma_ws | sed "s/^/winners naming tma_ws: /" >> "$keep/gemm-launch.txt"
tail -25 "$keep/gemm-launch.txt"
timeout 300 bench/gemm.sh "$keep/unaligned" bench/archive/gemm/unaligned.yaml > "$keep/unaligned.txt" 2>&1
tail -8 "$keep/unaligned/gemm-table.txt"
