#!/usr/bin/env bash
# Where 4001^3 nn's time goes, in one call: at 4000^3 (aligned: the same
# tile grid) the wgmma family with its alignment constraints lifted (a
# template variant, bench/variants.sh), so each of staging up front (ab),
# overlapped (ab_overlap) and the "rows" epilogue can be timed where none
# is needed, against TMA loads and TMA stores; then 4096 x 4097 x 4096 nn
# over the fifth session's winner region (bench/gemm/nn4097.yaml), as a
# check that the staging code has not slowed. cuBLAS in the same call.
#   bench/archive/unaligned_cost.sh OUTDIR
set -u
keep=${1:?usage: bench/archive/unaligned_cost.sh OUTDIR}
free='s/^  if base ~= need then$/  if base ~= need and need ~= "none" then/;s/^  if shape.n % 8 == 0 and p.epilogue == "rows" then return false, .*$//'
bench/variants.sh "$keep/aligned" wgmma bench/archive/gemm/cost_4000.yaml bench/archive/gemm/cost_space.lua "free=$free"
bench/variants.sh "$keep/nn4097" wgmma bench/gemm/nn4097.yaml bench/archive/gemm/nn4097_space.lua "base="
