#!/usr/bin/env bash
# How many loads the overlapped staging's copy warps keep in flight
# (wgmma's LATE_UNROLL chunks of 512 bytes a warp) against the registers it
# costs (the producer's setmaxnreg, the consumers' what is left: producer +
# 2 x consumers <= 3 x 168, or setmaxnreg.inc waits for ever), at 4001^3 nn
# and nt (bench/gemm/overlap.yaml) over bench/archive/gemm/late_space.lua, with
# cuBLAS in the same call (bench/variants.sh).
#   bench/archive/late_unroll.sh OUTDIR [UNROLL:PRODUCER:CONSUMER ...]
set -u
keep=${1:?usage: bench/archive/late_unroll.sh OUTDIR [UNROLL:PRODUCER:CONSUMER ...]}
shift
[ $# -gt 0 ] || set -- 4:72:216 8:88:208 16:152:176
vs=("base=")
for v in "$@"; do
    IFS=: read -r u p c <<< "$v"
    vs+=("u$u=s/^#define LATE_UNROLL [0-9]*/#define LATE_UNROLL $u/;
s/ overlapped(p) and [0-9]* or p.producer_regs/ overlapped(p) and $p or p.producer_regs/;
s/if overlapped(p) then return p.consumers == 2 and [0-9]* or 240 end/if overlapped(p) then return p.consumers == 2 and $c or 240 end/")
done
bench/variants.sh "$keep" wgmma bench/gemm/overlap.yaml bench/archive/gemm/late_space.lua "${vs[@]}"
