#!/usr/bin/env bash
# What holds the consumers in the unaligned epilogues ("rows", "bulk") at
# 4001^3, in one call (bench/variants.sh over bench/gemm/epi_probe_space.lua,
# both layouts, cuBLAS in the same call):
#   base     the template as it stands;
#   norot    "bulk" without the rotation of a row's chunks: one bulk copy
#            per row instead of up to two, the buffer's stores in conflict;
#   relaxed  the consumers' mbarrier arrives relaxed instead of release
#            (a probe only: do their own global stores hold them there?).
#   bench/epilogue_probe.sh OUTDIR
set -u
keep=${1:?usage: bench/epilogue_probe.sh OUTDIR}
norot='s/((b >> 4) + (unsigned)rr) \& 7u/(b >> 4) \& 7u/;s/wrap = 8 - (rr \& 7);/wrap = 8;/;s/((unsigned)(a + rr) \& 7u) \* 16u/((unsigned)a \& 7u) * 16u/'
relaxed='s/"mbarrier.arrive.shared::cta.b64 _, \[%0\];"/"mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [%0];"/'
bench/variants.sh "$keep" wgmma bench/gemm/overlap.yaml bench/gemm/epi_probe_space.lua "base=" "norot=$norot" "relaxed=$relaxed"
