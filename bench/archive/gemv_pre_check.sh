#!/usr/bin/env bash
# gemv nt's l2pre 2/4 and apf (templates/gemm_nt/gemv.lua) checked on the GPU,
# in one call: compute-sanitizer over bench/gemm/gemv_seg_sanitize.yaml with
# the lean space of bench/gemm/gemv_seg_sanitize_space.lua (apf 0 and 1,
# l2pre 0-4, minb 0-4), then tests/gpu/gemm_launch.sh with gemv narrowed to
# bench/archive/gemm/gemv_best_space.lua (the configs measured fastest at 16 x
# 4096^2), so its decode winner is launched through aitune_launch and the
# emitted file and compared with the fp64 reference.
# Writes OUTDIR/san/sanitize-result.txt and OUTDIR/launch/gemm-launch.txt.
#   bench/archive/gemv_pre_check.sh OUTDIR
set -u
out=${1:-/tmp/aitune-gemv-pre}
tmp=$(mktemp -d /tmp/aitune-gemv-pre.XXXX)
. bench/archive/narrowed.sh
mkdir -p "$out/san" "$out/launch"
t0=$(date +%s)
python3 bench/narrow.py "$tmp/san" gemv bench/gemm/gemv_seg_sanitize_space.lua
sanitize_into "$out/san" bench/gemm/gemv_seg_sanitize.yaml "$tmp/san"
echo "sanitize done after $(( $(date +%s) - t0 )) s"
python3 bench/narrow.py "$tmp/best" gemv bench/archive/gemm/gemv_best_space.lua
AITUNE_HOME=$tmp/best tests/gpu/gemm_launch.sh "$out/launch" > "$out/launch/gemm-launch.txt" 2>&1
echo "gemm_launch exit $? after $(( $(date +%s) - t0 )) s: $(grep -c '^PASS' "$out/launch/gemm-launch.txt") PASS"
grep "^FAIL\|^INFO\|16x4096x4096\|16x1000x1001" "$out/launch/gemm-launch.txt" | cut -c1-400
rm -rf "$tmp" "$out"/launch/*.db*
