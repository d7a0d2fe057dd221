#!/usr/bin/env bash
# Cache hints on the wgmma family's staging copies at 4001^3 nn and nt
# (bench/gemm/overlap.yaml over bench/archive/gemm/late_space.lua), cuBLAS in the
# same call (bench/variants.sh):
#   late: the overlapped copy's loads and stores streaming (ld/st .cs:
#         evict first), so they do not push the product's B out of L2;
#   src:  that, and the up-front copy's loads too (its stores stay normal:
#         the first wave reads them next).
#   bench/archive/cache_hints.sh OUTDIR
set -u
keep=${1:?usage: bench/archive/cache_hints.sh OUTDIR}
late='s/lo\[u\] = __ldg(al + q);/lo[u] = __ldcs(al + q);/;s/hi\[u\] = __ldg(al + q + 1);/hi[u] = __ldcs(al + q + 1);/;s/to\[q0 + 32 \* u\] = funnel(lo\[u\], hi\[u\], sh);/__stcs(\&to[q0 + 32 * u], funnel(lo[u], hi[u], sh));/'
src='s/lo\[u\] = __ldg((const uint4\*)p);/lo[u] = __ldcs((const uint4*)p);/;s/if (sh) hi\[u\] = __ldg((const uint4\*)p + 1);/if (sh) hi[u] = __ldcs((const uint4*)p + 1);/'
bench/variants.sh "$keep" wgmma bench/gemm/overlap.yaml bench/archive/gemm/late_space.lua "base=" "late=$late" "src=$late;$src"
