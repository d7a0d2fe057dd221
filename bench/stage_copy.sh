#!/usr/bin/env bash
# The wgmma family's staging copy (templates/lib/wgmma.lua, `stage`) alone,
# against cudaMemcpy2DAsync, at the shapes of bench/archive/gemm/unaligned.yaml, and a
# plain grid-stride copy of the same bytes (bench/gemm/stage_flat.cu).
#   [UNROLLS="8 16"] bench/stage_copy.sh build   (here: lua5.4 and nvcc; writes .probe/stage/)
#   bench/stage_copy.sh run     (on the GPU, .probe carried)
set -euo pipefail
cd "$(dirname "$0")/.."
P=.probe/stage
case "${1:-}" in
build)
    rm -rf $P && mkdir -p $P
    # layout, shape, stage, consumers (threads), variant name
    while read -r layout shape stage cons name; do
        lua5.4 bench/gemm/dump.lua . "$layout" bf16 "k_$name" shape="$shape" stage="$stage" consumers="$cons" \
            schedule=coop > $P/$name.cuh 2> $P/$name.facts
        # UNROLLS="8 16": the same copy with other chunks in flight per lane.
        for u in ${UNROLLS:-template}; do
            v=$name
            if [ "$u" != template ]; then
                v=${name}_u$u
                sed "s/^#define STAGE_UNROLL .*/#define STAGE_UNROLL $u/" $P/$name.cuh > $P/$v.cuh
            fi
            nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DSTAGED_SRC="\"$v.cuh\"" -DVARIANT="\"$v\"" \
                -I$P bench/gemm/stage_copy.cu -o $P/$v
            echo "$v ${shape//x/ }" >> $P/list
        done
    done <<'LIST'
nt 4001x4001x4001 ab 2 nt4001
nn 4001x4001x4001 ab 2 nn4001
nn 4096x4097x4096 b 2 nn4097
LIST
    # A plain grid-stride copy of 4001^2's A and B with the same funnel shift.
    nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DSTAGED_SRC="\"nn4001.cuh\"" -I$P \
        bench/gemm/stage_flat.cu -o $P/stage_flat
    ;;
run)
    while read -r name m n k; do
        for g in 132; do $P/$name "$m" "$n" "$k" "$g"; done
    done < $P/list
    $P/stage_flat
    ;;
*) echo "usage: bench/stage_copy.sh build|run" >&2; exit 2 ;;
esac
