#!/usr/bin/env bash
# Overlapped staging (wgmma `stage` a_overlap / ab_overlap) on the GPU, in one
# call, with the prebuilt build/:
# 1. compute-sanitizer memcheck over overlapped configs of small tiles at
#    shapes whose first wave leaves rows of A to copy
#    (tests/gpu/overlap_sanitize.yaml, space bench/gemm/overlap_small_space.lua);
# 2. bench/gemm.sh over bench/gemm/overlap.yaml (4001^3 nn and nt, every
#    config of bench/gemm/overlap_space.lua: staged up front and overlapped),
#    cuBLAS in the same call, and each stage value's best per bucket.
# The narrowed spaces are copies of templates/ made by bench/narrow.py.
#   bench/overlap.sh OUTDIR [--no-sanitize]
set -u
keep=${1:?usage: bench/overlap.sh OUTDIR [--no-sanitize]}
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-overlap.XXXX)
if [ "${2:-}" != "--no-sanitize" ]; then
    python3 bench/narrow.py "$w/small" wgmma bench/gemm/overlap_small_space.lua
    t0=$(date +%s)
    # At most 4 minutes, so the measurement below fits one device call.
    AITUNE_HOME=$w/small SANITIZE_SPEC=tests/gpu/overlap_sanitize.yaml timeout 240 tests/gpu/sanitize.sh "$keep/sanitize" |
        tee "$keep/sanitize-verdict.txt"
    echo "sanitize: $(( $(date +%s) - t0 )) s"
fi
python3 bench/narrow.py "$w/space" wgmma bench/gemm/overlap_space.lua
AITUNE_HOME=$w/space bench/gemm.sh "$keep" bench/gemm/overlap.yaml
grep "stage" "$keep/gemm-stats.txt"
