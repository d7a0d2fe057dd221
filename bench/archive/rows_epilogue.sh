#!/usr/bin/env bash
# The wgmma family's "rows" epilogues (D's rows not 16-byte aligned, stored
# a 128-byte line at a time from shared memory) at the unaligned shapes of
# issue 10, in one call:
# 1. compute-sanitizer memcheck at odd n (tests/gpu/rows_sanitize.yaml) over
#    the small configs of SMALL_SPACE, capped at 200 s;
# 2. 4001^3 nn and nt (bench/gemm/overlap.yaml over
#    bench/archive/gemm/late_space.lua) and 4096 x 4097 x 4096 nn
#    (bench/gemm/nn4097.yaml), every config, cuBLAS in the same call.
# (At commit 2c378c9, bench/rows_async.sh ran it with the rows_async
# epilogue too, since removed: bench/archive/RESULTS-2026.md.)
# SPACE_4001 and SPACE_4097 replace the spaces of step 2.
#   bench/archive/rows_epilogue.sh OUTDIR SMALL_SPACE [SPACE_4001 SPACE_4097]
set -u
keep=${1:?usage: bench/archive/rows_epilogue.sh OUTDIR SMALL_SPACE}
small=${2:?usage: bench/archive/rows_epilogue.sh OUTDIR SMALL_SPACE}
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-rows.XXXX)
python3 bench/narrow.py "$w/small" wgmma "$small"
AITUNE_HOME=$w/small SANITIZE_SPEC=tests/gpu/rows_sanitize.yaml timeout 200 tests/gpu/sanitize.sh "$w/sanitize" |
    tail -2 | tee "$keep/sanitize-verdict.txt"
grep -h "failed candidate\|wrong\|Invalid\|ERROR" "$w/sanitize"/* | head -20 >> "$keep/sanitize-verdict.txt"
bench/variants.sh "$keep/4001" wgmma bench/gemm/overlap.yaml "${3:-bench/archive/gemm/late_space.lua}" "base="
bench/variants.sh "$keep/4097" wgmma bench/gemm/nn4097.yaml "${4:-bench/archive/gemm/nn4097_space.lua}" "base="
